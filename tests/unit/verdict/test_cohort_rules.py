"""Cohort-relative gates (C7-C10): the pure rule and its properties."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glimmer.verdict import Cause, Phase, TestResultState, ViolationKind
from glimmer.verdict.cohort import (
    NO_FINGERPRINT_REASON,
    CohortSpecError,
    DeviationForm,
    Outcome,
    RelativeGate,
    apply_judgement,
    cohort_stats,
    judge_cohort,
    judge_run,
    member_value,
    relative_gate,
)

GTE = "GreaterThanOrEqual"
LTE = "LessThanOrEqual"


def sigma_gate(
    k: float = 4, *, comparison: str = GTE, floor: float = 0.0, size: int = 3
) -> RelativeGate:
    return RelativeGate(metric="tflops", comparison=comparison, form=DeviationForm.ROBUST_SIGMA,
                        amount=k, floor_percent=floor, min_cohort_size=size)  # fmt: skip


def percent_gate(p: float = 10, *, comparison: str = GTE, size: int = 3) -> RelativeGate:
    return RelativeGate(metric="tflops", comparison=comparison, form=DeviationForm.PERCENT,
                        amount=p, min_cohort_size=size)  # fmt: skip


def outcomes(judgement: object) -> dict[str, Outcome]:
    from glimmer.verdict.cohort import CohortJudgement

    assert isinstance(judgement, CohortJudgement)
    return {m.node: m.outcome for m in judgement.members}


FLEET = {"n0": 100.0, "n1": 101.0, "n2": 99.0, "n3": 88.0}


def test_C7_a_low_outlier_fails_a_higher_is_better_gate_and_a_high_one_does_not() -> None:
    low = judge_cohort(sigma_gate(), FLEET, fingerprint="d")
    assert outcomes(low) == {"n0": Outcome.WITHIN, "n1": Outcome.WITHIN, "n2": Outcome.WITHIN,
                             "n3": Outcome.OUTLIER}  # fmt: skip
    high = judge_cohort(sigma_gate(), {**FLEET, "n3": 112.0}, fingerprint="d")
    assert high.outliers == ()  # better than its cohort is never a failure


def test_C7_a_lower_is_better_gate_fails_the_high_outlier() -> None:
    judged = judge_cohort(sigma_gate(comparison=LTE), {**FLEET, "n3": 112.0}, fingerprint="d")
    assert judged.outliers == ("n3",)
    assert judge_cohort(sigma_gate(comparison=LTE), FLEET, fingerprint="d").outliers == ()


@pytest.mark.parametrize("comparison", ["Equal", "NotEqual", "Sideways"])
def test_C7_a_gate_without_a_bad_side_is_refused_naming_the_fix(comparison: str) -> None:
    with pytest.raises(CohortSpecError, match="GreaterThanOrEqual"):
        relative_gate(metric="m", comparison=comparison,
                      relative_to={"maxDeviation": {"robustSigma": "4"}})  # fmt: skip


@pytest.mark.parametrize(
    ("relative_to", "match"),
    [
        ({"cohort": "rack", "maxDeviation": {"robustSigma": "4"}}, "cohort"),
        ({}, "maxDeviation is required"),
        ({"maxDeviation": {}}, "exactly one"),
        ({"maxDeviation": {"robustSigma": "4", "percent": "10"}}, "exactly one"),
        ({"maxDeviation": {"robustSigma": "NaN"}}, "finite"),
        ({"maxDeviation": {"percent": "-1"}}, "below"),
        ({"maxDeviation": {"percent": "5", "floorPercent": "Inf"}}, "finite"),
        ({"maxDeviation": {"percent": "5"}, "minCohortSize": 2}, "at least 3"),
        ({"maxDeviation": {"percent": "5"}, "minCohortSize": True}, "at least 3"),
    ],
)
def test_C8_a_relative_to_that_cannot_be_judged_is_refused(
    relative_to: dict[str, object], match: str
) -> None:
    with pytest.raises(CohortSpecError, match=match):
        relative_gate(metric="m", comparison=GTE, relative_to=relative_to)


def test_C8_the_wire_form_reads_as_written() -> None:
    gate = relative_gate(metric="m", comparison=LTE, relative_to={
        "cohort": "fingerprint", "maxDeviation": {"robustSigma": "3.5", "floorPercent": "1"},
        "minCohortSize": 5})  # fmt: skip
    assert gate == RelativeGate(metric="m", comparison=LTE, form=DeviationForm.ROBUST_SIGMA,
                                amount=3.5, floor_percent=1.0, min_cohort_size=5)  # fmt: skip


def test_C8_robust_sigma_is_1_4826_mad_around_the_median() -> None:
    stats = cohort_stats(sigma_gate(4), [100.0, 101.0, 99.0, 88.0])
    assert stats.median == 99.5
    assert stats.mad == 1.0  # |devs| = 0.5, 1.5, 0.5, 11.5 -> median 1.0
    assert stats.allowed == 4 * 1.4826 * 1.0


def test_C8_percent_is_a_share_of_the_median() -> None:
    judged = judge_cohort(percent_gate(10), FLEET, fingerprint="d")
    assert judged.stats is not None and judged.stats.allowed == pytest.approx(9.95)
    assert judged.outliers == ("n3",)  # 11.5 below 99.5 is more than 9.95
    assert judge_cohort(percent_gate(12), FLEET, fingerprint="d").outliers == ()


def test_C8_mad_zero_an_identical_cohort_never_fails() -> None:
    judged = judge_cohort(sigma_gate(), dict.fromkeys(("a", "b", "c", "d"), 42.0), fingerprint="d")
    assert judged.stats is not None and judged.stats.mad == 0.0 and judged.stats.allowed == 0.0
    assert judged.outliers == ()


def test_C8_mad_zero_a_real_outlier_fails_without_dividing_by_zero() -> None:
    judged = judge_cohort(sigma_gate(), {"a": 42.0, "b": 42.0, "c": 42.0, "d": 30.0},
                          fingerprint="d")  # fmt: skip
    assert judged.outliers == ("d",)
    reason = next(m.reason for m in judged.members if m.node == "d")
    assert "MAD 0" in reason and "sigma" not in reason.split("allowed")[0]
    assert "nan" not in reason.lower() and "inf" not in reason.lower()


def test_C8_the_floor_gives_a_quantised_metric_its_slack() -> None:
    members = {"a": 42.0, "b": 42.0, "c": 42.0, "d": 41.0}
    assert judge_cohort(sigma_gate(), members, fingerprint="d").outliers == ("d",)
    assert judge_cohort(sigma_gate(floor=3), members, fingerprint="d").outliers == ()


def test_C8_the_violation_explains_itself() -> None:
    judged = judge_cohort(sigma_gate(), FLEET, fingerprint="d")
    reason = next(m.reason for m in judged.members if m.node == "n3")
    for part in ("got 88", "below the median 99.5", "cohort of 4", "MAD 1", "allowed 5.9304",
                 "4 robust sigma"):  # fmt: skip
        assert part in reason, part


def passed(value: str = "100") -> TestResultState:
    return TestResultState(name="t", kind="custom", phase=Phase.PASSED, metrics={"tflops": value})


def test_C9_an_outlier_pass_becomes_failed_with_a_cohort_violation() -> None:
    judged = judge_cohort(sigma_gate(), FLEET, fingerprint="d")
    member = next(m for m in judged.members if m.node == "n3")
    after = apply_judgement(passed("88"), member, gate=sigma_gate(), index=2)
    assert after.phase is Phase.FAILED
    (violation,) = after.violations
    assert (violation.index, violation.metric, violation.kind, violation.cause) == (
        2, "tflops", ViolationKind.COHORT_OUTLIER, Cause.MEASUREMENT)  # fmt: skip
    assert after.message == member.reason


@pytest.mark.parametrize("phase", [Phase.FAILED, Phase.ERROR, Phase.SKIPPED, Phase.RUNNING])
def test_C9_nothing_but_a_pass_is_ever_changed(phase: Phase) -> None:
    judged = judge_cohort(sigma_gate(), FLEET, fingerprint="d")
    for member in judged.members:
        state = replace(passed(), phase=phase)
        assert apply_judgement(state, member, gate=sigma_gate(), index=0) == state


def test_C10_below_min_cohort_size_nothing_is_evaluated_and_it_says_so() -> None:
    judged = judge_cohort(sigma_gate(size=5), FLEET, fingerprint="d")
    assert judged.stats is None and judged.outliers == ()
    assert {m.outcome for m in judged.members} == {Outcome.NOT_EVALUATED}
    assert "below minCohortSize 5" in judged.reason
    after = apply_judgement(passed("88"), judged.members[3], gate=sigma_gate(), index=0)
    assert after.phase is Phase.PASSED  # never passes anything: it was Passed already
    assert [n.reason for n in after.not_evaluated] == [judged.reason]


def test_C10_missing_and_non_finite_values_do_not_count_and_the_size_says_so() -> None:
    members: dict[str, float | None] = {**FLEET, "x": None, "y": math.nan, "z": math.inf}
    judged = judge_cohort(sigma_gate(), members, fingerprint="d")
    assert judged.stats is not None and judged.stats.size == 4 and judged.excluded == 3
    assert judged.outliers == ("n3",)
    assert {m.node for m in judged.members if m.outcome is Outcome.NOT_EVALUATED} == {
        "x", "y", "z"}  # fmt: skip


def test_C10_only_settled_measured_finite_results_contribute() -> None:
    assert member_value(passed("1.5"), "tflops") == 1.5
    assert member_value(replace(passed("1.5"), phase=Phase.FAILED), "tflops") == 1.5
    assert member_value(replace(passed("1.5"), phase=Phase.ERROR), "tflops") is None
    assert member_value(replace(passed("1.5"), phase=Phase.RUNNING), "tflops") is None
    assert member_value(passed("NaN"), "tflops") is None
    assert member_value(passed("fast"), "tflops") is None
    assert member_value(passed(), "other") is None
    assert member_value(None, "tflops") is None


def test_C10_a_node_without_a_fingerprint_digest_is_judged_by_nobody() -> None:
    values: dict[str, float | None] = {**FLEET, "lone": 10.0}
    digests: dict[str, str | None] = {**dict.fromkeys(FLEET, "d1"), "lone": None}
    first, orphans = judge_run(sigma_gate(), values, digests)
    assert first.fingerprint == "d1" and first.outliers == ("n3",)
    assert orphans.fingerprint == "" and orphans.reason == NO_FINGERPRINT_REASON
    assert [(m.node, m.outcome) for m in orphans.members] == [("lone", Outcome.NOT_EVALUATED)]


def test_C10_cohorts_are_per_fingerprint_digest() -> None:
    values: dict[str, float | None] = {"a1": 100.0, "a2": 100.0, "a3": 100.0,
                                       "b1": 50.0, "b2": 50.0, "b3": 50.0}  # fmt: skip
    digests: dict[str, str | None] = {n: n[0] for n in values}
    assert [j.outliers for j in judge_run(sigma_gate(), values, digests)] == [(), ()]


# --- properties -----------------------------------------------------------------------

values = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)
gates = st.one_of(
    st.builds(sigma_gate, st.floats(min_value=0, max_value=10), comparison=st.sampled_from(
        [GTE, LTE]), floor=st.floats(min_value=0, max_value=5)),
    st.builds(percent_gate, st.floats(min_value=0, max_value=50),
              comparison=st.sampled_from([GTE, LTE])),
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(gate=gates, cohort=st.lists(values, min_size=1, max_size=12), data=st.data())
def test_C7_C8_property_the_rule_is_order_independent(
    gate: RelativeGate, cohort: list[float], data: st.DataObject
) -> None:
    members = {f"n{i}": v for i, v in enumerate(cohort)}
    names = list(members)
    shuffled = data.draw(st.permutations(names))
    reordered = {name: members[name] for name in shuffled}
    assert judge_cohort(gate, members, fingerprint="d") == judge_cohort(
        gate, reordered, fingerprint="d"
    )


@settings(max_examples=300, deadline=None)
@given(gate=gates, cohort=st.lists(values, min_size=3, max_size=12))
def test_C8_property_never_nan_and_a_node_at_the_median_is_within(
    gate: RelativeGate, cohort: list[float]
) -> None:
    judged = judge_cohort(gate, {f"n{i}": v for i, v in enumerate(cohort)}, fingerprint="d")
    assert judged.stats is not None
    for number in (judged.stats.median, judged.stats.mad, judged.stats.allowed):
        assert math.isfinite(number)
    for member in judged.members:
        assert member.deviation is not None and math.isfinite(member.deviation)
        assert "nan" not in member.reason.lower()
        if member.value == judged.stats.median:
            assert member.outcome is Outcome.WITHIN


@settings(max_examples=300, deadline=None)
@given(gate=gates, cohort=st.lists(values, min_size=3, max_size=12), extra=st.integers(0, 4))
def test_C9_property_adding_healthy_nodes_at_the_median_never_clears_an_outlier(
    gate: RelativeGate, cohort: list[float], extra: int
) -> None:
    """Adding a healthy node (one reading the cohort's median: it moves neither the
    median nor, since it adds a zero deviation, the MAD upward) never turns an outlier
    into a Pass. (A healthy node *off* the median can widen the MAD: see
    docs/thresholds.md, "What a new neighbour can change".)"""
    members: dict[str, float | None] = {f"n{i}": v for i, v in enumerate(cohort)}
    before = judge_cohort(gate, members, fingerprint="d")
    assert before.stats is not None
    grown = dict(members)
    for i in range(extra):
        stats = judge_cohort(gate, grown, fingerprint="d").stats
        assert stats is not None
        grown[f"healthy{i}"] = stats.median
    after = judge_cohort(gate, grown, fingerprint="d")
    assert set(before.outliers) <= set(after.outliers)


@settings(max_examples=300, deadline=None)
@given(
    cohort=st.lists(st.integers(1, 10_000), min_size=3, max_size=12),
    added=st.lists(st.integers(0, 10_000), min_size=1, max_size=4),
    percent=st.integers(0, 99),
    comparison=st.sampled_from([GTE, LTE]),
)
def test_C9_property_percent_form_healthy_nodes_only_clear_an_outlier_by_moving_the_median(
    cohort: list[int], added: list[int], percent: int, comparison: str
) -> None:
    """The percent form: adding healthy nodes (on the good side of the median) never
    turns an outlier into a Pass unless the median moves past it, i.e. towards the
    outlier's side: a good-side node only moves the median away."""
    gate = percent_gate(percent, comparison=comparison)
    members: dict[str, float | None] = {f"n{i}": float(v) for i, v in enumerate(cohort)}
    before = judge_cohort(gate, members, fingerprint="d")
    assert before.stats is not None
    median = before.stats.median
    good = [v for v in added if (v >= median if comparison == GTE else v <= median)]
    grown = {**members, **{f"h{i}": float(v) for i, v in enumerate(good)}}
    after = judge_cohort(gate, grown, fingerprint="d")
    assert set(before.outliers) <= set(after.outliers)


