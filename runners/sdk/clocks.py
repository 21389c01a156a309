"""Clock samples read under load, and the throttle tallies drawn from them.

Why one module: clockprobe and gpu-burn (thermal-soak is gpu-burn's engine) each sample
every device while a load runs and print throttle counts from those samples. How a
sample is read (a reading the part cannot give is None, never a zero) and what counts
as a throttle (a reason bit that means the part is slowing itself; a run of throttled
samples is one event) are written once, here, so the two runners cannot drift apart.

A sample's reasons are ``None`` when the library could not say (an AMD part whose
firmware publishes no ``indep_throttle_status``): such a device's throttle counts are
unknown, never zero, and :attr:`ClockTally.reasons_readable` says so.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from runners.sdk.protocols import ClockKind, GpuDevice, NotSupportedError

#: NVML clock-event reason bits that mean the part is slowing itself (idle and
#: app-clock settings are not).
THROTTLE_MASK = 0x4 | 0x8 | 0x20 | 0x40 | 0x80
#: The reason bits that mean the *hardware* is protecting itself (HW slowdown, HW thermal
#: slowdown, HW power brake): unlike the software power cap, which a healthy part under a
#: full GEMM load meets routinely, a healthy part under burn-in should never set these.
HW_SLOWDOWN_MASK = 0x8 | 0x40 | 0x80


@dataclass(frozen=True)
class ClockSample:
    """One device's readings at one instant of the load."""

    sm_mhz: int
    #: Clock-event reason bits; None where the part cannot say.
    reasons: int | None
    temp_c: float | None
    power_w: float | None


def optional_reading(read: Callable[[], float]) -> float | None:
    """A reading the part may not support: None then, never a zero."""
    try:
        return float(read())
    except NotSupportedError:
        return None


def clock_event_reasons(device: GpuDevice) -> int | None:
    """The device's clock-event reason bits, None where it cannot say."""
    try:
        return device.clock_event_reasons()
    except NotSupportedError:
        return None


def read_clock_sample(device: GpuDevice) -> ClockSample:
    return ClockSample(
        sm_mhz=device.clock_mhz(ClockKind.SM),
        reasons=clock_event_reasons(device),
        temp_c=optional_reading(device.temperature_c),
        power_w=optional_reading(device.power_draw_w),
    )


@dataclass
class RunningClocks:
    """One device's clock samples folded as they arrive, in constant memory.

    Why a fold and not a list: a load window re-prints its running totals every 15 s and
    a week-long soak samples each device 604,800 times. Kept as a list, every re-print
    re-walked the whole window (quadratic: a simulated week did not finish in minutes)
    and a device's samples alone held hundreds of MiB by the end. Folded, a sample costs
    the same on day seven as in the first minute, and every figure reads in O(1).
    """

    count: int = 0
    sm_mhz_sum: float = 0.0
    max_temp_c: float | None = None
    #: Samples whose throttle reasons the part could not give.
    unreadable_reasons: int = 0
    throttled_samples: int = 0
    #: Entries into a throttled state (a run of throttled samples counts once).
    throttle_events: int = 0
    #: Entries into a hardware slowdown (:data:`HW_SLOWDOWN_MASK`), counted as above.
    hw_slowdown_events: int = 0
    power_w_sum: float = 0.0
    power_readings: int = 0
    max_power_w: float | None = None
    _throttled: bool = False
    _hw_slowed: bool = False

    @classmethod
    def of(cls, samples: Iterable[ClockSample]) -> RunningClocks:
        clocks = cls()
        for sample in samples:
            clocks.add(sample)
        return clocks

    def add(self, sample: ClockSample) -> None:
        self.count += 1
        self.sm_mhz_sum += sample.sm_mhz
        temp = sample.temp_c
        if temp is not None and (self.max_temp_c is None or temp > self.max_temp_c):
            self.max_temp_c = temp
        if sample.power_w is not None:
            self.power_w_sum += sample.power_w
            self.power_readings += 1
            if self.max_power_w is None or sample.power_w > self.max_power_w:
                self.max_power_w = sample.power_w
        if sample.reasons is None:
            self.unreadable_reasons += 1
        throttled = bool((sample.reasons or 0) & THROTTLE_MASK)
        self.throttled_samples += throttled
        self.throttle_events += throttled and not self._throttled
        self._throttled = throttled
        slowed = bool((sample.reasons or 0) & HW_SLOWDOWN_MASK)
        self.hw_slowdown_events += slowed and not self._hw_slowed
        self._hw_slowed = slowed

    @property
    def mean_sm_mhz(self) -> float:
        return self.sm_mhz_sum / self.count

    @property
    def reasons_readable(self) -> bool:
        """Whether every sample read the throttle reasons (else no count may be claimed)."""
        return self.unreadable_reasons == 0


class ClockTally:
    """What one device's kept samples say (a runner with a short window that keeps its
    samples for more than these figures, clockprobe); the rules are
    :class:`RunningClocks`'s, folded over ``samples``."""

    samples: Sequence[ClockSample]

    @property
    def _clocks(self) -> RunningClocks:
        return RunningClocks.of(self.samples)

    @property
    def mean_sm_mhz(self) -> float:
        return self._clocks.mean_sm_mhz

    @property
    def max_temp_c(self) -> float | None:
        return self._clocks.max_temp_c

    @property
    def reasons_readable(self) -> bool:
        """Whether every sample read the throttle reasons (else no count may be claimed)."""
        return self._clocks.reasons_readable

    @property
    def throttled_samples(self) -> int:
        return self._clocks.throttled_samples

    @property
    def throttle_events(self) -> int:
        """Entries into a throttled state (a run of throttled samples counts once)."""
        return self._clocks.throttle_events

    @property
    def hw_slowdown_events(self) -> int:
        """Entries into a hardware slowdown (:data:`HW_SLOWDOWN_MASK`)."""
        return self._clocks.hw_slowdown_events
