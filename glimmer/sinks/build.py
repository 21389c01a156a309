"""The envelope from the run as written (L1), and from a bare host's ``run.json`` (N2).

Everything comes from the object the reconciler just wrote (or is about to write, for
Running): the envelope is a view of recorded state, never of something the controller
merely intends. Every result so far travels (cumulative), attempts and conditions do
not, and the summary is counted from the results themselves, so it can never disagree
with them (a checkpoint's open results count in none of the four).
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Final

import aiohttp

from glimmer.api import status_layout
from glimmer.contract.envelope import (
    REASON_CHECKPOINT,
    REASON_RUN_PHASE_CHANGED,
    ArtifactRef,
    ClusterRef,
    Envelope,
    NodeVerdictRef,
    NotEvaluated,
    RunRef,
    SegmentSummary,
    Summary,
    TestResult,
    Violation,
    delivery_id,
    format_sent_at,
    parse_time,
)
from glimmer.engine import CONFIGMAPS, ApiError, KubeClient
from glimmer.verdict import Phase
from glimmer.verdict.nodes import NodeState, PlannedUnit, node_verdict

CANCELLED: Final = "Cancelled"
#: What a failed shard read can raise besides a 404; any of them means "unreadable".
_READ_ERRORS: Final = (ApiError, OSError, TimeoutError, aiohttp.ClientError)
#: A bare host's run identity (N2): namespace ``local``, name = the node.
LOCAL_NAMESPACE: Final = "local"

JSON = Mapping[str, Any]


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _strings(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list):
        return ()
    return tuple(v for v in value if isinstance(v, str))


def _string_map(value: Any) -> dict[str, str]:
    if not isinstance(value, Mapping):
        return {}
    return {str(k): v for k, v in value.items() if isinstance(v, str)}


def _time(value: Any) -> str:
    """Status times (millisecond precision) as RFC3339Nano UTC; unparseable ones are left
    out rather than sent as something a strict consumer would refuse."""
    text = _text(value)
    if not text:
        return ""
    try:
        return format_sent_at(parse_time(text))
    except ValueError:
        return ""


def _objects(value: Any) -> list[Mapping[str, Any]]:
    return [v for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []


def result_of(result: JSON, *, artifacts: bool = True) -> TestResult:
    """One status ``TestResult`` in envelope form (no attempts, no bookkeeping)."""
    required = _int(result.get("segmentsRequired"))
    segments = (
        SegmentSummary(
            completed=_int(result.get("segmentsCompleted")),
            required=required,
            segment_seconds=_int(result.get("segmentSeconds")),
            truncated_attempts=_int(result.get("truncatedAttempts")),
        )
        if required > 0
        else None
    )
    return TestResult(
        name=_text(result.get("name")),
        kind=_text(result.get("kind")),
        scope=_text(result.get("scope")),
        phase=_text(result.get("phase")),
        nodes=_strings(result.get("nodes")),
        started_at=_time(result.get("startedAt")),
        finished_at=_time(result.get("finishedAt")),
        metrics=_string_map(result.get("metrics")),
        message=_text(result.get("message")),
        violations=tuple(
            Violation(
                index=_int(v.get("index")),
                metric=_text(v.get("metric")),
                cause=_text(v.get("cause")),
                kind=_text(v.get("kind")),
                reason=_text(v.get("reason")),
            )
            for v in _objects(result.get("violations"))
        ),
        not_evaluated=tuple(
            NotEvaluated(metric=_text(n.get("metric")), reason=_text(n.get("reason")))
            for n in _objects(result.get("notEvaluated"))
        ),
        unmeasurable=_strings(result.get("unmeasurable")),
        artifacts=tuple(
            ArtifactRef(
                name=_text(a.get("name")),
                media_type=_text(a.get("mediaType")),
                size_bytes=_int(a.get("sizeBytes")),
                digest=_text(a.get("digest")),
                config_map=_text(a.get("configMap")),
                key=_text(a.get("key")),
                dropped=_text(a.get("dropped")),
            )
            for a in _objects(result.get("artifacts"))
        )
        if artifacts
        else (),
        variant_axes=_string_map(result.get("variantAxes")),
        segments=segments,
        provenance=_text(result.get("provenance")),
        suspect=result.get("suspect") is True,
    )


def summary_of(results: Sequence[TestResult]) -> Summary:
    phases = [Phase.parse_or_none(r.phase) for r in results]
    return Summary(
        passed=phases.count(Phase.PASSED),
        failed=phases.count(Phase.FAILED),
        errored=phases.count(Phase.ERROR),
        skipped=phases.count(Phase.SKIPPED),
    )


def node_verdicts_of(
    phase: str,
    results: Sequence[Mapping[str, Any]],
    *,
    planned: Sequence[PlannedUnit] | None,
    baseline: bool,
) -> tuple[NodeVerdictRef, ...]:
    """Each planned node's verdict from this run (``glimmer.verdict.nodes``), on a
    terminal envelope only: a checkpoint's nodes are still being judged. Nodes in
    pinned target order; a reason whenever the verdict is not Passed."""
    if not Phase.is_terminal_text(phase) or planned is None:
        return ()
    nodes: dict[str, None] = {}
    for unit in planned:
        nodes.update(dict.fromkeys(unit.nodes))
    out = []
    for node in nodes:
        verdict = node_verdict(node, planned=planned, results=results, baseline=baseline)
        reason = "" if verdict.state is NodeState.PASSED else verdict.message
        out.append(NodeVerdictRef(node=node, verdict=str(verdict.state), reason=reason))
    return tuple(out)


async def read_evidence(client: KubeClient, run: JSON) -> dict[str, Any]:
    """Every evidence shard ``run``'s status names, decoded; None for one that is
    missing, foreign, unreadable or cannot be fetched (its results then read Error)."""
    meta, status = _mapping(run.get("metadata")), _mapping(run.get("status"))
    namespace, uid = _text(meta.get("namespace")), _text(meta.get("uid"))
    found: dict[str, Any] = {}
    for digest in status_layout.shard_digests(status_layout.status_results(status)):
        name = status_layout.shard_name(_text(meta.get("name")), digest)
        try:
            config_map = await client.get(CONFIGMAPS, name, namespace=namespace)
        except _READ_ERRORS:
            config_map = None
        found[digest] = status_layout.decode_shard_payload(config_map, uid=uid, digest=digest)
    prints: dict[str, str] | None = {}
    for digest in _texts(status.get(status_layout.FINGERPRINT_SHARD_KEY)):
        name = status_layout.fingerprint_shard_name(_text(meta.get("name")), digest)
        try:
            config_map = await client.get(CONFIGMAPS, name, namespace=namespace)
        except _READ_ERRORS:
            config_map = None
        chunk = status_layout.decode_fingerprint_payload(config_map, uid=uid, digest=digest)
        prints = None if chunk is None or prints is None else prints | chunk
    if status_layout.FINGERPRINT_SHARD_KEY in status:
        found[status_layout.FINGERPRINT_SHARD_KEY] = prints
    return found


def _texts(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str) and v] if isinstance(value, list) else []


def fingerprint_of(run: JSON, shards: Mapping[str, Any] | None) -> dict[str, str]:
    """The run-start fingerprint, per node: ``status.fingerprint``, or for a large run
    its fingerprint shard (``read_evidence``); a shard that cannot be read names itself
    against every target instead of vanishing."""
    meta, status = _mapping(run.get("metadata")), _mapping(run.get("status"))
    inline = _string_map(status.get("fingerprint"))
    digests = _texts(status.get(status_layout.FINGERPRINT_SHARD_KEY))
    if not digests:
        return inline
    stored = (shards or {}).get(status_layout.FINGERPRINT_SHARD_KEY)
    if isinstance(stored, Mapping):
        return {**_string_map(stored), **inline}
    names = ", ".join(
        status_layout.fingerprint_shard_name(_text(meta.get("name")), d) for d in digests
    )
    note = status_layout.FINGERPRINT_UNREADABLE.format(name=names)
    targets = _mapping(status.get("priorUnschedulable"))
    noted = {str(node): note for node in targets} | inline
    return noted or {"*": note}


def expand_run(run: JSON, shards: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``run`` whose ``status.results`` are every result in full: compact
    and packed records expanded from ``shards`` (``read_evidence``), unreadable ones as
    Error; and whose ``status.fingerprint`` is whole (:func:`fingerprint_of`)."""
    out = dict(run)
    status = dict(_mapping(out.get("status")))
    if isinstance(status.get("results"), list) or status_layout.PACKED_KEY in status:
        status["results"] = [
            status_layout.expand_result(r, shards) for r in status_layout.status_results(status)
        ]
        status.pop(status_layout.PACKED_KEY, None)
    if status_layout.FINGERPRINT_SHARD_KEY in status:
        status["fingerprint"] = fingerprint_of(run, shards)
        status.pop(status_layout.FINGERPRINT_SHARD_KEY)
    out["status"] = status
    return out


