"""State shared by the simulated sources: a virtual clock and which devices are loaded.

Why shared: on silicon, clocks rise because a kernel runs; the simulated NVML must see
the simulated compute load the same way, or clockprobe would measure an idle part. The
clock is virtual (it jumps on ``sleep``), so windows of many seconds cost no wall time
and tests are deterministic.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from runners.sdk.protocols import DriverUnavailableError
from runners.sdk.simgpu.load_faults import HEALTHY_LOAD, LoadCondition, load_condition
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
    #: When each loaded device's current load began (virtual seconds).
    loaded_since: dict[int, float] = field(default_factory=dict)
    #: Seconds each device spent under loads that have ended.
    loaded_before: dict[int, float] = field(default_factory=dict)

    def start_load(self, devices: list[int]) -> None:
        for device in devices:
            self.loaded.add(device)
            self.loaded_since.setdefault(device, self.clock.now)

    def stop_load(self, devices: list[int]) -> float:
        """End the load of ``devices``; how long the longest of them was loaded."""
        longest = 0.0
        for device in devices:
            self.loaded.discard(device)
            since = self.loaded_since.pop(device, self.clock.now)
            longest = max(longest, self.clock.now - since)
            spent = self.clock.now - since
            self.loaded_before[device] = self.loaded_before.get(device, 0.0) + spent
        return longest

    def seconds_loaded(self, index: int) -> float:
        """Every second device ``index`` has spent under load so far."""
        current = self.clock.now - self.loaded_since[index] if index in self.loaded_since else 0.0
        return self.loaded_before.get(index, 0.0) + current

    def condition(self, index: int) -> LoadCondition:
        """A loaded faulty device's condition now (healthy when idle or not faulty)."""
        if index not in self.loaded or index != self.spec.faulty_index:
            return HEALTHY_LOAD
        since = self.loaded_since.get(index, self.clock.now)
        return load_condition(self.spec.faults, self.clock.now - since)

    def fault_on(self, fault: str, index: int) -> bool:
        """Whether ``fault`` was injected and lands on device ``index`` (the last one)."""
        return self.spec.has(fault) and index == self.spec.faulty_index

    def require_driver(self, failure: str) -> None:
        """The ``no-driver`` fault: a GPU library fails to load, saying ``failure``."""
        if self.spec.has("no-driver"):
            raise DriverUnavailableError(failure)
