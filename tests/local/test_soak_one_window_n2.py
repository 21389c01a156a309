"""N2 + G2/G3: ``glimmer run`` runs a soak as one window and judges it through the same
``glimmer.verdict.soak`` functions as the operator's last segment."""

from __future__ import annotations

from pathlib import Path

import pytest

from glimmer.contract import read_report
from glimmer.local.dispatcher import judge_soak
from glimmer.plan import PlannedTest
from glimmer.plan.gates import threshold_from_wire
from glimmer.verdict import Phase, TestResultState, Trigger, attempt_record, judge_attempt
from glimmer.verdict.soak import SoakProgress, record_segment
from tests.local.test_glimmer_run import custom_profile, document, glimmer

THRESHOLDS: list[dict[str, str]] = [
    {"metric": "xidEvents", "comparison": "LessThanOrEqual", "value": "0"},
    {"metric": "elapsedS", "comparison": "GreaterThanOrEqual", "value": "900"},
]
SPEC = {
    "kind": "custom",
    "durationSeconds": 900,
    "soak": {"segmentSeconds": 900},
    "thresholds": THRESHOLDS,
}
TEST = PlannedTest(name="soak", required=True, spec=SPEC)
GATES = [threshold_from_wire(t) for t in THRESHOLDS]


@pytest.mark.parametrize(
    ("output", "exit_code"),
    [
        ("xidEvents=0\nelapsedS=9e2\nok\n", 0),
        ("xidEvents=2\nelapsedS=900\nok\n", 0),
        ("xidEvents=NaN\nelapsedS=900\n", 0),
        ("elapsedS=100\nCUSTOM_FAIL: hot\n", 1),
        ("", 0),
    ],
)
def test_N2_G3_a_local_soak_is_judged_as_the_operators_one_segment_soak(
    output: str, exit_code: int
) -> None:
    report = read_report(output.encode(), kind="custom", exit_code=exit_code)
    local = judge_soak(TEST, report, thresholds=GATES, provenance=None)
    window = judge_attempt(report, kind="custom", thresholds=GATES, gate=False)
    state, _ = record_segment(
        TestResultState(name="soak", kind="custom"),
        SoakProgress(required=1, segment_seconds=900),
        window,
        thresholds=GATES,
        retry_on_error_limit=0,
        record=attempt_record(window, attempt=1, trigger=Trigger.INITIAL),
    )
    assert (local.phase, local.metrics, local.violations) == (
        state.phase,
        dict(state.metrics),
        state.violations,
    )
    if local.phase is Phase.PASSED or local.violations:
        assert local.message == state.message
        assert local.message.startswith("1 segment(s) of 900s completed")


def test_N2_G2_a_local_soak_sum_is_rerendered_and_poison_fails_closed() -> None:
    clean = read_report(b"xidEvents=0\nelapsedS=9e2\n", kind="custom", exit_code=0)
    assert judge_soak(TEST, clean, thresholds=GATES, provenance=None).metrics["elapsedS"] == "900"
    poisoned = read_report(b"xidEvents=NaN\nelapsedS=900\n", kind="custom", exit_code=0)
    verdict = judge_soak(TEST, poisoned, thresholds=GATES, provenance=None)
    assert verdict.phase is Phase.FAILED


def test_N2_glimmer_run_judges_a_soak_as_one_window_through_the_soak_fold(
    tmp_path: Path,
) -> None:
    spec = {"durationSeconds": 900, "soak": {"segmentSeconds": 300}, "thresholds": THRESHOLDS}
    profile = custom_profile(tmp_path, "echo xidEvents=0; echo elapsedS=9e2; echo OK", **spec)
    proc = glimmer("run", str(profile), "--report-dir", str(tmp_path / "r"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [result] = document(tmp_path / "r")["results"]
    assert result["phase"] == "Passed"
    assert result["metrics"]["elapsedS"] == "900"  # the fold's Sum rendering (G2)
    assert result["message"].startswith("1 segment(s) of 900s completed")
    assert len(result["attempts"]) == 1  # one process for the whole soak (N2)