@settings(max_examples=200, deadline=None)
@given(gate=gates, cohort=st.lists(values, min_size=0, max_size=12))
def test_C9_property_applying_a_judgement_only_ever_makes_a_pass_fail(
    gate: RelativeGate, cohort: list[float]
) -> None:
    judged = judge_cohort(gate, {f"n{i}": v for i, v in enumerate(cohort)}, fingerprint="d")
    for member in judged.members:
        for phase in Phase:
            state = TestResultState(name="t", kind="custom", phase=phase)
            after = apply_judgement(state, member, gate=gate, index=0)
            if phase is not Phase.PASSED:
                assert after == state
            else:
                assert after.phase in (Phase.PASSED, Phase.FAILED)
                assert (after.phase is Phase.FAILED) == (member.outcome is Outcome.OUTLIER)


# --- the linter (C5: a relativeTo that cannot be judged refuses the run) -------------


def test_C7_the_linter_refuses_relative_to_on_an_exact_gate_naming_field_and_fix() -> None:
    from glimmer.verdict import Severity, Threshold, lint_thresholds

    gate = Threshold(metric="tflops", comparison="Equal", value="1",
                     relative_to={"maxDeviation": {"robustSigma": "4"}})  # fmt: skip
    findings = [f for f in lint_thresholds("custom", [gate]) if "relativeTo" in f.reason]
    assert [f.severity for f in findings] == [Severity.MALFORMED]
    assert "use GreaterThanOrEqual" in findings[0].reason


