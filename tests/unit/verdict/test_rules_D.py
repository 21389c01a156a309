"""Section D (attempt phase and roll-up), plus A10, A13, A14 and provenance."""

from __future__ import annotations

from dataclasses import replace

import pytest

from glimmer.verdict import (
    AttemptVerdict,
    Phase,
    Provenance,
    ResultClosedError,
    Termination,
    TestResultState,
    Trigger,
    apply_termination,
    count,
    fail_fast_stops,
    force_settle,
    record_attempt,
    run_phase,
    run_provenance,
)
from tests.unit.verdict.helpers import gte, judge

GATES = [gte("bw", "100")]
PASS = judge("bw=150\nOK\n", GATES)
SILICON_PASS = judge("bw=150\nprovenance=silicon\nOK\n", GATES)
FAIL = judge("bw=50\n", GATES)
ERROR = judge("boom\n", GATES, exit_code=3)
SKIP = judge("X_SKIP: not here\n", GATES, exit_code=2)


def test_D1_pass_goes_through_gates() -> None:
    assert PASS.phase is Phase.PASSED and PASS.gated
    assert FAIL.phase is Phase.FAILED and FAIL.violations


def test_D1_fail_skip_error_evaluate_no_gates() -> None:
    for verdict, phase in (
        (judge("bw=500\n", GATES, exit_code=1), Phase.FAILED),
        (SKIP, Phase.SKIPPED),
        (ERROR, Phase.ERROR),
    ):
        assert verdict.phase is phase
        assert not verdict.gated and not verdict.violations


def test_D1_unmeasurable_recorded_on_every_phase() -> None:
    for code, out in (
        (0, "x=n/a\nbw=200\n"),
        (1, "x=n/a\n"),
        (3, "x=n/a\n"),
        (2, "x=n/a\nA_SKIP:\n"),
    ):
        assert judge(out, GATES, exit_code=code).unmeasurable == ("x",)


def test_D1_segment_attempt_has_no_gates() -> None:
    v = judge("bw=1\n", GATES, gate=False)
    assert v.phase is Phase.PASSED and not v.violations


def test_A3_undeclared_skip_message_explains() -> None:
    v = judge("fatal error: all goroutines are asleep\n", GATES, exit_code=2)
    assert v.phase is Phase.ERROR and v.undeclared_skip
    assert "without declaring a skip" in v.message
    assert "all goroutines are asleep" in v.message


def test_A10_empty_harvest_is_error_only_with_thresholds() -> None:
    v = judge("RUNNER_PASS\n", GATES)
    assert v.phase is Phase.ERROR and v.empty_harvest
    assert "measured nothing" in v.message and "[RUNNER_PASS]" in v.message
    assert judge("RUNNER_PASS\n", []).phase is Phase.PASSED


def test_A10_not_applied_to_exit1_or_declared_skip() -> None:
    assert judge("", GATES, exit_code=1).phase is Phase.FAILED
    assert judge("A_SKIP: x\n", GATES, exit_code=2).phase is Phase.SKIPPED


def test_A10_some_metrics_but_gated_one_missing_fails_closed() -> None:
    v = judge("other=1\n", GATES)
    assert v.phase is Phase.FAILED
    assert v.violations[0].kind == "NotReported"


def test_A13_logs_unavailable_with_absent_gated_metric_is_error() -> None:
    v = judge("other=1\n", GATES, logs_unavailable=True)
    assert v.phase is Phase.ERROR and "logs unavailable" in v.message
    assert judge("bw=5\n", GATES, logs_unavailable=True).phase is Phase.FAILED


def test_A14_deadline_exceeded_is_error_and_replaces_message() -> None:
    v = apply_termination(
        PASS,
        Termination(exit_code=0, reason="DeadlineExceeded", deadline_exceeded=True),
        runner_line="OK",
    )
    assert v.phase is Phase.ERROR
    assert "deadline" in v.message and "OK" not in v.message


def test_A14_kubelet_account_when_runner_printed_nothing() -> None:
    silent = judge("", GATES, exit_code=137)
    v = apply_termination(
        silent,
        Termination(exit_code=137, reason="OOMKilled", detail="  killed \n  by  kernel "),
        runner_line="",
    )
    assert (
        v.message == 'runner terminated abnormally (exit 137, reason "OOMKilled"): killed by kernel'
    )


def test_A14_account_appended_only_outside_0_to_3() -> None:
    crashed = judge("partial output\n", GATES, exit_code=139)
    v = apply_termination(
        crashed, Termination(exit_code=139, reason="Error"), runner_line="partial output"
    )
    assert v.message.endswith('[runner terminated abnormally (exit 139, reason "Error")]')
    chosen = judge("RUNNER_ERROR: no device\n", GATES, exit_code=3)
    kept = apply_termination(
        chosen, Termination(exit_code=3, reason="Error"), runner_line="RUNNER_ERROR: no device"
    )
    assert kept.message == "RUNNER_ERROR: no device"


def test_A14_detail_clamped_to_512_bytes() -> None:
    silent = judge("", GATES, exit_code=-1)
    v = apply_termination(
        silent, Termination(exit_code=-1, reason="x", detail="é" * 1000), runner_line=""
    )
    detail = v.message.split(": ", 1)[1]
    assert len(detail.encode()) <= 512


def open_result(repeats: int = 1) -> TestResultState:
    return TestResultState(name="t", kind="custom", repeats_required=repeats)


def test_D2_repeats_are_an_and() -> None:
    r = record_attempt(open_result(3), PASS, retry_on_error_limit=0)
    r = record_attempt(r, PASS, retry_on_error_limit=0)
    assert r.open and r.repeats_completed == 2
    assert r.next_trigger() is Trigger.REPEAT
    r = record_attempt(r, PASS, retry_on_error_limit=0)
    assert r.phase is Phase.PASSED and r.repeats_completed == 3


