"""Verdicts that expire (Glimmer extension): a node's acceptance verdict is bound to the
fingerprint digest it was measured on.

Pure. The verdict comes from finished BurnInRuns (read-only): the newest terminal,
non-baseline run that *judged* the node. Judged means every result on the node is
Passed or Skipped with at least one Passed, each Passed measured on silicon and not
suspect (a Passed verdict), or some result on it Failed (a Failed verdict). A run that
errored, was cancelled before judging, skipped everything or ran on the simulated GPU
judged nothing here, and the earlier verdict stands: Error is not Fail, and a sim pass
never certifies a part.

Binding. A verdict is bound to the current digest only when the fingerprint's
``capturedAt`` (the last time the observation changed) is strictly before the
measurement began. Otherwise the hardware identity changed after (or in the same
second as) the run started, so the verdict cannot be shown to describe this hardware:
it is bound to no digest and reads Expired. Once bound, any later digest change
expires it. That is the failure this prevents: a node whose GPU was swapped still
carrying last month's Passed label into a provisioning system.
"""

from __future__ import annotations

import enum
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Final

from glimmer.api import format_time, parse_time
from glimmer.verdict.codec import status_results

JSON = dict[str, Any]

VERDICT_CURRENT: Final = "VerdictCurrent"
_TERMINAL_RUN: Final = frozenset({"Passed", "Failed", "Error", "Cancelled"})


class VerdictState(enum.StrEnum):
    """The node label's values (``burnin.glimmer.ai/verdict``)."""

    PASSED = "Passed"
    FAILED = "Failed"
    EXPIRED = "Expired"
    MISSING = "Missing"


class VerdictReason(enum.StrEnum):
    BOUND = "DigestMatches"
    FINGERPRINT_CHANGED = "FingerprintChanged"
    TOO_OLD = "VerdictTooOld"
    NONE = "NoVerdict"


@dataclass(frozen=True, slots=True)
class RunVerdict:
    """What one finished run says about one node."""

    run_namespace: str
    run_name: str
    run_uid: str
    phase: str
    started_at: datetime | None
    finished_at: datetime

    def sort_key(self) -> tuple[datetime, str, str]:
        return (self.finished_at, self.run_namespace, self.run_name)


#: The fields of a result a node verdict reads.
_VERDICT_FIELDS: Final = ("phase", "provenance", "suspect", "startedAt")
#: Per run version, its results by node: a run's results are indexed once, not once per
#: node it names (issue 18: a 5,000-node run read whole for each of its 5,000 nodes).
_BY_NODE: OrderedDict[tuple[str, str], dict[str, list[dict[str, Any]]]] = OrderedDict()
_BY_NODE_RUNS: Final = 8


def _results_by_node(run: Mapping[str, Any]) -> Mapping[str, list[dict[str, Any]]]:
    """Node -> the verdict fields of every result (with a kind) that names it; built as
    new values (nothing of ``run`` is held, so a cached run object may be passed)."""
    meta = run.get("metadata") or {}
    key = (str(meta.get("uid") or ""), str(meta.get("resourceVersion") or ""))
    if all(key) and key in _BY_NODE:
        _BY_NODE.move_to_end(key)
        return _BY_NODE[key]
    index: dict[str, list[dict[str, Any]]] = {}
    for result in status_results(run.get("status") or {}):
        if not result.get("kind"):
            continue
        fields: dict[str, Any] = {k: result[k] for k in _VERDICT_FIELDS if k in result}
        for node in result.get("nodes") or ():
            index.setdefault(str(node), []).append(fields)
    if all(key):
        _BY_NODE[key] = index
        while len(_BY_NODE) > _BY_NODE_RUNS:
            _BY_NODE.popitem(last=False)
    return index


def run_verdict(run: Mapping[str, Any], node: str) -> RunVerdict | None:
    """The verdict ``run`` gives ``node``, or None when it judged nothing there."""
    meta = run.get("metadata") or {}
    spec = run.get("spec") or {}
    status = run.get("status") or {}
    if status.get("phase") not in _TERMINAL_RUN or spec.get("baseline") is True:
        return None
    finished = parse_optional_time(status.get("finishedAt"))
    if finished is None:
        return None
    results = _results_by_node(run).get(node)
    if not results:
        return None
    phases = [str(r.get("phase") or "") for r in results]
    if "Failed" in phases:
        phase = "Failed"
    elif (
        "Passed" in phases
        and all(p in ("Passed", "Skipped") for p in phases)
        and all(
            r.get("provenance") == "silicon" and r.get("suspect") is not True
            for r in results
            if r.get("phase") == "Passed"
        )
    ):
        phase = "Passed"
    else:
        return None
    starts = [
        t for t in (parse_optional_time(r.get("startedAt")) for r in results) if t is not None
    ]
    started = min(starts) if starts else parse_optional_time(status.get("startedAt"))
    return RunVerdict(
        run_namespace=str(meta.get("namespace") or ""),
        run_name=str(meta.get("name") or ""),
        run_uid=str(meta.get("uid") or ""),
        phase=phase,
        started_at=started,
        finished_at=finished,
    )


def latest_verdict(runs: Iterable[Mapping[str, Any]], node: str) -> RunVerdict | None:
    return newest_verdict(run_verdict(r, node) for r in runs)


def newest_verdict(verdicts: Iterable[RunVerdict | None]) -> RunVerdict | None:
    """The most recently finished of the runs' verdicts (None: no run judged the node)."""
    found = [v for v in verdicts if v is not None]
    return max(found, key=RunVerdict.sort_key) if found else None


