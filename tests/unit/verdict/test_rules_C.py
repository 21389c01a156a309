"""Section C: threshold evaluation and the linter."""

from __future__ import annotations

import pytest

from glimmer.verdict import (
    Cause,
    Phase,
    Severity,
    Threshold,
    ViolationKind,
    evaluate,
    lint_thresholds,
)
from tests.unit.verdict.helpers import eq, gte, judge, lte


def kinds(thresholds: list[Threshold], metrics: dict[str, str], na: set[str]) -> list[str]:
    return [v.kind for v in evaluate(thresholds, metrics, na).violations]


def test_C1_every_threshold_is_evaluated_in_spec_order() -> None:
    result = evaluate([gte("a", "5"), gte("b", "5"), gte("c", "5")], {"a": "1", "c": "1"}, set())
    assert [(v.index, v.metric) for v in result.violations] == [(0, "a"), (1, "b"), (2, "c")]


def test_C1_row1_contradictory() -> None:
    assert kinds([gte("a", "1")], {"a": "5"}, {"a"}) == [ViolationKind.CONTRADICTORY]


def test_C1_row2_unmeasurable_required_if_measurable_is_not_evaluated() -> None:
    result = evaluate([gte("a", "1", "RequiredIfMeasurable")], {}, {"a"})
    assert result.passed
    assert [(n.metric, n.reason) for n in result.not_evaluated] == [
        ("a", "unmeasurable on this hardware")
    ]


def test_C1_row3_unmeasurable_required() -> None:
    assert kinds([gte("a", "1")], {}, {"a"}) == [ViolationKind.UNMEASURABLE_REQUIRED]


@pytest.mark.parametrize("applicability", ["Required", "", "Bogus", "RequiredIfMeasurable"])
def test_C1_row4_absent_metric_is_not_reported_whatever_the_applicability(
    applicability: str,
) -> None:
    assert kinds([gte("a", "1", applicability)], {}, set()) == [ViolationKind.NOT_REPORTED]


@pytest.mark.parametrize("value", ["abc", "", "1,5", " 5", "1e400", "-nan", "5%"])
def test_C1_row5_non_numeric(value: str) -> None:
    assert kinds([gte("a", "1")], {"a": value}, set()) == [ViolationKind.NON_NUMERIC]


@pytest.mark.parametrize("value", ["NaN", "nan", "Inf", "-Inf", "+infinity"])
def test_C1_row6_non_finite(value: str) -> None:
    assert kinds([gte("a", "1")], {"a": value}, set()) == [ViolationKind.NON_FINITE]


def test_C1_nan_never_satisfies_not_equal() -> None:
    assert kinds([Threshold("a", "NotEqual", "0")], {"a": "NaN"}, set()) == [
        ViolationKind.NON_FINITE
    ]


def test_C1_row7_threshold_value_problems_are_authoring() -> None:
    result = evaluate([gte("a", "x"), gte("b", "NaN")], {"a": "1", "b": "1"}, set())
    assert [(v.kind, v.cause) for v in result.violations] == [
        (ViolationKind.THRESHOLD_VALUE_NON_NUMERIC, Cause.AUTHORING),
        (ViolationKind.THRESHOLD_VALUE_NON_FINITE, Cause.AUTHORING),
    ]


def test_C1_metric_checks_precede_threshold_value_checks() -> None:
    assert kinds([gte("a", "x")], {}, set()) == [ViolationKind.NOT_REPORTED]


@pytest.mark.parametrize(
    ("comparison", "got", "want", "ok"),
    [
        ("GreaterThanOrEqual", "90", "90", True),
        ("GreaterThanOrEqual", "89.999999", "90", False),
        ("LessThanOrEqual", "0", "0", True),
        ("LessThanOrEqual", "0.1", "0", False),
        ("Equal", "0", "0", True),
        ("Equal", "0.1", "0", False),
        ("Equal", "0.30000000000000004", "0.3", False),
        ("NotEqual", "1", "0", True),
        ("NotEqual", "0", "0", False),
        ("Bogus", "1", "0", False),
    ],
)
def test_C1_row8_exact_comparison(comparison: str, got: str, want: str, ok: bool) -> None:
    result = evaluate([Threshold("a", comparison, want)], {"a": got}, set())
    assert result.passed is ok
    if not ok:
        assert result.violations[0].kind is ViolationKind.UNSATISFIED
        assert result.violations[0].cause is Cause.MEASUREMENT


def test_C2_message_is_first_violation_and_uses_go_g() -> None:
    v = judge(
        "sustainedClockPct=83.22\nbw=1234567\n", [gte("sustainedClockPct", "90"), gte("bw", "2e6")]
    )
    assert v.phase is Phase.FAILED
    assert v.message.startswith("sustainedClockPct: got 83.22, need GreaterThanOrEqual 90")
    assert v.violations[1].reason == "bw: got 1.234567e+06, need GreaterThanOrEqual 2e+06"


def test_C2_not_evaluated_on_failure_keeps_only_those_before_the_first_violation() -> None:
    result = evaluate(
        [
            gte("a", "1", "RequiredIfMeasurable"),
            gte("b", "5"),
            gte("c", "1", "RequiredIfMeasurable"),
        ],
        {"b": "1"},
        {"a", "c"},
    )
    assert [n.metric for n in result.not_evaluated] == ["a"]
    passed = evaluate(
        [gte("a", "1", "RequiredIfMeasurable"), gte("c", "1", "RequiredIfMeasurable")],
        {},
        {"a", "c"},
    )
    assert [n.metric for n in passed.not_evaluated] == ["a", "c"]


