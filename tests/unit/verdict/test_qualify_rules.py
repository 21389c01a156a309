"""Qualify on join, the pure rule (J6 batch, J7 untaint, J8 drift), with properties."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from glimmer.verdict.nodes import NodeState, NodeVerdict
from glimmer.verdict.qualify import (
    Candidate,
    KeepReason,
    drift_reason,
    plan_batch,
    qualify_decision,
    taint_index,
)
from glimmer.verdict.taints import Taint

T0 = datetime(2026, 3, 4, 12, 0, tzinfo=UTC)
TAINT = Taint(key="burnin.glimmer.ai/unqualified", value="", effect="NoSchedule")
PASSED = NodeVerdict("n1", NodeState.PASSED)


def decide(**kw: Any) -> Any:
    args: dict[str, Any] = {
        "taint": TAINT, "carries_taint": True, "verdict": PASSED, "from_trigger": True,
        "run": "lab/q-1",
    }  # fmt: skip
    args.update(kw)
    return qualify_decision("n1", **args)


# --- J7 ---------------------------------------------------------------------------------


def test_J7_a_certified_pass_of_the_triggers_run_removes_the_taint() -> None:
    decision = decide()
    assert decision.untaint and decision.reason is KeepReason.QUALIFIED
    assert "every required test Passed on silicon" in decision.message


@pytest.mark.parametrize(
    ("verdict", "reason", "says"),
    [
        (NodeVerdict("n1", NodeState.FAILED, failed=("dcgm",)), KeepReason.FAILED, "failed: dcgm"),
        (
            NodeVerdict("n1", NodeState.SIMULATED, weak=("burn",)),
            KeepReason.SIMULATED,
            "simulated GPU only",
        ),
        (
            NodeVerdict("n1", NodeState.NOT_JUDGED, unjudged=("burn",)),
            KeepReason.NOT_JUDGED,
            "unjudged (open, Skipped, Error or Cancelled): burn",
        ),
        (None, KeepReason.NO_VERDICT, "no result for this node"),
    ],
)
def test_J7_anything_but_a_certified_pass_keeps_the_taint_and_says_why(
    verdict: NodeVerdict | None, reason: KeepReason, says: str
) -> None:
    decision = decide(verdict=verdict)
    assert not decision.untaint
    assert decision.reason is reason
    assert says in decision.message and str(TAINT) in decision.message


def test_J7_a_pass_of_a_run_the_trigger_did_not_create_keeps_the_taint() -> None:
    decision = decide(from_trigger=False)
    assert (decision.untaint, decision.reason) == (False, KeepReason.NOT_OUR_RUN)


def test_J7_a_pass_on_a_node_whose_taint_changed_keeps_it() -> None:
    decision = decide(carries_taint=False)
    assert (decision.untaint, decision.reason) == (False, KeepReason.TAINT_CHANGED)


def test_J7_the_taint_matches_only_on_key_value_and_effect() -> None:
    taints = [
        {"key": TAINT.key, "effect": "NoExecute"},
        {"key": TAINT.key, "value": "x", "effect": "NoSchedule"},
        {"key": "other", "effect": "NoSchedule"},
    ]
    assert taint_index(taints, TAINT) is None
    assert taint_index([*taints, {"key": TAINT.key, "effect": "NoSchedule"}], TAINT) == 3
    assert TAINT.toleration() == {
        "key": TAINT.key, "operator": "Equal", "value": "", "effect": "NoSchedule",
    }  # fmt: skip


_states = st.sampled_from(list(NodeState))
_verdicts = st.one_of(st.none(), _states.map(lambda s: NodeVerdict("n1", s)))


@given(verdict=_verdicts, carries=st.booleans(), ours=st.booleans())
def test_J7_property_untaint_only_for_a_passed_verdict_of_our_run_with_our_taint(
    verdict: NodeVerdict | None, carries: bool, ours: bool
) -> None:
    decision = decide(verdict=verdict, carries_taint=carries, from_trigger=ours)
    expected = verdict is not None and verdict.state is NodeState.PASSED and carries and ours
    assert decision.untaint is expected
    assert decision.message  # every outcome says why


# --- J6 ---------------------------------------------------------------------------------


def cands(*names: str) -> list[Candidate]:
    return [Candidate(n, T0 + timedelta(seconds=i)) for i, n in enumerate(names)]


def test_J6_the_first_candidate_opens_the_window_and_it_closes_after_its_length() -> None:
    opened = plan_batch(cands("a"), opened_at=None, now=T0, window_seconds=30, limit=4, busy=False)
    assert (opened.opened_at, opened.batch, opened.due_at) == (T0, (), T0 + timedelta(seconds=30))
    later = plan_batch(
        cands("a", "b"), opened_at=T0, now=T0 + timedelta(seconds=29), window_seconds=30,
        limit=4, busy=False,
    )  # fmt: skip
    assert later.batch == ()
    closed = plan_batch(
        cands("a", "b", "c"), opened_at=T0, now=T0 + timedelta(seconds=30), window_seconds=30,
        limit=2, busy=False,
    )  # fmt: skip
    assert closed.batch == ("a", "b")  # oldest joiners first, up to maxConcurrentNodes


def test_J6_no_candidate_closes_the_window_and_a_busy_batch_waits() -> None:
    assert (
        plan_batch([], opened_at=T0, now=T0, window_seconds=0, limit=1, busy=False).opened_at
        is None
    )
    busy = plan_batch(
        cands("a"), opened_at=T0, now=T0 + timedelta(hours=1), window_seconds=0, limit=1, busy=True
    )
    assert busy.batch == () and busy.opened_at == T0


@given(
    names=st.lists(st.text("abcdef", min_size=1, max_size=3), unique=True, max_size=12),
    limit=st.integers(1, 6),
    seed=st.integers(0, 1000),
)
def test_J6_property_batch_is_bounded_order_independent_and_of_candidates(
    names: list[str], limit: int, seed: int
) -> None:
    pool = cands(*names)
    shuffled = list(pool)
    random.Random(seed).shuffle(shuffled)
    now = T0 + timedelta(minutes=5)
    one = plan_batch(pool, opened_at=T0, now=now, window_seconds=60, limit=limit, busy=False)
    two = plan_batch(shuffled, opened_at=T0, now=now, window_seconds=60, limit=limit, busy=False)
    assert one == two
    assert len(one.batch) == min(limit, len(names))
    assert set(one.batch) <= set(names)


# --- J8 ---------------------------------------------------------------------------------


def fingerprint(verdict_digest: str | None, *, finished: datetime = T0, **status: Any) -> Any:
    verdict = {"runNamespace": "lab", "runName": "q-1", "phase": "Passed",
               "finishedAt": finished.strftime("%Y-%m-%dT%H:%M:%SZ")}  # fmt: skip
    if verdict_digest:
        verdict["digest"] = verdict_digest
    return {"spec": {}, "status": {"digest": "glimmer-v1:now", "verdict": verdict, **status}}


def test_J8_a_verdict_measured_on_other_hardware_is_drift() -> None:
    reason = drift_reason(fingerprint("glimmer-v1:before"), now=T0 + timedelta(days=1))
    assert reason is not None and "glimmer-v1:before" in reason


def test_J8_a_probe_finding_other_parts_is_drift() -> None:
    fp = fingerprint("glimmer-v1:now")
    fp["status"]["verdict"]["hardwareIdentity"] = "gpu-a"
    fp["status"]["hardwareIdentity"] = {
        "identity": "gpu-b", "runNamespace": "lab", "runName": "probe",
        "observedAt": "2026-03-05T00:00:00Z",
    }  # fmt: skip
    reason = drift_reason(fp, now=T0 + timedelta(days=1))
    assert reason is not None and "a part was replaced" in reason


def test_J8_a_current_aged_missing_or_absent_verdict_is_not_drift() -> None:
    now = T0 + timedelta(days=30)
    assert drift_reason(None, now=now) is None
    assert drift_reason(fingerprint("glimmer-v1:now"), now=now) is None
    aged = fingerprint("glimmer-v1:now")
    aged["spec"]["maxVerdictAgeSeconds"] = 60
    assert drift_reason(aged, now=now) is None  # Expired, but only old
    unreadable = fingerprint("glimmer-v1:now")
    del unreadable["status"]["verdict"]["finishedAt"]
    assert drift_reason(unreadable, now=now) is None  # Expired (no finish time), not drift
    assert drift_reason({"status": {"digest": "glimmer-v1:now"}}, now=now) is None


def test_J8_the_controllers_drift_condition_counts() -> None:
    fp = fingerprint("glimmer-v1:now")
    fp["status"]["conditions"] = [
        {"type": "VerdictCurrent", "status": "False", "reason": "HardwareIdentityChanged",
         "message": "a part was replaced"}
    ]  # fmt: skip
    assert drift_reason(fp, now=T0) == "a part was replaced"
    fp["status"]["conditions"][0]["reason"] = "VerdictTooOld"
    assert drift_reason(fp, now=T0) is None


def test_J8_a_fingerprint_not_caught_up_with_the_last_qualification_is_not_drift() -> None:
    drifted = fingerprint("glimmer-v1:before")  # verdict of lab/q-1, hardware since changed
    now = T0 + timedelta(days=1)
    assert drift_reason(drifted, now=now, qualified_by="lab/q-1") is not None
    assert drift_reason(drifted, now=now, qualified_by="lab/q-2") is None  # q-2 not in yet
