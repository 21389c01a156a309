"""Verdict-integrity rules held by the verdict (I13-I16, I31), and its one attempt
constructor (I4)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from glimmer.contract import read_report
from glimmer.contract.report import MAX_LINE_BYTES
from glimmer.verdict import (
    MEASURED_CONDITION,
    REASON_MEASURED,
    REASON_NOTHING_MEASURED,
    AttemptRecord,
    AttemptVerdict,
    Phase,
    Provenance,
    Termination,
    TestResultState,
    Threshold,
    Trigger,
    apply_termination,
    attempt_record,
    judge_attempt,
    measured_condition,
    record_attempt,
    resolve_provenance,
    run_provenance,
    weakest,
)
from tests.unit.verdict.helpers import gte, judge, lte

GATES = [gte("bw", "100")]
OVERLONG = "output line exceeds the readable limit"


def judge_bytes(
    data: bytes, thresholds: list[Threshold], *, exit_code: int = 0, gate: bool = True
) -> AttemptVerdict:
    report = read_report(data, kind="custom", exit_code=exit_code)
    return judge_attempt(report, kind="custom", thresholds=thresholds, gate=gate)


# --- I13 ---------------------------------------------------------------------------


def test_I13_overlong_line_is_error_never_an_older_value() -> None:
    data = b"gpuTempC=50\ngpuTempC=99" + b" " * (1 << 20) + b"\n"
    verdict = judge_bytes(data, [lte("gpuTempC", "85")])
    assert verdict.phase is Phase.ERROR
    assert OVERLONG in verdict.message


def test_I13_a_normal_exit_never_replaces_the_unreadable_line_explanation() -> None:
    # In the cluster the kubelet's account of an ordinary exit 0 must not turn "output
    # line exceeds the readable limit" into "runner terminated abnormally".
    data = b"gpuTempC=50\ngpuTempC=99" + b" " * (1 << 20) + b"\n"
    verdict = judge_bytes(data, [lte("gpuTempC", "85")])
    folded = apply_termination(
        verdict, Termination(exit_code=0, reason="Completed"), runner_line=""
    )
    assert folded.phase is Phase.ERROR
    assert OVERLONG in folded.message and "abnormally" not in folded.message


def test_I13_overlong_line_is_error_without_thresholds_and_for_a_segment() -> None:
    data = b"x" * (MAX_LINE_BYTES + 1) + b"\nOK\n"
    assert judge_bytes(data, []).phase is Phase.ERROR
    assert judge_bytes(data, GATES, gate=False).phase is Phase.ERROR


def test_I13_overlong_line_comes_before_the_empty_harvest_rule() -> None:
    verdict = judge_bytes(b"y" * (MAX_LINE_BYTES + 1) + b"\n", GATES)
    assert verdict.phase is Phase.ERROR and OVERLONG in verdict.message
    assert not verdict.empty_harvest


def test_I13_runner_verdicts_by_exit_code_keep_their_phase_and_say_so() -> None:
    long = b"z" * (MAX_LINE_BYTES + 1) + b"\n"
    failed = judge_bytes(long + b"RUNNER_FAIL: low\n", GATES, exit_code=1)
    assert failed.phase is Phase.FAILED and OVERLONG in failed.message
    skipped = judge_bytes(long + b"X_SKIP: none\n", GATES, exit_code=2)
    assert skipped.phase is Phase.SKIPPED and OVERLONG in skipped.message


def test_I13_a_line_at_the_limit_still_judges() -> None:
    pad = b" " * (MAX_LINE_BYTES - len(b"bw=150"))
    assert judge_bytes(b"bw=150" + pad + b"\n", GATES).phase is Phase.PASSED


# --- I14 ---------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["memory-bw", "custom", "memory-stress", "no-such-kind"])
def test_I14_absent_declaration_is_unknown_never_silicon(kind: str) -> None:
    verdict = judge("bw=150\nOK\n", GATES, kind=kind)
    assert verdict.phase is Phase.PASSED
    assert verdict.provenance is Provenance.UNKNOWN


def test_I14_buried_sim_declaration_wins() -> None:
    output = "provenance=sim\n" + "noise line\n" * 5000 + "provenance=silicon\nbw=150\n"
    verdict = judge(output, GATES, kind="memory-bw")
    assert verdict.provenance is Provenance.SIM and verdict.suspect


@pytest.mark.parametrize("declared", [None, "sim", "silicon", "unknown", "garbage"])
def test_I14_dispatcher_sim_always_wins(declared: str | None) -> None:
    assert resolve_provenance(declared, dispatcher=Provenance.SIM) is Provenance.SIM


def test_I14_only_a_silicon_declaration_reads_silicon() -> None:
    assert resolve_provenance("silicon", dispatcher=None) is Provenance.SILICON
    assert resolve_provenance("silicon", dispatcher=Provenance.SILICON) is Provenance.SILICON
    assert resolve_provenance(None, dispatcher=Provenance.SILICON) is Provenance.UNKNOWN
    assert resolve_provenance("n/a", dispatcher=None) is Provenance.UNKNOWN
    assert resolve_provenance("silicon", dispatcher=Provenance.UNKNOWN) is Provenance.UNKNOWN


def test_I14_weakest_orders_sim_unknown_silicon() -> None:
    assert weakest([Provenance.SILICON, Provenance.UNKNOWN]) is Provenance.UNKNOWN
    assert weakest([Provenance.UNKNOWN, Provenance.SIM, Provenance.SILICON]) is Provenance.SIM
    assert weakest([]) is Provenance.UNKNOWN


# --- I15 ---------------------------------------------------------------------------

SILICON_PASS = judge("bw=150\nprovenance=silicon\n", GATES, kind="memory-bw")
SIM_ERROR = judge("provenance=sim\nboom\n", GATES, exit_code=3, kind="memory-bw")
UNKNOWN_ERROR = judge("boom\n", GATES, exit_code=3, kind="memory-bw")


def fresh(repeats: int = 1) -> TestResultState:
    return TestResultState(name="t", kind="memory-bw", repeats_required=repeats)


def test_I15_result_provenance_is_the_weakest_over_all_attempts() -> None:
    state = record_attempt(fresh(), SIM_ERROR, retry_on_error_limit=1)
    state = record_attempt(state, SILICON_PASS, retry_on_error_limit=1)
    assert state.phase is Phase.PASSED
    assert state.provenance is Provenance.SIM
    assert state.suspect  # a Pass the weakest attempt says was simulated
    assert not run_provenance([state], phase=Phase.PASSED).certifies_silicon


def test_I15_an_unknown_attempt_keeps_the_result_unknown() -> None:
    state = record_attempt(fresh(), UNKNOWN_ERROR, retry_on_error_limit=1)
    state = record_attempt(state, SILICON_PASS, retry_on_error_limit=1)
    assert state.provenance is Provenance.UNKNOWN


def test_I15_repeats_keep_the_weakest() -> None:
    sim_pass = judge("bw=150\nprovenance=sim\n", GATES, kind="memory-bw")
    state = record_attempt(fresh(repeats=2), sim_pass, retry_on_error_limit=0)
    assert state.open and state.provenance is Provenance.SIM
    state = record_attempt(state, SILICON_PASS, retry_on_error_limit=0)
    assert state.phase is Phase.PASSED and state.provenance is Provenance.SIM


def test_I15_a_recorded_weaker_result_provenance_is_never_lost() -> None:
    state = record_attempt(fresh(repeats=2), SILICON_PASS, retry_on_error_limit=0)
    state = replace(state, provenance=Provenance.SIM)  # e.g. read back with attempts elided
    state = record_attempt(state, SILICON_PASS, retry_on_error_limit=0)
    assert state.provenance is Provenance.SIM


def test_I15_all_silicon_attempts_read_silicon() -> None:
    state = record_attempt(fresh(), SILICON_PASS, retry_on_error_limit=0)
    assert state.provenance is Provenance.SILICON and not state.suspect


# --- I16 ---------------------------------------------------------------------------


def settled(
    phase: Phase, provenance: Provenance, *, required: bool = True, name: str = "t"
) -> TestResultState:
    return TestResultState(
        name=name, kind="memory-bw", required=required, phase=phase, provenance=provenance
    )


S = Provenance.SILICON


def test_I16_a_passed_silicon_run_certifies() -> None:
    origin = run_provenance([settled(Phase.PASSED, S)], phase=Phase.PASSED)
    assert origin.certifies_silicon and origin.measured
    assert origin.provenance is S


def test_I16_an_all_skipped_run_certifies_nothing_and_measured_nothing() -> None:
    results = [settled(Phase.SKIPPED, S), settled(Phase.SKIPPED, S, name="u")]
    origin = run_provenance(results, phase=Phase.PASSED)
    assert not origin.certifies_silicon and not origin.measured
    condition = measured_condition(origin)
    assert (condition.type, condition.status, condition.reason) == (
        MEASURED_CONDITION,
        "False",
        REASON_NOTHING_MEASURED,
    )


def test_I16_a_baseline_run_never_certifies() -> None:
    origin = run_provenance([settled(Phase.PASSED, S)], phase=Phase.PASSED, baseline=True)
    assert not origin.certifies_silicon and origin.measured


def test_I16_every_required_result_must_pass_on_silicon() -> None:
    for other in (
        settled(Phase.PASSED, Provenance.UNKNOWN, name="u"),
        settled(Phase.SKIPPED, S, name="u"),
        settled(Phase.PASSED, Provenance.SIM, name="u"),
    ):
        origin = run_provenance([settled(Phase.PASSED, S), other], phase=Phase.PASSED)
        assert not origin.certifies_silicon, other


def test_I16_only_a_passed_run_certifies() -> None:
    assert not run_provenance([settled(Phase.PASSED, S)], phase=Phase.ERROR).certifies_silicon


def test_I16_non_required_results_never_stand_in_for_a_measurement() -> None:
    results = [settled(Phase.SKIPPED, S), settled(Phase.PASSED, S, required=False, name="u")]
    origin = run_provenance(results, phase=Phase.PASSED)
    assert not origin.measured and not origin.certifies_silicon


def test_I16_a_failed_run_measured_something() -> None:
    origin = run_provenance([settled(Phase.FAILED, S)], phase=Phase.FAILED)
    assert origin.measured and not origin.certifies_silicon
    assert measured_condition(origin).reason == REASON_MEASURED


def test_I16_a_run_with_only_synthetic_results_is_unknown() -> None:
    synthetic = TestResultState(name="resolve", kind="", phase=Phase.ERROR)
    origin = run_provenance([synthetic], phase=Phase.ERROR)
    assert origin.provenance is Provenance.UNKNOWN and not origin.measured


# --- I31 --------------------------------------------------------------------------


def test_I31_more_gates_note_says_gate_or_gates() -> None:
    one = judge("a=1\nb=1\n", [gte("a", "5"), gte("b", "5")])
    assert "[and 1 more gate failed: b (hardware)]" in one.message
    two = judge("a=1\nb=1\nc=1\n", [gte("a", "5"), gte("b", "5"), gte("c", "5")])
    assert "[and 2 more gates failed: b (hardware), c (hardware)]" in two.message
    assert "gate(s)" not in one.message + two.message


# --- I4 one attempt constructor ------------------------------------------------------


def test_I4_attempt_record_says_what_the_verdict_said() -> None:
    record = attempt_record(
        SILICON_PASS,
        attempt=2,
        trigger=Trigger.REPEAT,
        node="n1",
        pod_name="p",
        started_at="2024-01-01T00:00:00Z",
        finished_at="2024-01-01T00:01:00Z",
    )
    assert (record.phase, record.exit_code, record.message) == (
        SILICON_PASS.phase,
        SILICON_PASS.exit_code,
        SILICON_PASS.message,
    )
    assert dict(record.metrics) == SILICON_PASS.metrics
    assert record.provenance is SILICON_PASS.provenance
    assert (record.node, record.pod_name, record.attempt) == ("n1", "p", 2)


def test_I4_record_attempt_builds_its_entry_with_the_one_constructor() -> None:
    state = record_attempt(fresh(), SILICON_PASS, retry_on_error_limit=0)
    assert state.attempts == (attempt_record(SILICON_PASS, attempt=1, trigger=Trigger.INITIAL),)


def test_I16_a_run_with_no_required_result_certifies_nothing() -> None:
    for results in ([], [settled(Phase.PASSED, S, required=False)]):
        origin = run_provenance(results, phase=Phase.PASSED)
        assert not origin.certifies_silicon and not origin.measured, results


def test_I14_what_the_dispatcher_synthesises_is_unknown_until_said_otherwise() -> None:
    synthesised = AttemptVerdict(
        phase=Phase.ERROR, message="pod refused", exit_code=0, metrics={}, unmeasurable=()
    )
    assert synthesised.provenance is Provenance.UNKNOWN
    assert attempt_record(synthesised, attempt=1, trigger=Trigger.INITIAL).provenance is (
        Provenance.UNKNOWN
    )
    assert TestResultState(name="t", kind="custom").provenance is Provenance.UNKNOWN
    bare = AttemptRecord(
        attempt=1, trigger=Trigger.INITIAL, phase=Phase.ERROR, exit_code=0, message="", metrics={}
    )
    assert bare.provenance is Provenance.UNKNOWN
