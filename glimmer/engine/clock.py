"""Injectable time for the engine.

Every timer in the engine (delayed adds, rate-limit backoff, informer back-off,
leader-election renew deadlines) reads time through a `Clock`, so tests drive
time with `FakeClock.advance` instead of sleeping. This is the trio habit of
shipping the deterministic test clock with the library: concurrency tests are
then fast and cannot flake on a loaded machine.

Times are monotonic seconds as floats; wall-clock timestamps (Lease
`renewTime`) are produced separately by `wall_now` so a stepped system clock
never shortens a lease.
"""

from __future__ import annotations

import asyncio
import datetime
import heapq
import itertools
import time
from collections.abc import Callable
from typing import Protocol


class TimerHandle(Protocol):
    """A scheduled callback that can be cancelled before it fires."""

    def cancel(self) -> None: ...


class Clock(Protocol):
    """Monotonic time plus timers: the only time source engine code may use."""

    def now(self) -> float:
        """Monotonic seconds."""
        ...

    def call_at(self, when: float, callback: Callable[[], None]) -> TimerHandle:
        """Run `callback` (on the event loop) once `now() >= when`."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Suspend for `seconds` of this clock's time."""
        ...


class MonotonicClock:
    """The production clock: `time.monotonic` and the running event loop."""

    def now(self) -> float:
        return time.monotonic()

    def call_at(self, when: float, callback: Callable[[], None]) -> TimerHandle:
        loop = asyncio.get_running_loop()
        return loop.call_later(max(0.0, when - time.monotonic()), callback)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds))


class _FakeTimer:
    def __init__(self) -> None:
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class FakeClock:
    """A clock that only moves when a test calls `advance`.

    Callbacks due at or before the new time run in deadline order (ties in
    scheduling order) synchronously inside `advance`; coroutines woken by them
    run at the caller's next await, so tests usually follow `advance` with
    `await settle()`.
    """

    def __init__(self, start: float = 1000.0) -> None:
        self._now = start
        self._seq = itertools.count()
        self._timers: list[tuple[float, int, _FakeTimer, Callable[[], None]]] = []

    def now(self) -> float:
        return self._now

    def call_at(self, when: float, callback: Callable[[], None]) -> TimerHandle:
        timer = _FakeTimer()
        heapq.heappush(self._timers, (when, next(self._seq), timer, callback))
        return timer

    async def sleep(self, seconds: float) -> None:
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()

        def wake() -> None:
            if not done.done():
                done.set_result(None)

        timer = self.call_at(self._now + max(0.0, seconds), wake)
        try:
            await done
        finally:
            timer.cancel()

    @property
    def pending_timers(self) -> int:
        """Live (uncancelled) timers: lets tests wait until a sleeper is parked."""
        return sum(1 for _, _, t, _ in self._timers if not t.cancelled)

    def next_deadline(self) -> float | None:
        live = [when for when, _, t, _ in self._timers if not t.cancelled]
        return min(live) if live else None

    def advance(self, seconds: float) -> None:
        """Move time forward, firing every callback that falls due on the way."""
        if seconds < 0:
            raise ValueError("a monotonic clock cannot go backwards")
        target = self._now + seconds
        while self._timers and self._timers[0][0] <= target:
            when, _, timer, callback = heapq.heappop(self._timers)
            self._now = max(self._now, when)
            if not timer.cancelled:
                callback()
        self._now = target


async def settle(rounds: int = 20) -> None:
    """Let every ready task run until the loop is quiet (bounded, never hangs)."""
    for _ in range(rounds):
        await asyncio.sleep(0)


async def autojump(clock: FakeClock, *, quiet_rounds: int = 20) -> None:
    """Jump `clock` to its next timer whenever the loop has gone quiet.

    trio's `autojump_clock` for asyncio: run it as a background task and code
    that sleeps on the fake clock proceeds at once, in deadline order, without
    a test scripting every `advance`. Cancel the task to stop time.
    """
    while True:
        await settle(quiet_rounds)
        deadline = clock.next_deadline()
        if deadline is not None:
            clock.advance(max(0.0, deadline - clock.now()))


def wall_now() -> datetime.datetime:
    """UTC wall time, for timestamps written to the apiserver."""
    return datetime.datetime.now(tz=datetime.UTC)


def format_micro_time(moment: datetime.datetime) -> str:
    """Kubernetes `MicroTime` (RFC 3339 with microseconds, `Z`)."""
    return moment.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
