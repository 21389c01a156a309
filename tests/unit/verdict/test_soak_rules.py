"""G2-G6: the soak fold, the aggregate's judgement, abortEarly, the attempt cap."""

from __future__ import annotations

import json

from glimmer.contract.numbers import format_go_plain
from glimmer.contract.registry import Aggregation
from glimmer.verdict import (
    AttemptVerdict,
    Phase,
    TestResultState,
    Threshold,
    Trigger,
    attempt_record,
)
from glimmer.verdict.codec import result_to_json
from glimmer.verdict.soak import (
    ATTEMPT_HISTORY_CAP,
    SoakProgress,
    cap_attempts,
    fold_metrics,
    fold_segment,
    fold_value,
    judge_aggregate,
    provable_violations,
    record_segment,
)
from glimmer.verdict.thresholds import ViolationKind
from tests.unit.verdict.helpers import eq, gte, lte


def window(phase: Phase, metrics: dict[str, str], *, message: str = "", exit_code: int = 0,
           unmeasurable: tuple[str, ...] = ()) -> AttemptVerdict:  # fmt: skip
    return AttemptVerdict(
        phase=phase, message=message, exit_code=exit_code, metrics=metrics,
        unmeasurable=unmeasurable,
    )  # fmt: skip


def soak(required: int = 6) -> tuple[TestResultState, SoakProgress]:
    return TestResultState(name="soak", kind="custom"), SoakProgress(
        required=required, segment_seconds=300
    )


def step(
    state: TestResultState,
    progress: SoakProgress,
    verdict: AttemptVerdict,
    *,
    thresholds: list[Threshold] | None = None,
    retries: int = 0,
    abort_early: bool = False,
) -> tuple[TestResultState, SoakProgress]:
    number = len(state.attempts) + progress.truncated + 1
    trigger = state.next_trigger(segmented=True)
    record = attempt_record(verdict, attempt=number, trigger=trigger)
    return record_segment(
        state, progress, verdict, thresholds=thresholds or [],
        retry_on_error_limit=retries, record=record, abort_early=abort_early,
    )  # fmt: skip


# --- G2: the fold ---------------------------------------------------------------------


def test_G2_sum_adds_and_is_rerendered_as_go_formatfloat() -> None:
    assert fold_value(Aggregation.SUM, None, "5.0") == "5"
    assert fold_value(Aggregation.SUM, "1e3", "2.50") == "1002.5"
    assert fold_value(Aggregation.SUM, "0.1", "0.2") == format_go_plain(0.1 + 0.2)
    assert fold_metrics({}, {"elapsedS": "3e2"}) == {"elapsedS": "300"}


def test_G2_min_max_keep_the_extreme_original_string() -> None:
    assert fold_value(Aggregation.MAX, "80.0", "81.50") == "81.50"
    assert fold_value(Aggregation.MAX, "80.0", "7.9e1") == "80.0"
    assert fold_value(Aggregation.MIN, "95.00", "9.4e1") == "9.4e1"
    assert fold_metrics({"gpuTempC": "80.0"}, {"gpuTempC": "79"}) == {"gpuTempC": "80.0"}


def test_G2_last_and_unregistered_take_the_newest() -> None:
    assert fold_metrics({"eccErrors": "3", "myThing": "a"}, {"eccErrors": "2", "myThing": "b"}) == {
        "eccErrors": "2",
        "myThing": "b",
    }


def test_G2_a_poisoned_reading_poisons_sum_min_max_stickily() -> None:
    agg: dict[str, str] = {}
    for reading in ("1", "NaN", "2", "3"):
        agg = fold_metrics(agg, {"xidEvents": reading, "gpuTempC": reading})
    assert agg == {"xidEvents": "NaN", "gpuTempC": "NaN"}
    assert fold_value(Aggregation.MIN, "garbage", "1") == "garbage"
    assert fold_value(Aggregation.MAX, "7", "+Inf") == "+Inf"
    assert fold_value(Aggregation.SUM, "7", "1e400") == "1e400"  # overflow: NonNumeric
    # ... and the gate on a poisoned key fails closed.
    progress = SoakProgress(required=1, segment_seconds=300, completed=1, aggregate=agg)
    verdict = judge_aggregate(progress, kind="custom", thresholds=[lte("xidEvents", "10")])
    assert verdict.phase is Phase.FAILED
    assert verdict.violations[0].kind is ViolationKind.NON_FINITE


def test_G2_last_is_never_poisoned_the_newest_reading_stands() -> None:
    assert fold_value(Aggregation.LAST, "NaN", "4") == "4"


