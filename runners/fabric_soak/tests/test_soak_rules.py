"""fabric-soak's arithmetic: counter deltas that cannot be known are n/a, never 0."""

from __future__ import annotations

from runners.fabric_soak.runner import counter_delta, p1

BEFORE = {"symbol_error": 10, "link_downed": 1}


def test_linkErrorEvents_is_the_summed_counter_delta() -> None:
    assert counter_delta(BEFORE, {"symbol_error": 47, "link_downed": 2}) == 38
    assert counter_delta(BEFORE, dict(BEFORE)) == 0


def test_linkErrorEvents_is_na_when_counters_are_unreadable_or_went_backwards() -> None:
    assert counter_delta(None, BEFORE) is None
    assert counter_delta(BEFORE, None) is None
    assert counter_delta(BEFORE, {"symbol_error": 3, "link_downed": 1}) is None  # a reset
    assert counter_delta(BEFORE, {"symbol_error": 10}) is None  # a counter vanished


def test_p1_is_the_nearest_rank_first_percentile() -> None:
    assert p1([5.0, 1.0, 3.0]) == 1.0
    samples = [float(v) for v in range(1, 201)]
    assert p1(samples) == 2.0
