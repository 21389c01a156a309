"""Verdicts that expire (Glimmer extension): a node's verdict is bound to the hardware
identity (the fingerprint digest) it was measured on, and read as a state.

Pure, standard library only: the NodeFingerprint controller writes what these functions
decide (``status.verdict``, the ``VerdictCurrent`` condition, the node's
``burnin.glimmer.ai/verdict`` label, the ``glimmer_node_verdict`` gauge) and a schedule's
``targetVerdicts`` reads a fingerprint through :func:`state_of_fingerprint`.

What a run says about a node is :func:`glimmer.verdict.nodes.node_verdict`; the newest
run that judged the node (Passed or Failed), or, when no run did, the newest that found
it Simulated, becomes the stored verdict. A run that judged nothing there (errored,
cancelled before the node's tests ran, a planned test never run, everything Skipped)
leaves the earlier verdict standing: Error is not Fail, and absence is no Pass.

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
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any, Final

JSON = dict[str, Any]

VERDICT_CURRENT: Final = "VerdictCurrent"


class VerdictState(enum.StrEnum):
    """The node label's values (``burnin.glimmer.ai/verdict``)."""

    PASSED = "Passed"
    FAILED = "Failed"
    #: Only simulated evidence: a run passed every required test of the node, but on
    #: the simulated GPU. Tested, never certified (not Missing: it was not untested).
    SIMULATED = "Simulated"
    EXPIRED = "Expired"
    MISSING = "Missing"


class VerdictReason(enum.StrEnum):
    BOUND = "DigestMatches"
    SIMULATED_ONLY = "SimulatedOnly"
    FINGERPRINT_CHANGED = "FingerprintChanged"
    HARDWARE_CHANGED = "HardwareIdentityChanged"
    TOO_OLD = "VerdictTooOld"
    NONE = "NoVerdict"
    NOT_JUDGED = "NewestRunDidNotJudge"


#: The stored verdict phases: a judgement, or a run that found the node Simulated.
JUDGED_PHASES: Final = frozenset({"Passed", "Failed"})
SIMULATED_PHASE: Final = "Simulated"
#: A run that named the node but judged nothing there; never stored as a verdict.
NOT_JUDGED_PHASE: Final = "NotJudged"


@dataclass(frozen=True, slots=True)
class RunVerdict:
    """What one finished run says about one node."""

    run_namespace: str
    run_name: str
    run_uid: str
    #: Passed, Failed or Simulated (:class:`glimmer.verdict.nodes.NodeState`'s values).
    phase: str
    started_at: datetime | None
    finished_at: datetime
    #: For a run that judged nothing here, why (the tests that never ran, ...).
    note: str = ""
    #: The hardware identity this run's own fingerprint-probe recorded on the node.
    identity: str = ""

    @property
    def judged(self) -> bool:
        return self.phase in JUDGED_PHASES

    def sort_key(self) -> tuple[datetime, str, str]:
        return (self.finished_at, self.run_namespace, self.run_name)


@dataclass(frozen=True, slots=True)
class Probe:
    """A hardware identity a fingerprint-probe result recorded for the node."""

    identity: str
    gpu_uuids: str
    run_namespace: str
    run_name: str
    observed_at: datetime

    def to_json(self) -> JSON:
        out: JSON = {
            "identity": self.identity,
            "runNamespace": self.run_namespace,
            "runName": self.run_name,
            "observedAt": _format(self.observed_at),
        }
        if self.gpu_uuids:
            out["gpuUuids"] = self.gpu_uuids
        return out


def probe_from_json(value: Any) -> Probe | None:
    """A stored ``status.hardwareIdentity``, or None when absent or unreadable."""
    if not isinstance(value, Mapping):
        return None
    identity, observed = value.get("identity"), parse_optional_time(value.get("observedAt"))
    if not isinstance(identity, str) or not identity or observed is None:
        return None
    return Probe(
        identity=identity,
        gpu_uuids=str(value.get("gpuUuids") or ""),
        run_namespace=str(value.get("runNamespace") or ""),
        run_name=str(value.get("runName") or ""),
        observed_at=observed,
    )


def newest_probe(probes: Iterable[Probe | None]) -> Probe | None:
    """The most recent identity any probe recorded (the stored one among them)."""
    found = [p for p in probes if p is not None]
    return max(found, key=lambda p: (p.observed_at, p.run_namespace, p.run_name)) if found else None


def newest_verdict(verdicts: Iterable[RunVerdict | None]) -> RunVerdict | None:
    """The most recently finished judgement (Passed or Failed) of the runs' verdicts; only
    when no run judged the node, the newest that found it Simulated (None: neither)."""
    found = [v for v in verdicts if v is not None]
    judged = [v for v in found if v.judged]
    pool = judged or [v for v in found if v.phase == SIMULATED_PHASE]
    return max(pool, key=RunVerdict.sort_key) if pool else None


