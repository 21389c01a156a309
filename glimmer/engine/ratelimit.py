"""Rate limiters and back-off, with client-go's arithmetic.

Three separate needs share the token bucket here:
- the workqueue's retry delay: per-item exponential back-off (5 ms doubling to
  1000 s) combined, by taking the larger, with a global 10 qps / burst 100
  bucket so a storm of failing keys cannot hammer the apiserver
  (`workqueue.DefaultControllerRateLimiter`);
- the API client's QPS/burst throttle (client-go's `flowcontrol` limiter);
- the informer's re-list/re-watch back-off (800 ms to 30 s, jittered, reset
  after two quiet minutes), so a flapping apiserver is not stampeded.

The bucket follows `golang.org/x/time/rate`: a reservation may drive the token
count negative, and the delay is the time for the count to climb back to zero.
That is what makes delays grow linearly with the backlog instead of every
caller retrying at once.
"""

from __future__ import annotations

import random
from collections.abc import Hashable
from typing import Generic, Protocol, TypeVar

import attrs

from glimmer.engine.clock import Clock

K = TypeVar("K", bound=Hashable)
K_contra = TypeVar("K_contra", bound=Hashable, contravariant=True)


class RateLimiter(Protocol[K_contra]):
    """How long an item should wait before its next retry."""

    def when(self, item: K_contra) -> float:
        """Record a failure of `item` and return the delay before retrying it."""
        ...

    def forget(self, item: K_contra) -> None:
        """Stop tracking `item`: its next failure starts from the base delay."""
        ...

    def num_requeues(self, item: K_contra) -> int:
        """Failures recorded for `item` since it was last forgotten."""
        ...


class TokenBucket:
    """A `rate.Limiter`: `qps` tokens per second, at most `burst` banked."""

    def __init__(self, *, qps: float, burst: int, clock: Clock) -> None:
        if qps <= 0 or burst <= 0:
            raise ValueError(f"token bucket needs qps > 0 and burst > 0, got {qps}, {burst}")
        self._qps = qps
        self._burst = float(burst)
        self._clock = clock
        self._tokens = float(burst)
        self._last = clock.now()

    def reserve(self) -> float:
        """Take one token now; return how long the caller must wait to honour it."""
        now = self._clock.now()
        elapsed = max(0.0, now - self._last)
        self._tokens = min(self._burst, self._tokens + elapsed * self._qps)
        self._last = now
        self._tokens -= 1.0
        if self._tokens >= 0:
            return 0.0
        return -self._tokens / self._qps

    async def wait(self) -> None:
        """Block until a token is available (the API client's throttle)."""
        delay = self.reserve()
        if delay > 0:
            await self._clock.sleep(delay)


class ItemExponentialFailureRateLimiter(Generic[K]):
    """`base * 2**failures`, capped at `max_delay`, tracked per item."""

    def __init__(self, *, base_delay: float = 0.005, max_delay: float = 1000.0) -> None:
        self._base = base_delay
        self._max = max_delay
        self._failures: dict[K, int] = {}

    def when(self, item: K) -> float:
        exp = self._failures.get(item, 0)
        self._failures[item] = exp + 1
        # Cap the exponent first: 2**exp overflows a float long before it matters.
        if exp > 62:
            return self._max
        return min(self._base * float(2**exp), self._max)

    def forget(self, item: K) -> None:
        self._failures.pop(item, None)

    def num_requeues(self, item: K) -> int:
        return self._failures.get(item, 0)


class BucketRateLimiter(Generic[K]):
    """One shared token bucket for all items; it keeps no per-item state."""

    def __init__(self, bucket: TokenBucket) -> None:
        self._bucket = bucket

    def when(self, item: K) -> float:
        return self._bucket.reserve()

    def forget(self, item: K) -> None:
        return None

    def num_requeues(self, item: K) -> int:
        return 0


class MaxOfRateLimiter(Generic[K]):
    """Asks every limiter (so each records the failure) and waits the longest."""

    def __init__(self, *limiters: RateLimiter[K]) -> None:
        if not limiters:
            raise ValueError("MaxOfRateLimiter needs at least one limiter")
        self._limiters = limiters

    def when(self, item: K) -> float:
        return max(limiter.when(item) for limiter in self._limiters)

    def forget(self, item: K) -> None:
        for limiter in self._limiters:
            limiter.forget(item)

    def num_requeues(self, item: K) -> int:
        return max(limiter.num_requeues(item) for limiter in self._limiters)


def default_controller_rate_limiter(clock: Clock) -> MaxOfRateLimiter[Hashable]:
    """client-go's `DefaultControllerRateLimiter`: 5 ms..1000 s per item, 10 qps/100 burst."""
    return MaxOfRateLimiter[Hashable](
        ItemExponentialFailureRateLimiter[Hashable](base_delay=0.005, max_delay=1000.0),
        BucketRateLimiter[Hashable](TokenBucket(qps=10.0, burst=100, clock=clock)),
    )


@attrs.define
class Backoff:
    """Jittered exponential back-off that resets after a quiet spell.

    Defaults are the reflector's (`NewExponentialBackoffManager(800ms, 30s,
    2m, 2.0, 1.0)`): the n-th consecutive failure waits
    `min(initial * factor**(n-1), cap) * (1 + jitter * U[0,1))`.
    """

    clock: Clock
    initial: float = 0.8
    """First delay in seconds."""
    cap: float = 30.0
    """Largest un-jittered delay in seconds."""
    factor: float = 2.0
    """Growth per consecutive failure."""
    jitter: float = 1.0
    """Up to this fraction of the delay is added at random."""
    reset_after: float = 120.0
    """A failure this long after the previous one starts over from `initial`."""
    rng: random.Random = attrs.field(factory=random.Random)
    _current: float = attrs.field(default=0.0, init=False)
    _last_failure: float | None = attrs.field(default=None, init=False)

    def next_delay(self) -> float:
        """Record a failure and return how long to wait before trying again."""
        now = self.clock.now()
        if self._last_failure is None or now - self._last_failure >= self.reset_after:
            self._current = self.initial
        else:
            self._current = min(self._current * self.factor, self.cap)
        self._last_failure = now
        return self._current * (1.0 + self.jitter * self.rng.random())

    def reset(self) -> None:
        """A success: the next failure starts from `initial` again."""
        self._current = 0.0
        self._last_failure = None
