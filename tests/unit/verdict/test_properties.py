"""Hypothesis properties of the whole contract + verdict pipeline (10,000 examples each).

(a) nothing yields Passed unless exit is 0 and every Required threshold's metric was
    printed last as a finite number satisfying it;
(b) inserting non-metric lines anywhere never changes the result;
(c) last occurrence wins;
(d) evaluation is deterministic.
"""

from __future__ import annotations

import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from glimmer.contract import parse_go_float, read_report
from glimmer.verdict import AttemptVerdict, Phase, Threshold, judge_attempt
from glimmer.verdict.thresholds import compare

EXAMPLES = settings(
    max_examples=10_000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

NAMES = st.sampled_from(["bw", "gpuTempC", "miscompares", "eccErrors", "xidEvents", "Bad_x"])
VALUES = st.one_of(
    st.integers(-5, 200).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(
        ["n/a", "N/A", "NaN", "-nan", "Inf", "", "abc", "1e400", "0x1p3", " 7 ", "1_0", "unknown"]
    ),
)
METRIC_LINE = st.tuples(NAMES, VALUES).map(lambda kv: f"{kv[0]}={kv[1]}")
NOISE_LINE = st.sampled_from(
    [
        "",
        "   ",
        "hello world",
        "=oops",
        "has space=1",
        "RUNNER_PASS",
        "RUNNER_FAIL: x",
        "A_SKIP: nope",
        "tab\tkey=3",
        "no equals",
    ]
)
THRESHOLD = st.builds(
    Threshold,
    metric=st.sampled_from(["bw", "gpuTempC", "miscompares", "eccErrors", "xidEvents"]),
    comparison=st.sampled_from(
        ["GreaterThanOrEqual", "LessThanOrEqual", "Equal", "NotEqual", "Bogus"]
    ),
    value=st.sampled_from(["0", "1", "50", "100", "-3.5", "NaN", "x", "1e3"]),
    applicability=st.sampled_from(["Required", "RequiredIfMeasurable", ""]),
)
EXIT = st.sampled_from([0, 0, 0, 1, 2, 3, 4, 137, -1])


def _last_values(lines: list[str]) -> dict[str, str]:
    seen: dict[str, str] = {}
    for line in lines:
        key, sep, value = line.partition("=")
        if sep and key in {"bw", "gpuTempC", "miscompares", "eccErrors", "xidEvents"}:
            seen[key] = value.strip()
    return seen


def _judge(lines: list[str], exit_code: int, thresholds: list[Threshold]) -> AttemptVerdict:
    report = read_report("\n".join(lines).encode(), kind="custom", exit_code=exit_code)
    return judge_attempt(report, kind="custom", thresholds=thresholds)


@EXAMPLES
@given(
    st.lists(st.one_of(METRIC_LINE, NOISE_LINE), max_size=12), EXIT, st.lists(THRESHOLD, max_size=5)
)
def test_property_a_passed_only_with_exit0_and_every_required_gate_satisfied(
    lines: list[str], exit_code: int, thresholds: list[Threshold]
) -> None:
    verdict = _judge(lines, exit_code, thresholds)
    if verdict.phase is not Phase.PASSED:
        return
    assert exit_code == 0
    last = _last_values(lines)
    for t in thresholds:
        printed = last.get(t.metric)
        if (
            t.applicability == "RequiredIfMeasurable"
            and printed is not None
            and printed.lower() == "n/a"
        ):
            continue
        assert printed is not None, t
        got, want = parse_go_float(printed), parse_go_float(t.value)
        assert got is not None and math.isfinite(got), t
        assert want is not None and math.isfinite(want), t
        assert compare(t.comparison, got, want), t


@EXAMPLES
@given(
    st.lists(METRIC_LINE, max_size=8),
    st.lists(NOISE_LINE.filter(lambda s: "_SKIP" not in s), max_size=6),
    st.randoms(use_true_random=False),
    EXIT,
    st.lists(THRESHOLD, max_size=4),
)
def test_property_b_non_metric_lines_never_change_the_result(
    metrics: list[str],
    noise: list[str],
    rnd: object,
    exit_code: int,
    thresholds: list[Threshold],
) -> None:
    import random

    assert isinstance(rnd, random.Random)
    mixed = list(metrics)
    for line in noise:
        mixed.insert(rnd.randint(0, len(mixed)), line)
    a, b = _judge(metrics, exit_code, thresholds), _judge(mixed, exit_code, thresholds)
    assert (a.phase, a.metrics, a.unmeasurable, a.violations, a.not_evaluated) == (
        b.phase,
        b.metrics,
        b.unmeasurable,
        b.violations,
        b.not_evaluated,
    )


@EXAMPLES
@given(st.lists(METRIC_LINE, min_size=1, max_size=12))
def test_property_c_last_occurrence_wins(lines: list[str]) -> None:
    report = read_report("\n".join(lines).encode(), kind="custom", exit_code=0)
    for name, value in _last_values(lines).items():
        if value.lower() == "n/a":
            assert name in report.unmeasurable and name not in report.metrics
        else:
            assert report.metrics[name] == value and name not in report.unmeasurable


@EXAMPLES
@given(
    st.lists(st.one_of(METRIC_LINE, NOISE_LINE), max_size=10), EXIT, st.lists(THRESHOLD, max_size=5)
)
def test_property_d_evaluation_is_deterministic(
    lines: list[str], exit_code: int, thresholds: list[Threshold]
) -> None:
    assert _judge(lines, exit_code, thresholds) == _judge(list(lines), exit_code, list(thresholds))


@settings(max_examples=2_000, deadline=None)
@given(st.binary(max_size=400), st.integers(-2, 300))
def test_property_arbitrary_bytes_never_crash_and_never_invent_metrics(
    data: bytes, exit_code: int
) -> None:
    report = read_report(data, kind="custom", exit_code=exit_code)
    text = data.decode("utf-8", "replace")
    for name, value in report.metrics.items():
        assert name in text and value in text
