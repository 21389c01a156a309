"""Qualify on join (J6-J9): which nodes a node-joined trigger batches, what its terminal
run decides for each node's startup taint, and which nodes drift re-taints. Pure.

J6 (batch). A node is a candidate when it matches the schedule's target (and the
trigger's selector), carries the configured taint *exactly* (key, value and effect),
has not been judged by one of the trigger's runs since it was last tainted, and is not
already in the open batch. The first candidate seen opens a window of
``batchWindowSeconds``; when it closes, the candidates share one run, oldest first, at
most ``maxConcurrentNodes`` of them (the rest wait for the next batch).

J7 (untaint). The taint is removed only when the node verdict
(:func:`glimmer.verdict.nodes.node_verdict`) of a run this trigger created is Passed
(every required test Passed, measured on silicon, not suspect) *and* the node still
carries exactly the configured taint. Anything else keeps the taint and says why:
Failed, Simulated (tested on the simulated GPU only: nothing is certified),
NotJudged (an Error, a Skipped or never-run test, a cancelled run: unjudged is no
Pass), NoVerdict (the run says nothing of the node), TaintChanged (someone changed or
removed the taint meanwhile: it is no longer ours to remove) and NotOurRun. No other
taint is ever touched.

J8 (drift). With ``retaintOnDrift``, a target node no longer carrying the taint whose
NodeFingerprint verdict is Expired because the hardware changed under it (the digest
moved, or a fingerprint-probe found other parts: not because it is merely old) is
re-tainted and qualified again the same way. A verdict that only aged is left to a
cron schedule's ``targetVerdicts``: taking a healthy node out of service because a
clock ran is not what drift means.

J9 (cursor first) is the controller's: see ``glimmer.controllers.schedule.qualify``.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Final

from glimmer.verdict.expiry import (
    VERDICT_CURRENT,
    VerdictReason,
    VerdictState,
    evaluate,
    probe_from_json,
    state_of_fingerprint,
)
from glimmer.verdict.nodes import NodeState, NodeVerdict
from glimmer.verdict.taints import Taint

#: The reasons of a verdict that expired because the hardware identity moved (J8).
DRIFT_REASONS: Final = frozenset(
    {VerdictReason.FINGERPRINT_CHANGED, VerdictReason.HARDWARE_CHANGED}
)


def taint_index(taints: Iterable[Mapping[str, Any]], taint: Taint) -> int | None:
    """Where ``taint`` is in the node's ``spec.taints`` (key, value and effect all equal),
    or None: a taint of the same key with another value or effect is not ours."""
    for index, entry in enumerate(taints):
        if isinstance(entry, Mapping) and Taint.of(entry) == taint:
            return index
    return None


class Outcome(enum.StrEnum):
    UNTAINT = "Untaint"
    KEEP = "Keep"


class KeepReason(enum.StrEnum):
    QUALIFIED = "Qualified"
    FAILED = "Failed"
    SIMULATED = "Simulated"
    NOT_JUDGED = "NotJudged"
    NO_VERDICT = "NoVerdict"
    TAINT_CHANGED = "TaintChanged"
    NOT_OUR_RUN = "NotOurRun"


@dataclass(frozen=True, slots=True)
class Decision:
    """J7's answer for one node of a terminal batch run."""

    node: str
    outcome: Outcome
    reason: KeepReason
    message: str

    @property
    def untaint(self) -> bool:
        return self.outcome is Outcome.UNTAINT


