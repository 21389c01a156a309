"""Hypothesis properties of the soak fold (G2): order, poisoning, no invented value,
and the FormatFloat rendering of a Sum."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from glimmer.contract.numbers import format_go_plain, parse_go_float
from glimmer.contract.registry import Aggregation, aggregation_of
from glimmer.verdict.soak import fold_metrics, fold_value, poisoned

MODEST = settings(max_examples=300, deadline=None)

#: Sum, Max, Min, Last (registered) and an unregistered name (Last).
NAMES = st.sampled_from(["xidEvents", "gpuTempC", "sustainedClockPct", "eccErrors", "myThing"])
NUMERIC = st.one_of(
    st.integers(-(10**6), 10**6).map(str),
    st.floats(allow_nan=False, allow_infinity=False, width=64).map(repr),
    st.sampled_from(["1e3", "2.50", "0x1p3", "-0", "1_000"]),
)
POISON = st.sampled_from(["NaN", "+Inf", "-inf", "garbage", "1e400", "", "n/a"])
READING = st.one_of(NUMERIC, POISON)
WINDOWS = st.lists(st.dictionaries(NAMES, READING, max_size=5), max_size=8)


def fold_all(windows: list[dict[str, str]]) -> dict[str, str]:
    aggregate: dict[str, str] = {}
    for w in windows:
        aggregate = fold_metrics(aggregate, w)
    return aggregate


@MODEST
@given(WINDOWS, st.randoms(use_true_random=False))
def test_G2_min_max_and_integer_sum_are_order_independent(
    windows: list[dict[str, str]], rng: random.Random
) -> None:
    shuffled = list(windows)
    rng.shuffle(shuffled)
    a, b = fold_all(windows), fold_all(shuffled)
    assert a.keys() == b.keys()
    for name in a:
        agg = aggregation_of(name)
        if agg is Aggregation.LAST:
            continue  # the newest reading stands: order is the rule
        # Poisoned or not does not depend on order.
        assert poisoned(a[name]) == poisoned(b[name]), (name, a[name], b[name])
        if poisoned(a[name]):
            continue
        x, y = parse_go_float(a[name]), parse_go_float(b[name])
        assert x is not None and y is not None
        readings = [w[name] for w in windows if name in w]
        # Integer sums are exact (hence order-free) while they stay within 2**53.
        numbers = [parse_go_float(r) or 0.0 for r in readings]
        exact = all(n.is_integer() and abs(n) <= 2**49 for n in numbers)
        if agg is not Aggregation.SUM or exact:
            assert x == y, (name, readings)


@MODEST
@given(WINDOWS)
def test_G2_poisoning_is_sticky(windows: list[dict[str, str]]) -> None:
    aggregate: dict[str, str] = {}
    for w in windows:
        before = dict(aggregate)
        aggregate = fold_metrics(aggregate, w)
        for name, value in before.items():
            if aggregation_of(name) is not Aggregation.LAST and poisoned(value):
                assert aggregate[name] == value


def test_G2_a_sum_that_overflows_poisons_its_key() -> None:
    assert fold_value(Aggregation.SUM, "1.7e308", "1.7e308") == "+Inf"
    assert poisoned(fold_value(Aggregation.SUM, "1.7e308", "1.7e308"))


@MODEST
@given(WINDOWS)
def test_G2_no_value_is_invented(windows: list[dict[str, str]]) -> None:
    """Min/Max/Last keep one of the readings verbatim; a Sum of clean readings is their
    sum; a name nobody reported is absent."""
    aggregate = fold_all(windows)
    reported = {n for w in windows for n in w}
    assert set(aggregate) == reported
    for name, value in aggregate.items():
        readings = [w[name] for w in windows if name in w]
        agg = aggregation_of(name)
        if agg is Aggregation.LAST:
            assert value == readings[-1]
        elif poisoned(value):
            # A poisoning reading, verbatim; or a clean Sum that overflowed float64,
            # which reads NonFinite at its gate (fails closed).
            overflow = agg is Aggregation.SUM and value in ("+Inf", "-Inf")
            assert value in readings or overflow
        elif agg is Aggregation.SUM:
            total = 0.0
            for r in readings:
                total += parse_go_float(r) or 0.0
            assert parse_go_float(value) == total
        else:
            assert value in readings
            numbers = [parse_go_float(r) for r in readings]
            pick = min if agg is Aggregation.MIN else max
            assert parse_go_float(value) == pick(n for n in numbers if n is not None)


@MODEST
@given(st.floats(allow_nan=False, allow_infinity=False, width=64))
def test_G2_a_sum_is_rendered_as_formatfloat_f_minus_1(x: float) -> None:
    rendered = fold_value(Aggregation.SUM, None, repr(x))
    assert rendered == format_go_plain(x)
    assert "e" not in rendered.lower()
    assert parse_go_float(rendered) == x
    if rendered not in ("0", "-0"):
        assert not rendered.endswith(".") and not ("." in rendered and rendered.endswith("0"))


def test_G2_rendering_examples() -> None:
    assert [fold_value(Aggregation.SUM, None, r) for r in ("5.0", "1e3", "2.50")] == [
        "5",
        "1000",
        "2.5",
    ]
    assert fold_value(Aggregation.SUM, "1", "NaN") == "NaN"