def next_verdict(
    *,
    stored: Mapping[str, Any] | None,
    candidate: RunVerdict | None,
    captured_at: datetime | None,
    digest: str,
) -> JSON | None:
    """The ``status.verdict`` to write: the stored one unless a newer run judged the node.

    A new verdict is bound to ``digest`` only if the observation last changed strictly
    before its measurement began (see the module docstring).
    """
    if candidate is None or (stored and not _newer(candidate, stored)):
        return dict(stored) if stored else None
    bound = (
        captured_at is not None
        and candidate.started_at is not None
        and captured_at < candidate.started_at
    )
    out: JSON = {
        "runNamespace": candidate.run_namespace,
        "runName": candidate.run_name,
        "phase": candidate.phase,
        "finishedAt": _format(candidate.finished_at),
    }
    if candidate.run_uid:
        out["runUID"] = candidate.run_uid
    if candidate.started_at is not None:
        out["startedAt"] = _format(candidate.started_at)
    if bound:
        out["digest"] = digest
    return out


def _newer(candidate: RunVerdict, stored: Mapping[str, Any]) -> bool:
    finished = parse_optional_time(stored.get("finishedAt"))
    if finished is None:
        return True
    if candidate.run_uid and candidate.run_uid == stored.get("runUID"):
        return False
    return candidate.sort_key() > (
        finished,
        str(stored.get("runNamespace") or ""),
        str(stored.get("runName") or ""),
    )


@dataclass(frozen=True, slots=True)
class VerdictStatus:
    """The node's verdict state, the VerdictCurrent condition and when it next changes."""

    state: VerdictState
    condition_status: str
    reason: VerdictReason
    message: str
    expires_at: datetime | None = None


def evaluate(
    *,
    verdict: Mapping[str, Any] | None,
    digest: str,
    now: datetime,
    max_age_seconds: int | None,
    changes: str = "",
) -> VerdictStatus:
    """Is the stored verdict still about this hardware, and young enough?

    ``changes`` names what changed when the digest moved in this pass (for the message).
    """
    if not verdict:
        return VerdictStatus(
            state=VerdictState.MISSING,
            condition_status="False",
            reason=VerdictReason.NONE,
            message="no finished BurnInRun has judged this node",
        )
    run = f"{verdict.get('runNamespace')}/{verdict.get('runName')}"
    phase = str(verdict.get("phase") or "")
    bound = verdict.get("digest")
    if not bound or bound != digest:
        if not bound:
            why = "the fingerprint changed after its measurement began"
        else:
            why = f"it was measured on {bound}, the node is now {digest}"
        detail = f": {changes}" if changes else ""
        return VerdictStatus(
            state=VerdictState.EXPIRED,
            condition_status="False",
            reason=VerdictReason.FINGERPRINT_CHANGED,
            message=f"the {phase} verdict of run {run} expired: {why}{detail}",
        )
    finished = parse_optional_time(verdict.get("finishedAt"))
    expires = (
        finished + timedelta(seconds=max_age_seconds)
        if finished is not None and max_age_seconds is not None and max_age_seconds > 0
        else None
    )
    if finished is None or (expires is not None and now >= expires):
        return VerdictStatus(
            state=VerdictState.EXPIRED,
            condition_status="False",
            reason=VerdictReason.TOO_OLD,
            message=f"the {phase} verdict of run {run} (finished "
            f"{verdict.get('finishedAt')}) is older than maxVerdictAgeSeconds={max_age_seconds}",
        )
    state = VerdictState.PASSED if phase == "Passed" else VerdictState.FAILED
    return VerdictStatus(
        state=state,
        condition_status="True",
        reason=VerdictReason.BOUND,
        message=f"the {phase} verdict of run {run} was measured on the current digest",
        expires_at=expires,
    )


def state_of_fingerprint(
    fingerprint: Mapping[str, Any] | None, *, now: datetime, max_age_seconds: int | None = None
) -> VerdictState:
    """A node's verdict state as a reader sees it (the schedule's targetVerdicts).

    No fingerprint, or one not captured yet, is Missing: a node nobody has identified
    has no verdict anyone can rely on. ``max_age_seconds`` tightens the fingerprint's
    own limit (the smaller one applies).
    """
    if fingerprint is None:
        return VerdictState.MISSING
    status = fingerprint.get("status") or {}
    digest = status.get("digest")
    if not digest:
        return VerdictState.MISSING
    own = (fingerprint.get("spec") or {}).get("maxVerdictAgeSeconds")
    limits = [a for a in (own, max_age_seconds) if isinstance(a, int) and a > 0]
    state = evaluate(
        verdict=status.get("verdict"),
        digest=str(digest),
        now=now,
        max_age_seconds=min(limits) if limits else None,
    ).state
    # The controller may know more (the manager's default age limit): a condition it
    # wrote saying "not current" is never overridden by a reader's own arithmetic.
    condition = next(
        (c for c in status.get("conditions") or () if isinstance(c, Mapping)
         and c.get("type") == VERDICT_CURRENT),
        None,
    )  # fmt: skip
    if (
        condition is not None
        and condition.get("status") != "True"
        and state
        in (
            VerdictState.PASSED,
            VerdictState.FAILED,
        )
    ):
        none = condition.get("reason") == VerdictReason.NONE
        return VerdictState.MISSING if none else VerdictState.EXPIRED
    return state


def parse_optional_time(value: Any) -> datetime | None:
    """An RFC3339 time, or None when absent or unreadable (never a guessed time)."""
    if not isinstance(value, str) or not value:
        return None
    try:
        return parse_time(value)
    except ValueError:
        return None


def _format(moment: datetime) -> str:
    return format_time(moment)