def test_G2_unmeasurable_names_are_unioned_unless_the_fold_holds_them() -> None:
    progress = SoakProgress(required=3, segment_seconds=300)
    progress = fold_segment(progress, metrics={"a": "1"}, unmeasurable={"eccErrors"})
    progress = fold_segment(progress, metrics={"eccErrors": "0"}, unmeasurable={"spreadPct"})
    assert progress.unmeasurable == frozenset({"spreadPct"})
    assert progress.completed == 2


# --- G2/G3 through record_segment ----------------------------------------------------


def test_G2_a_clean_segment_folds_counts_and_says_segment_i_of_n() -> None:
    state, progress = soak(3)
    state, progress = step(state, progress, window(Phase.PASSED, {"elapsedS": "300"}))
    assert state.open and progress.completed == 1
    assert state.message == "segment 1/3 complete"
    assert state.metrics == {"elapsedS": "300"}
    assert state.next_trigger(segmented=True) is Trigger.SEGMENT


def test_G3_thresholds_run_once_on_the_aggregate_with_the_prefixed_message() -> None:
    state, progress = soak(3)
    gates = [gte("elapsedS", "900")]
    for _ in range(3):
        state, progress = step(state, progress, window(Phase.PASSED, {"elapsedS": "300"}),
                               thresholds=gates)  # fmt: skip
    assert state.phase is Phase.PASSED
    assert state.message.startswith("3 segment(s) of 300s completed")
    assert state.metrics == {"elapsedS": "900"}
    assert state.repeats_completed == state.repeats_required


def test_G3_the_aggregate_fails_its_gate_with_the_evaluators_message() -> None:
    state, progress = soak(2)
    gates = [lte("gpuTempC", "80")]
    state, progress = step(state, progress, window(Phase.PASSED, {"gpuTempC": "85"}),
                           thresholds=gates)  # fmt: skip
    assert state.open  # no gates per segment (D1)
    state, progress = step(state, progress, window(Phase.PASSED, {"gpuTempC": "70"}),
                           thresholds=gates)  # fmt: skip
    assert state.phase is Phase.FAILED
    assert state.message.startswith(
        "2 segment(s) of 300s completed: gpuTempC: got 85, need LessThanOrEqual 80"
    )


def test_G2_a_fail_settles_now_with_that_windows_metrics() -> None:
    state, progress = soak(6)
    state, progress = step(state, progress, window(Phase.PASSED, {"elapsedS": "300"}))
    state, progress = step(state, progress, window(Phase.FAILED, {"gpuTempC": "99"},
                                                   message="hot", exit_code=1))  # fmt: skip
    assert state.phase is Phase.FAILED
    assert state.metrics == {"gpuTempC": "99"}
    assert "segment 2/6" in state.message
    assert progress.aggregate == {"elapsedS": "300"}


def test_G2_a_declared_skip_settles_skipped() -> None:
    state, progress = soak(6)
    state, _ = step(state, progress, window(Phase.SKIPPED, {}, message="no device", exit_code=2))
    assert state.phase is Phase.SKIPPED


def test_G2_an_error_retries_the_same_segment_and_contributes_nothing() -> None:
    state, progress = soak(2)
    state, progress = step(state, progress, window(Phase.PASSED, {"elapsedS": "300"}))
    state, progress = step(
        state, progress, window(Phase.ERROR, {"elapsedS": "300"}, message="evicted"), retries=1
    )
    assert state.open and progress.completed == 1
    assert state.metrics == {"elapsedS": "300"}  # the aggregate, not the errored window
    assert state.next_trigger(segmented=True) is Trigger.ERROR_RETRY
    state, progress = step(state, progress, window(Phase.PASSED, {"elapsedS": "300"}), retries=1)
    assert state.phase is Phase.PASSED
    assert progress.aggregate == {"elapsedS": "600"}


def test_G3_an_error_past_the_budget_settles_error_keeping_the_aggregate() -> None:
    state, progress = soak(6)
    state, progress = step(state, progress, window(Phase.PASSED, {"elapsedS": "300"},
                                                   unmeasurable=("eccErrors",)))  # fmt: skip
    state, progress = step(state, progress, window(Phase.ERROR, {"x": "1"}, message="evicted"))
    assert state.phase is Phase.ERROR
    assert state.metrics == {"elapsedS": "300"}
    assert state.unmeasurable == ("eccErrors",)
    assert state.violations == ()
    assert state.message == "1 segment(s) of 300s completed: evicted"


