"""Clock samples under load and what they say about throttling.

Why classify: a low clock with a reason bit set (power, thermal) is the part protecting
itself; a low clock with *no* reason while a P-state above P0 holds is a part pinned in
a low performance state — healthy to every passive check, yet slow under load.

A sample's reasons are ``None`` when the library could not say (an AMD part whose
firmware publishes no throttler status): such a device's throttle counts are unknown,
never zero, and the runner prints none of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from runners.sdk.clocks import THROTTLE_MASK, ClockSample, ClockTally
from runners.sdk.protocols import CLOCK_EVENT_REASONS

_THERMAL = 0x20 | 0x40
_POWER = 0x4 | 0x80
_HARDWARE = 0x8


@dataclass(frozen=True)
class Sample(ClockSample):
    """The SDK's clock sample plus what clockprobe also reads: the memory clock and the
    P-state (a low clock with no reason while a P-state above P0 holds is pinned)."""

    mem_mhz: int
    pstate: int


@dataclass(frozen=True)
class DeviceClocks(ClockTally):
    """One device's samples summarised against its rated boost clock (the throttle
    counts are the SDK's, :class:`runners.sdk.clocks.ClockTally`)."""

    rated_boost_mhz: int
    samples: Sequence[Sample]

    @property
    def mean_mem_mhz(self) -> float:
        return sum(s.mem_mhz for s in self.samples) / len(self.samples)

    @property
    def sustained_pct(self) -> float:
        return self.mean_sm_mhz / self.rated_boost_mhz * 100.0

    @property
    def min_pct(self) -> float:
        return min(s.sm_mhz for s in self.samples) / self.rated_boost_mhz * 100.0

    @property
    def max_pct(self) -> float:
        return max(s.sm_mhz for s in self.samples) / self.rated_boost_mhz * 100.0

    @property
    def reasons_mask(self) -> int:
        """The reasons seen in readable samples (unreadable ones add nothing)."""
        mask = 0
        for sample in self.samples:
            mask |= sample.reasons or 0
        return mask

    @property
    def worst_pstate(self) -> int:
        return max(s.pstate for s in self.samples)

    @property
    def max_power_w(self) -> float | None:
        powers = [s.power_w for s in self.samples if s.power_w is not None]
        return max(powers) if powers else None


def reason_names(mask: int) -> str:
    names = [name for bit, name in CLOCK_EVENT_REASONS.items() if mask & bit]
    return "+".join(names) if names else "none"


def classify(clocks: DeviceClocks, *, floor_pct: float) -> str:
    mask = clocks.reasons_mask & THROTTLE_MASK
    kinds = []
    if mask & _THERMAL:
        kinds.append("thermal")
    if mask & _POWER:
        kinds.append("power")
    if mask & _HARDWARE:
        kinds.append("hardware")
    if kinds:
        return "+".join(kinds)
    if clocks.sustained_pct < floor_pct:
        return "pinned-low-pstate" if clocks.worst_pstate > 0 else "unexplained-low-clock"
    return "none"