def qualify_decision(
    node: str,
    *,
    taint: Taint,
    carries_taint: bool,
    verdict: NodeVerdict | None,
    from_trigger: bool,
    run: str,
) -> Decision:
    """J7: remove ``taint`` from ``node`` only for a certified Pass of the trigger's own
    run while the node still carries exactly that taint; otherwise keep it, saying why
    (the node verdict's own message where there is one)."""

    def keep(reason: KeepReason, message: str) -> Decision:
        return Decision(node, Outcome.KEEP, reason, f"{taint} kept: {message}")

    if not from_trigger:
        return keep(KeepReason.NOT_OUR_RUN, f"run {run} was not created by this trigger")
    if verdict is None:
        return keep(KeepReason.NO_VERDICT, f"run {run} recorded no result for this node")
    if verdict.state is NodeState.FAILED:
        return keep(KeepReason.FAILED, f"run {run}: {verdict.message}")
    if verdict.state is NodeState.SIMULATED:
        return keep(
            KeepReason.SIMULATED,
            f"run {run} passed on the simulated GPU only, nothing is certified: {verdict.message}",
        )
    if verdict.state is not NodeState.PASSED:
        return keep(KeepReason.NOT_JUDGED, f"run {run} did not judge the node: {verdict.message}")
    if not carries_taint:
        return keep(
            KeepReason.TAINT_CHANGED,
            f"run {run} certified the node, but it no longer carries exactly {taint}; "
            "a taint someone else changed is not removed",
        )
    return Decision(
        node,
        Outcome.UNTAINT,
        KeepReason.QUALIFIED,
        f"{taint} removed: run {run} certified the node ({verdict.message})",
    )


@dataclass(frozen=True, slots=True)
class Candidate:
    """A node waiting to be qualified: its name and when it joined (creation time)."""

    node: str
    joined: datetime | None


@dataclass(frozen=True, slots=True)
class BatchPlan:
    """J6's answer for one pass: the window and the batch to start, if any."""

    #: When the window opened (None: no candidate, no window).
    opened_at: datetime | None
    #: The nodes of the batch to start now (empty: none yet).
    batch: tuple[str, ...] = ()
    #: When to look again for the window's end (None: no window open).
    due_at: datetime | None = None


def plan_batch(
    candidates: Sequence[Candidate],
    *,
    opened_at: datetime | None,
    now: datetime,
    window_seconds: int,
    limit: int,
    busy: bool,
) -> BatchPlan:
    """J6: open a window at the first candidate, start a batch when it has run its
    length (oldest joiners first, at most ``limit``); ``busy`` (an open batch's run not
    yet judged) starts nothing, the window waits. No candidate: no window."""
    if not candidates:
        return BatchPlan(opened_at=None)
    opened = opened_at if opened_at is not None and opened_at <= now else now
    due = opened + timedelta(seconds=max(0, window_seconds))
    if busy or now < due:
        return BatchPlan(opened_at=opened, due_at=due)
    floor = datetime.min.replace(tzinfo=now.tzinfo)
    ordered = sorted(candidates, key=lambda c: (c.joined or floor, c.node))
    return BatchPlan(
        opened_at=opened, batch=tuple(c.node for c in ordered[: max(1, limit)]), due_at=None
    )


def drift_reason(
    fingerprint: Mapping[str, Any] | None, *, now: datetime, qualified_by: str | None = None
) -> str | None:
    """J8: why the node's verdict expired with its hardware (the message), or None when it
    did not (no fingerprint, a current verdict, one that only aged, Missing, Simulated).

    The state is :func:`state_of_fingerprint`'s; the cause is the stored verdict's own
    (:func:`evaluate`) or the controller's ``VerdictCurrent`` reason when it knows more.
    ``qualified_by`` ("namespace/run") is the trigger run that last judged the node: while
    the stored verdict is still another run's, the fingerprint has not caught up with that
    judgement yet, and the old verdict's expiry is no drift (re-tainting on it would take
    a node just qualified out of service again).
    """
    if (
        fingerprint is None
        or state_of_fingerprint(fingerprint, now=now) is not VerdictState.EXPIRED
    ):
        return None
    status = fingerprint.get("status") or {}
    verdict = status.get("verdict") or {}
    if qualified_by and isinstance(verdict, Mapping):
        stored = f"{verdict.get('runNamespace')}/{verdict.get('runName')}"
        if stored != qualified_by:
            return None
    own = evaluate(
        verdict=status.get("verdict"),
        digest=str(status.get("digest") or ""),
        now=now,
        max_age_seconds=None,
        probe=probe_from_json(status.get("hardwareIdentity")),
    )
    if own.state is VerdictState.EXPIRED and own.reason in DRIFT_REASONS:
        return own.message
    for condition in status.get("conditions") or ():
        if (
            isinstance(condition, Mapping)
            and condition.get("type") == VERDICT_CURRENT
            and condition.get("status") != "True"
            and condition.get("reason") in DRIFT_REASONS
        ):
            return str(condition.get("message") or condition.get("reason"))
    return None