def build_envelope(
    run: JSON,
    *,
    reason: str,
    event_key: str,
    sent_at: datetime,
    baseline: bool,
    cluster: ClusterRef | None = None,
    shards: Mapping[str, Any] | None = None,
    planned: Sequence[PlannedUnit] | None = None,
) -> Envelope:
    """The envelope for ``run`` as written. ``baseline`` is the pinned plan's (the
    caller reads the plan); ``cluster`` only when configured (``--cluster-name``).
    ``shards`` (``read_evidence``) expands compact records; without it a compact
    record's result travels as Error (unjudged), never as its recorded phase.
    ``planned`` (the pinned plan's units) gives a terminal envelope its node verdicts."""
    meta, spec = _mapping(run.get("metadata")), _mapping(run.get("spec"))
    status = _mapping(run.get("status"))
    uid = _text(meta.get("uid"))
    phase = _text(status.get("phase"))
    expanded = [
        status_layout.expand_result(r, shards or {}) for r in status_layout.status_results(status)
    ]
    results = tuple(result_of(r) for r in expanded)
    return Envelope(
        baseline=baseline,
        delivery_id=delivery_id(uid, reason, event_key),
        reason=reason,
        sent_at=format_sent_at(sent_at),
        run=RunRef(
            namespace=_text(meta.get("namespace")),
            name=_text(meta.get("name")),
            uid=uid,
            profile=_text(spec.get("profileRef")),
        ),
        cluster=cluster if cluster is not None and (cluster.name or cluster.uid) else None,
        phase=phase,
        cancel_reason=_text(spec.get("cancelReason")) if phase == CANCELLED else "",
        checkpoint_sequence=_sequence(event_key) if reason == REASON_CHECKPOINT else 0,
        fingerprint=fingerprint_of(run, shards),
        results=results,
        summary=summary_of(results),
        provenance=_text(status.get("provenance")),
        certifies_silicon=status.get("certifiesSilicon") is True,
        node_verdicts=node_verdicts_of(phase, expanded, planned=planned, baseline=baseline),
    )


