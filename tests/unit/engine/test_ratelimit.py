"""Back-off schedules and the token bucket (client-go's arithmetic)."""

from __future__ import annotations

import random

import pytest

from glimmer.engine import (
    Backoff,
    BucketRateLimiter,
    FakeClock,
    ItemExponentialFailureRateLimiter,
    MaxOfRateLimiter,
    TokenBucket,
    default_controller_rate_limiter,
)


def test_item_backoff_doubles_from_5ms_and_caps_at_1000s() -> None:
    limiter = ItemExponentialFailureRateLimiter[str]()
    delays = [limiter.when("a") for _ in range(25)]
    assert delays[:5] == pytest.approx([0.005, 0.01, 0.02, 0.04, 0.08])
    assert delays[17] == pytest.approx(0.005 * 2**17)  # 655.36 s, still below the cap
    assert delays[18:] == [1000.0] * 7
    assert limiter.num_requeues("a") == 25


def test_item_backoff_is_per_item_and_forget_starts_over() -> None:
    limiter = ItemExponentialFailureRateLimiter[str]()
    limiter.when("a")
    limiter.when("a")
    assert limiter.when("b") == pytest.approx(0.005)
    limiter.forget("a")
    assert limiter.num_requeues("a") == 0
    assert limiter.when("a") == pytest.approx(0.005)


def test_item_backoff_does_not_overflow_after_many_failures() -> None:
    limiter = ItemExponentialFailureRateLimiter[str]()
    for _ in range(2000):
        delay = limiter.when("a")
    assert delay == 1000.0


def test_token_bucket_allows_the_burst_then_spaces_at_qps() -> None:
    clock = FakeClock()
    bucket = TokenBucket(qps=10.0, burst=100, clock=clock)
    assert [bucket.reserve() for _ in range(100)] == [0.0] * 100
    # Reservations go negative: each waits 0.1 s longer than the one before.
    assert [bucket.reserve() for _ in range(3)] == pytest.approx([0.1, 0.2, 0.3])


def test_token_bucket_refills_over_time_up_to_burst() -> None:
    clock = FakeClock()
    bucket = TokenBucket(qps=10.0, burst=100, clock=clock)
    for _ in range(100):
        bucket.reserve()
    clock.advance(1.0)  # 10 tokens back
    assert [bucket.reserve() for _ in range(10)] == [0.0] * 10
    assert bucket.reserve() == pytest.approx(0.1)
    clock.advance(3600.0)
    assert [bucket.reserve() for _ in range(100)] == [0.0] * 100
    assert bucket.reserve() > 0, "refill must stop at burst"


def test_token_bucket_rejects_nonsense_rates() -> None:
    with pytest.raises(ValueError):
        TokenBucket(qps=0, burst=1, clock=FakeClock())
    with pytest.raises(ValueError):
        TokenBucket(qps=1, burst=0, clock=FakeClock())


def test_default_controller_limiter_is_max_of_item_backoff_and_bucket() -> None:
    clock = FakeClock()
    limiter = default_controller_rate_limiter(clock)
    # 100 distinct failing items drain the burst at the per-item 5 ms.
    assert [limiter.when(f"k{i}") for i in range(100)] == pytest.approx([0.005] * 100)
    # The 101st is held by the global bucket (0.1 s) although its own back-off is 5 ms.
    assert limiter.when("k100") == pytest.approx(0.1)
    # A key failing repeatedly is held by its own back-off once that is larger.
    clock.advance(1000.0)
    for _ in range(10):
        delay = limiter.when("k0")
    assert delay == pytest.approx(0.005 * 2**10)
    limiter.forget("k0")
    assert limiter.num_requeues("k0") == 0


def test_max_of_records_the_failure_in_every_limiter() -> None:
    a = ItemExponentialFailureRateLimiter[str](base_delay=1.0, max_delay=100)
    b = ItemExponentialFailureRateLimiter[str](base_delay=0.5, max_delay=100)
    both = MaxOfRateLimiter[str](a, b)
    assert both.when("x") == 1.0
    assert both.when("x") == 2.0
    assert a.num_requeues("x") == b.num_requeues("x") == 2
    assert (
        BucketRateLimiter[str](TokenBucket(qps=1, burst=1, clock=FakeClock())).num_requeues("x")
        == 0
    )


def test_reflector_backoff_grows_from_800ms_to_30s_with_jitter_and_resets() -> None:
    clock = FakeClock()
    backoff = Backoff(clock=clock, jitter=0.0)
    delays = []
    for _ in range(8):
        delays.append(backoff.next_delay())
        clock.advance(1.0)
    assert delays == pytest.approx([0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30.0, 30.0])
    clock.advance(120.0)
    assert backoff.next_delay() == pytest.approx(0.8), "two quiet minutes reset the back-off"
    backoff.reset()
    assert backoff.next_delay() == pytest.approx(0.8)


def test_reflector_backoff_jitter_adds_up_to_one_times_the_delay() -> None:
    clock = FakeClock()
    backoff = Backoff(clock=clock, rng=random.Random(3))
    samples = []
    for _ in range(200):
        backoff.reset()
        samples.append(backoff.next_delay())
    assert all(0.8 <= s < 1.6 for s in samples)
    assert max(samples) - min(samples) > 0.5, "jitter must actually spread the delays"
