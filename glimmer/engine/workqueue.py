"""A workqueue with client-go's semantics, for asyncio.

The three sets are the point:
- `queue`: keys waiting, in order, each at most once;
- `dirty`: keys that need processing (queued, or re-added while processing);
- `processing`: keys a worker holds right now.

An add of a key already dirty is a no-op, so 10,000 events for 100 objects
collapse to at most 100 reconciles. An add of a key being processed only marks
it dirty; `done` puts it back, so no two workers ever reconcile the same key at
once, and the last write before `done` is still reconciled afterwards.

Delayed adds sit on a heap ordered by ready time and are released by a single
clock timer; a re-delay of an already-waiting key only ever moves it earlier.
Rate-limited adds ask a `RateLimiter` for the delay (per-item exponential
back-off maxed with a global token bucket by default).
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections import deque
from collections.abc import Hashable
from typing import Generic, TypeVar

from glimmer.engine.clock import Clock, MonotonicClock, TimerHandle
from glimmer.engine.metrics import QueueMetrics
from glimmer.engine.ratelimit import RateLimiter, default_controller_rate_limiter

K = TypeVar("K", bound=Hashable)


class QueueShutDownError(Exception):
    """`get` on a queue that is shut down and empty."""


class WorkQueue(Generic[K]):
    """Queue + dirty + processing sets, delayed adds and rate-limited retries."""

    def __init__(
        self,
        *,
        name: str = "",
        clock: Clock | None = None,
        rate_limiter: RateLimiter[K] | None = None,
        metrics: QueueMetrics | None = None,
    ) -> None:
        self.name = name
        self._clock: Clock = clock if clock is not None else MonotonicClock()
        self._limiter: RateLimiter[K] = (
            rate_limiter
            if rate_limiter is not None
            else default_controller_rate_limiter(self._clock)
        )
        self._metrics = metrics
        self._queue: deque[K] = deque()
        self._dirty: set[K] = set()
        self._processing: set[K] = set()
        self._added_at: dict[K, float] = {}
        self._started_at: dict[K, float] = {}
        self._getters: deque[asyncio.Future[None]] = deque()
        self._shutting_down = False
        self._drained: asyncio.Event | None = None
        # Delayed adds: heap of (ready_at, seq, key); `_waiting` holds each key's
        # current ready time so stale heap entries are skipped.
        self._heap: list[tuple[float, int, K]] = []
        self._waiting: dict[K, float] = {}
        self._seq = itertools.count()
        self._timer: TimerHandle | None = None
        self._timer_at: float | None = None
        if metrics is not None:
            metrics.bind_in_flight(
                unfinished=self._unfinished_seconds, longest=self._longest_seconds
            )

    # --- basic queue -------------------------------------------------------

    def add(self, item: K) -> None:
        """Mark `item` as needing processing; duplicates collapse."""
        if self._shutting_down or item in self._dirty:
            return
        self._dirty.add(item)
        if self._metrics is not None:
            self._metrics.adds.inc()
        self._added_at.setdefault(item, self._clock.now())
        if item in self._processing:
            return
        self._push(item)

    def _push(self, item: K) -> None:
        self._queue.append(item)
        if self._metrics is not None:
            self._metrics.depth.inc()
        while self._getters:
            getter = self._getters.popleft()
            if not getter.done():
                getter.set_result(None)
                break

    async def get(self) -> K:
        """Wait for the next key and mark it processing; the caller must `done` it.

        Raises `QueueShutDownError` once the queue is shut down and empty. Keys
        still queued at shutdown are handed out first, as in client-go.
        """
        while not self._queue:
            if self._shutting_down:
                raise QueueShutDownError(self.name)
            getter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._getters.append(getter)
            try:
                await getter
            except asyncio.CancelledError:
                # Pass a wake-up we swallowed on to another getter.
                if getter.done() and not getter.cancelled() and self._queue:
                    self._wake_one()
                raise
        item = self._queue.popleft()
        now = self._clock.now()
        if self._metrics is not None:
            self._metrics.depth.dec()
            added = self._added_at.pop(item, None)
            if added is not None:
                self._metrics.queue_duration.observe(max(0.0, now - added))
        else:
            self._added_at.pop(item, None)
        self._processing.add(item)
        self._started_at[item] = now
        self._dirty.discard(item)
        return item

    def _wake_one(self) -> None:
        while self._getters:
            getter = self._getters.popleft()
            if not getter.done():
                getter.set_result(None)
                return

    def done(self, item: K) -> None:
        """Release `item`; if it was re-added meanwhile it is queued again now."""
        self._processing.discard(item)
        started = self._started_at.pop(item, None)
        if self._metrics is not None and started is not None:
            self._metrics.work_duration.observe(max(0.0, self._clock.now() - started))
        if item in self._dirty:
            self._push(item)
        if self._drained is not None and not self._processing:
            self._drained.set()

    def __len__(self) -> int:
        return len(self._queue)

    @property
    def processing(self) -> frozenset[K]:
        return frozenset(self._processing)

    @property
    def shutting_down(self) -> bool:
        return self._shutting_down

    def shutdown(self) -> None:
        """Refuse new adds, cancel delayed ones, and wake every waiting `get`."""
        self._shutting_down = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._heap.clear()
        self._waiting.clear()
        for getter in self._getters:
            if not getter.done():
                getter.set_result(None)
        self._getters.clear()

    async def shutdown_with_drain(self) -> None:
        """Shut down, then wait until every key handed out has been `done`."""
        self._drained = asyncio.Event()
        if not self._processing:
            self._drained.set()
        self.shutdown()
        await self._drained.wait()

    # --- delayed adds ------------------------------------------------------

    def add_after(self, item: K, delay: float) -> None:
        """Add `item` once `delay` seconds of the queue's clock have passed."""
        if self._shutting_down:
            return
        if self._metrics is not None:
            self._metrics.retries.inc()
        if delay <= 0:
            self.add(item)
            return
        ready_at = self._clock.now() + delay
        current = self._waiting.get(item)
        if current is not None and current <= ready_at:
            return
        self._waiting[item] = ready_at
        heapq.heappush(self._heap, (ready_at, next(self._seq), item))
        self._arm_timer()

    def _arm_timer(self) -> None:
        while self._heap and self._waiting.get(self._heap[0][2]) != self._heap[0][0]:
            heapq.heappop(self._heap)
        if not self._heap:
            return
        first = self._heap[0][0]
        if self._timer is not None and self._timer_at is not None and self._timer_at <= first:
            return
        if self._timer is not None:
            self._timer.cancel()
        self._timer_at = first
        self._timer = self._clock.call_at(first, self._release_due)

    def _release_due(self) -> None:
        self._timer = None
        self._timer_at = None
        now = self._clock.now()
        while self._heap and self._heap[0][0] <= now:
            ready_at, _, item = heapq.heappop(self._heap)
            if self._waiting.get(item) == ready_at:
                del self._waiting[item]
                self.add(item)
        self._arm_timer()

    @property
    def waiting(self) -> int:
        """Keys parked for a delayed add."""
        return len(self._waiting)

    # --- rate-limited retries ---------------------------------------------

    def add_rate_limited(self, item: K) -> None:
        """Retry `item` after the rate limiter's delay (its failure is recorded)."""
        self.add_after(item, self._limiter.when(item))

    def forget(self, item: K) -> None:
        """Clear `item`'s failure history (it succeeded or chose its own delay)."""
        self._limiter.forget(item)

    def num_requeues(self, item: K) -> int:
        return self._limiter.num_requeues(item)

    # --- scrape-time gauges -----------------------------------------------

    def _unfinished_seconds(self) -> float:
        now = self._clock.now()
        return sum(now - started for started in self._started_at.values())

    def _longest_seconds(self) -> float:
        if not self._started_at:
            return 0.0
        return self._clock.now() - min(self._started_at.values())