def test_C7_the_linter_refuses_relative_to_outside_node_scope() -> None:
    from glimmer.verdict import Severity, Threshold, lint_thresholds

    gate = Threshold(metric="busBandwidthGBps", comparison=GTE, value="1",
                     relative_to={"maxDeviation": {"percent": "10"}})  # fmt: skip
    assert lint_thresholds("custom", [gate], scope="Node") == []
    (finding,) = lint_thresholds("custom", [gate], scope="Pair")
    assert finding.severity is Severity.MALFORMED and "needs scope Node" in finding.reason


def test_C8_the_linter_refuses_a_malformed_relative_to() -> None:
    from glimmer.verdict import Severity, Threshold, lint_thresholds

    gate = Threshold(metric="tflops", comparison=GTE, value="1",
                     relative_to={"maxDeviation": {"robustSigma": "1e999"}})  # fmt: skip
    (finding,) = lint_thresholds("custom", [gate])
    assert finding.severity is Severity.MALFORMED and "not a finite decimal" in finding.reason
    from glimmer.plan.gates import threshold_from_wire

    odd = threshold_from_wire({"metric": "tflops", "comparison": GTE, "value": "1",
                               "relativeTo": ["x"]})  # fmt: skip
    assert [f.severity for f in lint_thresholds("custom", [odd])] == [Severity.MALFORMED]