def _sequence(event_key: str) -> int:
    return int(event_key) if event_key.isascii() and event_key.isdigit() else 0


def envelope_from_run_document(
    document: JSON,
    *,
    sent_at: datetime,
    uid: str | None = None,
    baseline: bool = False,
    planned: Sequence[PlannedUnit] | None = None,
) -> Envelope:
    """The terminal RunPhaseChanged envelope of a bare host's ``run.json`` (N2/N3).

    Run ``{namespace: local, name: <node>, uid: random}``; no cluster, cancel reason,
    segments or artifacts (they name files on this host, not objects a consumer can
    fetch). ``baseline`` travels when true: a measuring run must not read as an
    acceptance one downstream (a deliberate addition to N2's list). ``fingerprint``
    names the host's digest (N8: ``run.json``'s ``host.fingerprint.digest``, K4's digest,
    comparable with a NodeFingerprint's ``status.digest``), empty when it has none."""
    run = _mapping(document.get("run"))
    host_digest = _text(_mapping(_mapping(document.get("host")).get("fingerprint")).get("digest"))
    run_uid = uid or str(uuid.uuid4())
    phase = _text(document.get("phase"))
    results = tuple(
        _without_segments(result_of(r, artifacts=False)) for r in _objects(document.get("results"))
    )
    reason = REASON_RUN_PHASE_CHANGED
    return Envelope(
        baseline=baseline or document.get("baseline") is True,
        delivery_id=delivery_id(run_uid, reason, phase),
        reason=reason,
        sent_at=format_sent_at(sent_at),
        run=RunRef(
            namespace=LOCAL_NAMESPACE,
            name=_text(run.get("name")),
            uid=run_uid,
            profile=_text(run.get("profile")),
        ),
        phase=phase,
        fingerprint={_text(run.get("name")): host_digest} if host_digest else {},
        results=results,
        summary=summary_of(results),
        provenance=_text(document.get("provenance")),
        certifies_silicon=document.get("certifiesSilicon") is True,
        node_verdicts=node_verdicts_of(
            phase,
            _objects(document.get("results")),
            planned=planned,
            baseline=baseline or document.get("baseline") is True,
        ),
    )


def _without_segments(result: TestResult) -> TestResult:
    if result.segments is None:
        return result
    return dataclasses.replace(result, segments=None)