def test_G3_an_empty_aggregate_with_gates_is_error_not_pass() -> None:
    state, progress = soak(1)
    state, _ = step(state, progress, window(Phase.PASSED, {}), thresholds=[lte("xidEvents", "0")])
    assert state.phase is Phase.ERROR


# --- G4: abortEarly ---------------------------------------------------------------------


def agg(**metrics: str) -> SoakProgress:
    return SoakProgress(required=6, segment_seconds=300, completed=2, aggregate=metrics)


def test_G4_provable_only_for_sum_lte_sum_eq_over_min_gte_max_lte() -> None:
    assert provable_violations(agg(xidEvents="1"), [lte("xidEvents", "0")])
    assert provable_violations(agg(xidEvents="3"), [eq("xidEvents", "2")])
    assert not provable_violations(agg(xidEvents="1"), [eq("xidEvents", "2")])  # may still reach
    assert not provable_violations(agg(xidEvents="1"), [gte("xidEvents", "2")])
    assert provable_violations(agg(sustainedClockPct="80"), [gte("sustainedClockPct", "90")])
    assert not provable_violations(agg(sustainedClockPct="95"), [lte("sustainedClockPct", "90")])
    assert provable_violations(agg(gpuTempC="95"), [lte("gpuTempC", "90")])
    assert not provable_violations(agg(gpuTempC="60"), [gte("gpuTempC", "70")])
    assert not provable_violations(agg(eccErrors="4"), [lte("eccErrors", "0")])  # Last
    assert not provable_violations(agg(myCount="4"), [lte("myCount", "0")])  # unregistered


def test_G4_a_metric_not_yet_reported_or_poisoned_never_aborts() -> None:
    assert not provable_violations(agg(), [lte("xidEvents", "0")])
    assert not provable_violations(agg(xidEvents="NaN"), [lte("xidEvents", "0")])


def test_G4_abort_early_settles_failed_with_only_the_provable_violations() -> None:
    state, progress = soak(6)
    gates = [gte("gpuTempC", "70"), lte("xidEvents", "0")]
    state, progress = step(state, progress, window(Phase.PASSED, {"gpuTempC": "60",
                           "xidEvents": "2"}), thresholds=gates, abort_early=True)  # fmt: skip
    assert state.phase is Phase.FAILED
    assert [v.metric for v in state.violations] == ["xidEvents"]
    assert "abortEarly" in state.message and state.message.startswith("1 segment(s) of 300s")


def test_G4_without_abort_early_the_soak_goes_on() -> None:
    state, progress = soak(6)
    state, _ = step(state, progress, window(Phase.PASSED, {"xidEvents": "2"}),
                    thresholds=[lte("xidEvents", "0")])  # fmt: skip
    assert state.open


# --- G5: the attempt-history cap ---------------------------------------------------------


def test_G5_cap_keeps_first_every_non_passed_and_the_16_most_recent_passed() -> None:
    state, progress = soak(300)
    for i in range(1, 40):
        verdict = window(Phase.ERROR if i == 5 else Phase.PASSED, {"elapsedS": "1"})
        state, progress = step(state, progress, verdict, retries=1)
    numbers = [a.attempt for a in state.attempts]
    assert numbers[0] == 1 and 5 in numbers
    assert numbers[-16:] == list(range(24, 40))
    assert len(numbers) == 1 + 1 + 16
    assert progress.truncated == 39 - 18
    assert progress.completed == 38


def test_G5_a_300_segment_soak_stays_under_the_status_size_bound() -> None:
    state, progress = soak(300)
    line = {"elapsedS": "300", "gpuTempC": "80.5", "xidEvents": "0", "sustainedClockPct": "97"}
    for _ in range(300):
        state, progress = step(state, progress, window(Phase.PASSED, line, message="ok" * 60))
    assert state.phase is Phase.PASSED
    assert len(state.attempts) <= ATTEMPT_HISTORY_CAP
    assert progress.truncated == 300 - ATTEMPT_HISTORY_CAP
    assert progress.aggregate["elapsedS"] == "90000"
    size = len(json.dumps(result_to_json(state)))
    assert size < 16 * 1024, size  # one result of a run that must fit in ~1 MiB


def test_G5_short_histories_are_untouched() -> None:
    state, progress = soak(10)
    for _ in range(10):
        state, progress = step(state, progress, window(Phase.PASSED, {"x": "1"}))
    assert [a.attempt for a in state.attempts] == list(range(1, 11))
    assert cap_attempts(state.attempts) == (state.attempts, 0)