def test_C9_a_healthy_node_off_the_median_can_widen_a_zero_mad_band() -> None:
    """The limit docs/thresholds.md states ("What a new neighbour can change"): the MAD
    can grow when a node is added, so a healthy node *off* the median can clear an
    outlier without moving the median. The floor (or the percent form) is the fix."""
    before = {"o": 0.0, "a": 100.0, "b": 100.0, "c": 100.0, "d": 200.0}
    assert judge_cohort(sigma_gate(), before, fingerprint="d").outliers == ("o",)
    after = judge_cohort(sigma_gate(), {**before, "e": 200.0}, fingerprint="d")
    assert after.stats is not None and after.stats.median == 100.0  # the median stayed
    assert after.outliers == ()  # ... and the MAD went from 0 to 50
    grown = {**before, "e": 200.0}
    assert judge_cohort(percent_gate(10), grown, fingerprint="d").outliers == ("o",)


@settings(max_examples=300, deadline=None)
@given(gate=gates, cohort=st.lists(st.floats(allow_nan=False, allow_infinity=False),
                                   min_size=3, max_size=8))  # fmt: skip
def test_C8_property_extreme_values_never_give_nan_and_never_a_band_of_infinity(
    gate: RelativeGate, cohort: list[float]
) -> None:
    judged = judge_cohort(gate, {f"n{i}": v for i, v in enumerate(cohort)}, fingerprint="d")
    assert judged.stats is not None and math.isfinite(judged.stats.allowed)
    for member in judged.members:
        assert "nan" not in member.reason.lower(), member.reason


