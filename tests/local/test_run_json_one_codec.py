"""``run.json`` speaks the status vocabulary through the one result codec (I4), never
claims silicon for what no runner said (I14), never certifies a baseline (I16), and
lists artifacts as printed (I31), once each (A12)."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from glimmer.contract import DropReason
from glimmer.local.dispatcher import LocalOptions, LocalResult, SilentReporter, run_plan
from glimmer.local.results import result_json, run_document
from glimmer.plan import PinnedPlan, build_plan
from glimmer.verdict import (
    AttemptVerdict,
    Cause,
    Phase,
    Provenance,
    TestResultState,
    Trigger,
    Violation,
    ViolationKind,
    attempt_record,
)
from glimmer.verdict.codec import MAX_MESSAGE_BYTES, result_from_json

BEGIN = "-----BEGIN BURNIN ARTIFACT {}-----"
END = "-----END BURNIN ARTIFACT-----"


def plan_of(**tests: Mapping[str, Any]) -> PinnedPlan:
    plan = build_plan(
        profile={"tests": [{"testRef": name} for name in tests]},
        tests={name: dict(spec) for name, spec in tests.items()},
        targets=["host"],
        max_concurrent_nodes=1,
    )
    assert isinstance(plan, PinnedPlan), plan
    return plan


def script_test(script: str, **spec: Any) -> dict[str, Any]:
    return {"kind": "custom", "runner": {"command": ["sh", "-c", script]}, **spec}


def run_local(plan: PinnedPlan, tmp_path: Path, **options: Any) -> list[LocalResult]:
    return run_plan(
        plan,
        options=LocalOptions(node="host", report_dir=tmp_path / "report", **options),
        reporter=SilentReporter(),
    ).results


def test_17_1_a_run_json_result_is_the_status_result_written_by_the_one_codec() -> None:
    """Empty violation reason omitted, message clamped, the deciding attempt's numbers
    stored once, and the whole result decodes back to the state (as the operator's)."""
    verdict = AttemptVerdict(
        phase=Phase.FAILED,
        message="m" * (MAX_MESSAGE_BYTES + 10),
        exit_code=0,
        metrics={"bw": "3"},
        unmeasurable=(),
        violations=(Violation(0, "bw", ViolationKind.UNSATISFIED, Cause.MEASUREMENT, ""),),
        provenance=Provenance.SILICON,
    )
    record = attempt_record(verdict, attempt=1, trigger=Trigger.INITIAL, node="host")
    state = TestResultState(
        name="t",
        kind="custom",
        phase=Phase.FAILED,
        attempts=(record,),
        message=verdict.message,
        metrics=verdict.metrics,
        violations=verdict.violations,
        provenance=Provenance.SILICON,
    )
    doc = result_json(LocalResult(state=state, scope="Node", node="host"))
    assert doc["violations"] == [
        {"index": 0, "metric": "bw", "cause": "Measurement", "kind": "Unsatisfied"}
    ]
    assert len(doc["message"].encode()) <= MAX_MESSAGE_BYTES
    assert doc["message"].endswith(f"[truncated, {MAX_MESSAGE_BYTES + 10} bytes]")
    (attempt,) = doc["attempts"]
    assert attempt["deciding"] is True and "metrics" not in attempt and "message" not in attempt
    assert "suspect" not in doc and "unmeasurable" not in doc and "notEvaluated" not in doc
    assert doc["required"] is True and doc["rawLogs"] == []  # run.json's own, additive
    back = result_from_json(doc, required=True)
    assert back.metrics == {"bw": "3"} and back.attempts[0].metrics == {"bw": "3"}
    assert back.violations == verdict.violations and back.phase is Phase.FAILED


def test_I14_an_attempt_glimmer_run_settles_without_a_runner_is_never_silicon(
    tmp_path: Path,
) -> None:
    """No local command for the image: nothing ran, nobody declared the hardware."""
    plan = plan_of(t={"kind": "custom", "runner": {"image": "example.com/x:1"}})
    (result,) = run_local(plan, tmp_path)
    assert result.state.phase is Phase.ERROR
    assert [a.provenance for a in result.state.attempts] == [Provenance.UNKNOWN]
    assert result.state.provenance is Provenance.UNKNOWN
    (sim,) = run_local(plan, tmp_path, sim="h200")
    assert sim.state.attempts[0].provenance is Provenance.SIM


def test_I16_a_baseline_run_json_never_certifies(tmp_path: Path) -> None:
    plan = plan_of(t=script_test("echo bw=1; echo provenance=silicon"))
    results = run_local(plan, tmp_path)
    common: dict[str, Any] = {"node": "host", "profile": "p", "sim": None, "started_at": 0.0,
                              "finished_at": 0.0}  # fmt: skip
    assert run_document(results, **common)["certifiesSilicon"] is True
    baseline = run_document(results, **common, baseline=True)
    assert baseline["phase"] == "Passed" and baseline["certifiesSilicon"] is False


#: Accepted and dropped fences interleaved, and the refs they make, in printed order.
INTERLEAVED_LINES = [
    BEGIN.format("a.json application/json"),
    "{}",
    END,
    BEGIN.format("onlyname"),  # dropped: malformed header
    "x",
    END,
    BEGIN.format("b.txt text/plain"),
    "hi",
    END,
    BEGIN.format("../x text/plain"),  # dropped: bad name
    "y",
    END,
    BEGIN.format("c.txt text/plain"),  # dropped: a nested BEGIN
    BEGIN.format("d.txt text/plain"),
    "z",
    END,
    "OK",
]
INTERLEAVED = "; ".join(f"echo '{line}'" for line in INTERLEAVED_LINES)
IN_ORDER = [
    ("a.json", ""),
    ("", str(DropReason.BAD_HEADER)),
    ("b.txt", ""),
    ("../x", str(DropReason.BAD_NAME)),
    ("c.txt", str(DropReason.NESTED)),
    ("d.txt", ""),
]


def test_I31_run_json_lists_artifacts_in_document_order(tmp_path: Path) -> None:
    (result,) = run_local(plan_of(t=script_test(INTERLEAVED)), tmp_path)
    refs = result_json(result)["artifacts"]
    assert [(r["name"], r.get("dropped", "")) for r in refs] == IN_ORDER
    for ref in refs:
        assert ("file" in ref) is ("dropped" not in ref)


def test_A12_a_repeated_artifact_name_is_listed_once_and_its_file_matches_its_digest(
    tmp_path: Path,
) -> None:
    """Two fences named alike in one attempt: one payload kept (the first), one ref, so
    the ref's digest is its file's (the operator keeps one ConfigMap key likewise)."""
    twice = "; ".join(
        f"echo '{line}'"
        for line in [BEGIN.format("a.txt text/plain"), "first", END,
                     BEGIN.format("a.txt text/plain"), "second", END, "OK"]
    )  # fmt: skip
    (result,) = run_local(plan_of(t=script_test(twice)), tmp_path)
    (ref,) = result_json(result)["artifacts"]
    payload = (tmp_path / "report" / ref["file"]).read_bytes()
    assert payload == b"first\n"
    assert ref["digest"] == "sha256:" + hashlib.sha256(payload).hexdigest()


def test_A12_a_drop_repeated_by_a_later_attempt_is_listed_once_stored_ones_per_attempt(
    tmp_path: Path,
) -> None:
    """Refs are de-duplicated by where the payload is kept (per attempt) or by name and
    drop reason, as the operator appends them (A12)."""
    both = "; ".join(
        f"echo '{line}'"
        for line in [BEGIN.format("../x text/plain"), "y", END,
                     BEGIN.format("a.txt text/plain"), "z", END, "OK"]
    )  # fmt: skip
    (result,) = run_local(plan_of(t=script_test(both, repeatCount=2)), tmp_path)
    refs = result_json(result)["artifacts"]
    assert [(r["name"], r.get("dropped", ""), r.get("file", "")) for r in refs] == [
        ("../x", str(DropReason.BAD_NAME), ""),
        ("a.txt", "", "artifacts/t.a1/a.txt"),
        ("a.txt", "", "artifacts/t.a2/a.txt"),
    ]
