"""State shared by the simulated sources: a virtual clock and which devices are loaded.

Why shared: on silicon, clocks rise because a kernel runs; the simulated NVML must see
the simulated compute load the same way, or clockprobe would measure an idle part. The
clock is virtual (it jumps on ``sleep``), so windows of many seconds cost no wall time
and tests are deterministic.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from runners.sdk.protocols import DriverUnavailableError
from runners.sdk.simgpu.spec import SimSpec


@dataclass
class VirtualClock:
    now: float = 1000.0

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += max(seconds, 0.0)


@dataclass
class SimState:
    spec: SimSpec
    clock: VirtualClock = field(default_factory=VirtualClock)
    loaded: set[int] = field(default_factory=set)

    def fault_on(self, fault: str, index: int) -> bool:
        """Whether ``fault`` was injected and lands on device ``index`` (the last one)."""
        return self.spec.has(fault) and index == self.spec.faulty_index

    def require_driver(self, failure: str) -> None:
        """The ``no-driver`` fault: a GPU library fails to load, saying ``failure``."""
        if self.spec.has("no-driver"):
            raise DriverUnavailableError(failure)
