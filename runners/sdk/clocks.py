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

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from runners.sdk.protocols import ClockKind, GpuDevice, NotSupportedError

#: NVML clock-event reason bits that mean the part is slowing itself (idle and
#: app-clock settings are not).
THROTTLE_MASK = 0x4 | 0x8 | 0x20 | 0x40 | 0x80


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


class ClockTally:
    """What one device's samples say; mixed into a runner's per-device record, which
    holds the ``samples``."""

    samples: Sequence[ClockSample]

    @property
    def mean_sm_mhz(self) -> float:
        return sum(s.sm_mhz for s in self.samples) / len(self.samples)

    @property
    def max_temp_c(self) -> float | None:
        temps = [s.temp_c for s in self.samples if s.temp_c is not None]
        return max(temps) if temps else None

    @property
    def reasons_readable(self) -> bool:
        """Whether every sample read the throttle reasons (else no count may be claimed)."""
        return all(s.reasons is not None for s in self.samples)

    @property
    def throttled_samples(self) -> int:
        return sum(1 for s in self.samples if (s.reasons or 0) & THROTTLE_MASK)

    @property
    def throttle_events(self) -> int:
        """Entries into a throttled state (a run of throttled samples counts once)."""
        events, previous = 0, False
        for sample in self.samples:
            now = bool((sample.reasons or 0) & THROTTLE_MASK)
            events += now and not previous
            previous = now
        return events
