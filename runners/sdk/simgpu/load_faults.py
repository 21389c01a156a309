"""Simulated faults of the GPU under sustained load, named once for the simulator.

Why a leaf module: the fault parser (``simgpu/spec``) must accept these names and the
simulated sources (``simgpu/compute``, ``simgpu/nvml``, ``simgpu/amdsmi``) must act on
them, and those import the parser through the shared state; a leaf all can import keeps
one spelling and no cycle. Every figure is a function of how long the faulty device has
been under load on the *virtual* clock, so a soak of minutes costs no wall time and two
runs of one profile read the same numbers.

- ``sdc``: silent data corruption on the faulty device: every third reference check of a
  GEMM returns finite numbers that disagree with the reference. A burst test that checks
  once misses it; a sustained test that checks repeatedly catches it.
- ``thermal-throttle``: the faulty device's cooling cannot hold sustained load (a failed
  fan, a clogged heatsink, a dried-out thermal interface): after
  :data:`THERMAL_ONSET_S` of continuous load it runs hot and clocks itself down, saying
  so in its thermal clock-event reasons. Before that it looks healthy, so a burst clock
  test misses it and a soak sees it.
- ``power-brake``: a power-delivery transient (a VRM or PSU fault, a rack power brake):
  under load the faulty device's clocks are braked hard for :data:`POWER_BRAKE_HOLD_S`
  every :data:`POWER_BRAKE_PERIOD_S`, with the power-brake reason set. The mean clock
  hardly moves; the throttle events and the minimum clock show it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

SDC_FAULT: Final = "sdc"
#: Every n-th reference check on the faulty device is corrupted.
SDC_EVERY_NTH_CHECK: Final = 3
#: Relative error of a corrupted result (far beyond any precision's tolerance).
SDC_RELATIVE_ERROR: Final = 0.5

THERMAL_THROTTLE_FAULT: Final = "thermal-throttle"
#: Seconds of continuous load before the faulty device's cooling gives out.
THERMAL_ONSET_S: Final = 120.0
#: The share of its rated boost clock a thermally throttled device holds.
THERMAL_SM_SCALE: Final = 0.72
#: Its temperature once throttling (at the part's slowdown threshold).
THERMAL_TEMP_C: Final = 92.0

POWER_BRAKE_FAULT: Final = "power-brake"
#: A brake engages every this many seconds of load ...
POWER_BRAKE_PERIOD_S: Final = 20.0
#: ... and holds for this long (starting this long into each period).
POWER_BRAKE_HOLD_S: Final = 2.0
POWER_BRAKE_OFFSET_S: Final = 5.0
#: The share of its rated boost clock a braked device holds.
POWER_BRAKE_SM_SCALE: Final = 0.4

#: NVML clock-event reason bits the faults set (``nvmlClocksEventReason*``).
SW_THERMAL_BIT: Final = 0x20
HW_THERMAL_BIT: Final = 0x40
HW_SLOWDOWN_BIT: Final = 0x8
HW_POWER_BRAKE_BIT: Final = 0x80

LOAD_FAULTS: Final[frozenset[str]] = frozenset(
    {SDC_FAULT, THERMAL_THROTTLE_FAULT, POWER_BRAKE_FAULT}
)


@dataclass(frozen=True)
class LoadCondition:
    """What a loaded device shows at one instant: its clock as a share of rated boost,
    the NVML reason bits it reports, and a temperature and power share when they differ
    from a healthy loaded part's (None: as healthy)."""

    sm_scale: float = 1.0
    reasons: int = 0
    temp_c: float | None = None
    power_scale: float | None = None

    @property
    def thermal(self) -> bool:
        return bool(self.reasons & (SW_THERMAL_BIT | HW_THERMAL_BIT))

    @property
    def power_brake(self) -> bool:
        return bool(self.reasons & HW_POWER_BRAKE_BIT)


HEALTHY_LOAD: Final = LoadCondition()


def _braked(loaded_for_s: float) -> bool:
    phase = loaded_for_s % POWER_BRAKE_PERIOD_S
    return POWER_BRAKE_OFFSET_S <= phase < POWER_BRAKE_OFFSET_S + POWER_BRAKE_HOLD_S


def load_condition(faults: frozenset[str], loaded_for_s: float) -> LoadCondition:
    """The faulty device's condition after ``loaded_for_s`` seconds of continuous load."""
    if POWER_BRAKE_FAULT in faults and _braked(loaded_for_s):
        return LoadCondition(
            sm_scale=POWER_BRAKE_SM_SCALE,
            reasons=HW_POWER_BRAKE_BIT | HW_SLOWDOWN_BIT,
            power_scale=0.45,
        )
    if THERMAL_THROTTLE_FAULT in faults and loaded_for_s >= THERMAL_ONSET_S:
        return LoadCondition(
            sm_scale=THERMAL_SM_SCALE,
            reasons=HW_THERMAL_BIT | SW_THERMAL_BIT,
            temp_c=THERMAL_TEMP_C,
        )
    return HEALTHY_LOAD


def mean_sm_scale(faults: frozenset[str], loaded_for_s: float) -> float:
    """The mean clock share over a load of ``loaded_for_s`` seconds (what the achieved
    throughput of that load scales by), integrated at one-second steps."""
    if loaded_for_s <= 0:
        return 1.0
    steps = max(int(loaded_for_s), 1)
    total = sum(load_condition(faults, float(second)).sm_scale for second in range(steps))
    return total / steps