def test_D2_first_failed_attempt_settles_failed() -> None:
    r = record_attempt(open_result(3), PASS, retry_on_error_limit=5)
    r = record_attempt(r, FAIL, retry_on_error_limit=5)
    assert r.phase is Phase.FAILED
    assert r.metrics == {"bw": "50"}
    with pytest.raises(ResultClosedError):
        record_attempt(r, PASS, retry_on_error_limit=5)


def test_D3_error_retried_within_budget_then_settles() -> None:
    r = record_attempt(open_result(), ERROR, retry_on_error_limit=2)
    assert r.open and r.error_retries == 1 and r.next_trigger() is Trigger.ERROR_RETRY
    assert r.retry_trigger == ERROR.message
    r = record_attempt(r, ERROR, retry_on_error_limit=2)
    assert r.open and r.error_retries == 2
    r = record_attempt(r, ERROR, retry_on_error_limit=2)
    assert r.phase is Phase.ERROR


def test_D3_error_consumes_no_repeat_and_retry_then_pass_clears_violations() -> None:
    r = record_attempt(open_result(1), ERROR, retry_on_error_limit=1)
    assert r.repeats_completed == 0
    r = record_attempt(r, PASS, retry_on_error_limit=1)
    assert r.phase is Phase.PASSED and r.violations == ()
    assert [a.trigger for a in r.attempts] == [Trigger.INITIAL, Trigger.ERROR_RETRY]


@pytest.mark.parametrize("verdict", [FAIL, SKIP], ids=["failed", "skipped"])
def test_D3_failed_and_skipped_are_never_retried(verdict: AttemptVerdict) -> None:
    r = record_attempt(open_result(), verdict, retry_on_error_limit=10)
    assert not r.open and r.error_retries == 0


def test_D4_settling_writes_everything_together() -> None:
    r = record_attempt(open_result(), FAIL, retry_on_error_limit=0)
    assert (r.phase, r.message, r.metrics, r.violations) == (
        Phase.FAILED,
        FAIL.message,
        FAIL.metrics,
        FAIL.violations,
    )


def test_D5_counters_never_fold_error_or_skip_into_failed() -> None:
    settled = [
        replace(open_result(), phase=p)
        for p in (
            Phase.PASSED,
            Phase.FAILED,
            Phase.ERROR,
            Phase.ERROR,
            Phase.SKIPPED,
            Phase.CANCELLED,
            Phase.RUNNING,
        )
    ]
    c = count(settled)
    assert (c.passed, c.failed, c.errored, c.skipped) == (1, 1, 2, 1)


def result(phase: Phase, *, required: bool = True, kind: str = "custom") -> TestResultState:
    return replace(open_result(), phase=phase, required=required, kind=kind)


def test_D6_run_phase() -> None:
    assert run_phase([result(Phase.PASSED), result(Phase.SKIPPED)]) is Phase.PASSED
    assert run_phase([result(Phase.PASSED), result(Phase.ERROR)]) is Phase.ERROR
    assert run_phase([result(Phase.ERROR), result(Phase.FAILED)]) is Phase.FAILED
    assert run_phase([result(Phase.FAILED, required=False)]) is Phase.PASSED
    assert run_phase([result(Phase.ERROR, required=False, kind="")]) is Phase.ERROR
    assert run_phase([result(Phase.SKIPPED)]) is Phase.PASSED


def test_D7_fail_fast_only_on_required_failed() -> None:
    assert fail_fast_stops([result(Phase.FAILED)])
    assert not fail_fast_stops([result(Phase.FAILED, required=False), result(Phase.ERROR)])


def test_force_settle_for_terminate_and_cancel() -> None:
    r = force_settle(open_result(), phase=Phase.CANCELLED, message="run cancelled: x")
    assert r.phase is Phase.CANCELLED
    assert force_settle(result(Phase.PASSED), phase=Phase.ERROR, message="m").phase is Phase.PASSED


def test_provenance_sim_pass_of_hardware_kind_is_suspect() -> None:
    v = judge("bw=150\nprovenance=sim\n", GATES, kind="memory-bw")
    assert v.provenance is Provenance.SIM and v.suspect
    assert not judge("bw=150\nprovenance=sim\n", GATES, kind="memory-stress").suspect
    assert not judge("bw=50\nprovenance=sim\n", GATES, kind="memory-bw").suspect


def test_provenance_dispatcher_sim_wins_over_runner_silicon() -> None:
    v = judge(
        "bw=150\nprovenance=silicon\n",
        GATES,
        kind="memory-bw",
        dispatcher_provenance=Provenance.SIM,
    )
    assert v.provenance is Provenance.SIM and v.suspect


def test_provenance_unknown_value_cannot_vouch_for_silicon() -> None:
    assert judge("bw=150\nprovenance=emulated\n", GATES).provenance is Provenance.UNKNOWN
    assert judge("bw=150\nprovenance=silicon\n", GATES).provenance is Provenance.SILICON


def test_run_with_any_sim_result_never_certifies_silicon() -> None:
    sim = record_attempt(
        open_result(),
        judge("bw=150\nprovenance=sim\n", GATES, kind="memory-stress"),
        retry_on_error_limit=0,
    )
    real = record_attempt(open_result(), SILICON_PASS, retry_on_error_limit=0)
    assert run_provenance([real], phase=Phase.PASSED).certifies_silicon
    verdict = run_provenance([real, sim], phase=Phase.PASSED)
    assert verdict.provenance is Provenance.SIM and not verdict.certifies_silicon