def test_C3_failed_message_composition() -> None:
    thresholds = [
        gte("a", "5"),
        gte("b", "5"),
        gte("c", "x"),
        gte("d", "5"),
        gte("e", "5"),
        gte("f", "5"),
        gte("g", "5"),
    ]
    out = "a=1\nb=1\nc=1\nd=1\ne=1\nf=1\nG=1\nRUNNER_FAIL: low\n"
    v = judge(out, thresholds)
    assert v.message == (
        "a: got 1, need GreaterThanOrEqual 5 [RUNNER_FAIL: low] "
        "[and 6 more gates failed: b (hardware), c (profile error), d (hardware), "
        "e (hardware), and 2 more] [1 invalid metric name(s) ignored: G]"
    )


def test_C3_passed_message_runner_line_then_not_evaluated() -> None:
    v = judge("a=9\nb=n/a\nALL_GOOD\n", [gte("a", "5"), gte("b", "1", "RequiredIfMeasurable")])
    assert v.phase is Phase.PASSED
    assert v.message == "ALL_GOOD [not evaluated: b is unmeasurable on this hardware]"


def test_C3_not_reported_cause_reads_not_measured() -> None:
    v = judge("a=1\n", [gte("a", "5"), gte("z", "1")])
    assert "[and 1 more gate failed: z (not measured)]" in v.message


def test_C3_runner_fail_carries_no_violations() -> None:
    v = judge("a=100\nRUNNER_FAIL: measured short\n", [gte("a", "5")], exit_code=1)
    assert v.phase is Phase.FAILED
    assert v.violations == ()
    assert v.message == "RUNNER_FAIL: measured short"


def test_A7_invalid_note_names_at_most_eight() -> None:
    out = "".join(f"Bad{i}=1\n" for i in range(10)) + "ok=1\n"
    v = judge(out, [])
    assert v.message.endswith(
        "[10 invalid metric name(s) ignored: Bad0, Bad1, Bad2, Bad3, Bad4, Bad5, Bad6, Bad7, "
        "and 2 more]"
    )


def findings(kind: str, *thresholds: Threshold) -> list[tuple[int, str, str]]:
    return [(f.index, f.metric, f.severity) for f in lint_thresholds(kind, list(thresholds))]


def test_C4_malformed_name_value_comparison() -> None:
    assert findings("custom", gte("gpu_temp", "1")) == [(0, "gpu_temp", Severity.MALFORMED)]
    assert findings("custom", gte("a", "ninety")) == [(0, "a", Severity.MALFORMED)]
    assert findings("custom", gte("a", "NaN")) == [(0, "a", Severity.MALFORMED)]
    assert findings("custom", Threshold("a", "Above", "1")) == [(0, "a", Severity.MALFORMED)]


def test_C4_exact_compare_on_unit_is_unsound() -> None:
    assert findings("clockprobe", eq("sustainedClockPct", "83.22")) == [
        (0, "sustainedClockPct", Severity.UNSOUND)
    ]


def test_C4_exact_compare_non_integer_on_dimensionless_is_unsound() -> None:
    assert findings("custom", eq("ratio", "0.5")) == [(0, "ratio", Severity.UNSOUND)]
    assert findings("custom", eq("ratio", "1")) == []
    assert findings("gpu-burn", eq("miscompares", "0")) == []


def test_C4_unregistered_only_for_builtin_kinds() -> None:
    assert findings("gpu-burn", gte("madeUp", "1")) == [(0, "madeUp", Severity.UNSOUND)]
    assert findings("custom", gte("madeUp", "1")) == []
    assert findings("my-own-kind", gte("madeUp", "1")) == []


def test_C4_spread_must_be_required_if_measurable() -> None:
    assert findings("clockprobe", lte("sustainedClockSpreadPct", "5")) == [
        (0, "sustainedClockSpreadPct", Severity.UNSOUND)
    ]
    assert findings("clockprobe", lte("sustainedClockSpreadPct", "5", "RequiredIfMeasurable")) == []


def test_C4_evidence_metric_is_unsound_and_uses_description() -> None:
    (finding,) = lint_thresholds("clockprobe", [gte("ratedBoostClockMHz", "1900")])
    assert finding.severity is Severity.UNSOUND
    assert "rated boost clock" in finding.reason


def test_C4_all_findings_in_order() -> None:
    result = findings(
        "clockprobe",
        Threshold("ratedBoostClockMHz", "Equal", "x"),
        Threshold("Bad_Name", "Foo", "NaN"),
    )
    assert result == [
        (0, "ratedBoostClockMHz", Severity.MALFORMED),
        (0, "ratedBoostClockMHz", Severity.UNSOUND),
        (0, "ratedBoostClockMHz", Severity.UNSOUND),
        (1, "Bad_Name", Severity.MALFORMED),
        (1, "Bad_Name", Severity.MALFORMED),
        (1, "Bad_Name", Severity.MALFORMED),
    ]
    reasons = [
        f.reason
        for f in lint_thresholds("clockprobe", [Threshold("ratedBoostClockMHz", "Equal", "x")])
    ]
    assert "not a number" in reasons[0]
    assert "unit" in reasons[1]
    assert "evidence" in reasons[2]


def test_C6_no_epsilon() -> None:
    assert not evaluate([eq("eccErrors", "0")], {"eccErrors": "1e-300"}, set()).passed