def test_C8_an_overflowing_band_is_no_band() -> None:
    huge = {"low": -1.7e308, "mid": 0.0, "high": 1.7e308}
    judged = judge_cohort(sigma_gate(), huge, fingerprint="d")
    assert judged.stats is not None and judged.stats.allowed == 0.0
    assert judged.outliers == ("low",)


def test_C8_an_overflowing_deviation_explains_itself_without_nan() -> None:
    # MAD 1.4e308: the robust sigma overflows, and so do the two low deviations.
    members = {"a": -1.7e308, "b": -1.7e308, "c": 0.3e308, "d": 1.7e308, "e": 1.7e308}
    judged = judge_cohort(sigma_gate(), members, fingerprint="d")
    assert judged.stats is not None and math.isinf(judged.stats.sigma)
    assert set(judged.outliers) == {"a", "b"}
    for member in judged.members:
        assert "nan" not in member.reason.lower(), member.reason


def test_C7_a_planned_pair_test_with_relative_to_is_malformed_so_the_run_is_refused() -> None:
    """C5 through the plan's one review: Malformed refuses the run at start."""
    from glimmer.plan import PlannedTest
    from glimmer.plan.gates import MALFORMED, lint_tests

    gate = {"metric": "busBandwidthGBps", "comparison": GTE, "value": "1",
            "relativeTo": {"maxDeviation": {"percent": "10"}}}  # fmt: skip
    pair = PlannedTest(name="p", required=True,
                       spec={"kind": "custom", "scope": "Pair", "thresholds": [gate]})  # fmt: skip
    node = PlannedTest(name="n", required=True,
                       spec={"kind": "custom", "scope": "Node", "thresholds": [gate]})  # fmt: skip
    findings = lint_tests([pair, node])
    assert [(f.test, f.severity) for f in findings] == [("p", MALFORMED)]
    assert "needs scope Node" in findings[0].reason