def newest_unjudged(verdicts: Iterable[RunVerdict | None]) -> RunVerdict | None:
    """The most recently finished run that named the node but judged nothing there."""
    found = [v for v in verdicts if v is not None and v.phase == NOT_JUDGED_PHASE]
    return max(found, key=RunVerdict.sort_key) if found else None


def note_unjudged(status: VerdictStatus, *, unjudged: RunVerdict | None) -> VerdictStatus:
    """A node no run has judged, whose newest run named it but judged nothing there (a
    failFast run that never reached its tests, say), reads ``NotJudged`` and names why,
    instead of reading like a node nobody tried. A stored verdict is left as it is."""
    if unjudged is None or status.state is not VerdictState.MISSING:
        return status
    run = f"{unjudged.run_namespace}/{unjudged.run_name}"
    return replace(
        status,
        reason=VerdictReason.NOT_JUDGED,
        message=f"no finished BurnInRun has judged this node; the newest, {run}, did not: "
        f"{unjudged.note}",
    )


def next_verdict(
    *,
    stored: Mapping[str, Any] | None,
    candidate: RunVerdict | None,
    captured_at: datetime | None,
    digest: str,
    probes: Iterable[Probe | None] = (),
) -> JSON | None:
    """The ``status.verdict`` to write: the stored one unless a newer run judged the node.

    A new verdict is bound to ``digest`` only if the observation last changed strictly
    before its measurement began (see the module docstring).
    """
    if candidate is None or (stored and not _newer(candidate, stored)):
        return dict(stored) if stored else None
    if stored and not candidate.judged and stored.get("phase") in JUDGED_PHASES:
        # Simulated evidence never replaces a judgement made on silicon.
        return dict(stored)
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
    # The identity measured: the run's own probe, else the newest probe that ended before
    # the measurement began (a later probe is not evidence of what was measured).
    start = candidate.started_at
    before = newest_probe(
        p for p in probes if p is not None and start is not None and p.observed_at <= start
    )
    identity = candidate.identity or (before.identity if before is not None else "")
    if identity:
        out["hardwareIdentity"] = identity
    return out


def _newer(candidate: RunVerdict, stored: Mapping[str, Any]) -> bool:
    finished = parse_optional_time(stored.get("finishedAt"))
    if finished is None:
        return True
    if candidate.run_uid and candidate.run_uid == stored.get("runUID"):
        return False
    if candidate.judged and stored.get("phase") not in JUDGED_PHASES:
        return True  # a judgement replaces a Simulated (or unreadable) verdict
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
    probe: Probe | None = None,
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
    measured = verdict.get("hardwareIdentity")
    if isinstance(measured, str) and measured and probe is not None and probe.identity != measured:
        uuids = f" (GPUs now {probe.gpu_uuids})" if probe.gpu_uuids else ""
        return VerdictStatus(
            state=VerdictState.EXPIRED,
            condition_status="False",
            reason=VerdictReason.HARDWARE_CHANGED,
            message=f"the {phase} verdict of run {run} expired: it was measured on hardware "
            f"{measured}, and fingerprint-probe in run {probe.run_namespace}/{probe.run_name} "
            f"found {probe.identity}{uuids}: a part was replaced",
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
    if phase == SIMULATED_PHASE:
        return VerdictStatus(
            state=VerdictState.SIMULATED,
            condition_status="False",
            reason=VerdictReason.SIMULATED_ONLY,
            message=f"run {run} passed every required test of this node on the simulated "
            "GPU only: nothing was measured on silicon, nothing is certified",
            expires_at=expires,
        )
    # Anything but a stored Passed reads Failed (an unreadable phase is no Pass).
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
        probe=probe_from_json(status.get("hardwareIdentity")),
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
        reason = condition.get("reason")
        if reason in (VerdictReason.NONE, VerdictReason.NOT_JUDGED):
            return VerdictState.MISSING
        if reason == VerdictReason.SIMULATED_ONLY:
            return VerdictState.SIMULATED
        return VerdictState.EXPIRED
    return state


def parse_optional_time(value: Any) -> datetime | None:
    """An RFC3339 time, or None when absent or unreadable (never a guessed time)."""
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed.astimezone(UTC) if parsed.tzinfo is not None else None


def _format(moment: datetime) -> str:
    """metav1.Time on the wire: RFC3339, whole seconds, UTC ``Z``."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def targeted(state: VerdictState, wanted: Iterable[str]) -> bool:
    """Does a schedule's ``targetVerdicts`` select a node in ``state``? A node tested only
    on the simulator has no verdict on silicon, so ``Missing`` selects it too."""
    chosen = {str(w) for w in wanted}
    return state in chosen or (state is VerdictState.SIMULATED and VerdictState.MISSING in chosen)
