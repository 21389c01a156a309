"""The one result codec: ``TestResultState``/``AttemptRecord`` <-> status JSON (api §4.3-4.5).

Both dispatchers write results in the BurnInRun status vocabulary (the operator into
``status.results[]``, ``glimmer run`` into ``run.json``), so the shape is decided here
once. Decisions, each fail closed or bounded:

- Free text is clamped on a UTF-8 boundary with a visible suffix: messages to
  ``MAX_MESSAGE_BYTES``, violation and notEvaluated reasons to ``MAX_REASON_BYTES``.
  Clamping is idempotent, so a result re-encoded every pass never shrinks again.
- A violation's empty ``reason`` is omitted (the field is optional, as Go's
  ``omitempty`` writes it) and decodes as ``""``; notEvaluated ``reason`` is required
  by the schema and always written.
- Metrics and message are stored once: on a settled result the last attempt decided
  it (D4: the first Failed attempt settles at once, so "first failing, else last" is
  always the last), so when its metrics and message equal the result's they are
  written only on the result and the attempt carries ``deciding: true``. Readers that
  do not know the flag still find the deciding numbers on the result, where api §4.3
  puts them.
- Decoding never crashes and never reads optimistic: an absent or unreadable
  provenance is ``unknown``, an unreadable phase is ``Error``, an unreadable count is
  the value that judges least (0 completed repeats).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any, Final, TypeVar

from glimmer.verdict.phases import Phase, Provenance, weakest
from glimmer.verdict.rollup import AttemptRecord, TestResultState, Trigger
from glimmer.verdict.thresholds import (
    NOT_EVALUATED_REASON,
    Cause,
    NotEvaluated,
    Violation,
    ViolationKind,
)

JSON = dict[str, Any]

#: Result and attempt messages (the runner's last line travels inside them).
MAX_MESSAGE_BYTES: Final = 4096
#: Violation and notEvaluated reasons.
MAX_REASON_BYTES: Final = 1024
#: The marker on the attempt whose metrics and message are stored on the result.
DECIDING: Final = "deciding"


def clamp_text(text: str, limit: int) -> str:
    """``text`` in at most ``limit`` UTF-8 bytes; a cut one ends with a visible suffix
    that gives the original size, and is never cut inside a character."""
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    suffix = f" …[truncated, {len(data)} bytes]"
    keep = max(limit - len(suffix.encode("utf-8")), 0)
    return data[:keep].decode("utf-8", "ignore") + suffix


def _message(text: str) -> str:
    return clamp_text(text, MAX_MESSAGE_BYTES)


def _reason(text: str) -> str:
    return clamp_text(text, MAX_REASON_BYTES)


D = TypeVar("D")


def int_or_default(value: Any, default: D) -> int | D:
    """``value`` as a wire integer (an int, or a string of one), else ``default``: a
    boolean is not a number, and a malformed value never crashes a read."""
    if isinstance(value, bool):
        return default
    if isinstance(value, int):
        return value
    try:
        return int(str(value))
    except ValueError:
        return default


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ("" if value is None else str(value))


def phase_from_json(value: Any) -> Phase:
    """An unreadable phase must never read as settled-and-passed: it is Error."""
    try:
        return Phase(str(value))
    except ValueError:
        return Phase.ERROR


def trigger_from_json(value: Any) -> Trigger:
    try:
        return Trigger(str(value))
    except ValueError:
        return Trigger.INITIAL


def provenance_from_json(value: Any) -> Provenance:
    """Absent or unreadable is UNKNOWN: only the word ``silicon`` reads silicon."""
    word = str(value).lower() if value is not None else ""
    if word == Provenance.SIM:
        return Provenance.SIM
    if word == Provenance.SILICON:
        return Provenance.SILICON
    return Provenance.UNKNOWN


def _metrics(value: Any) -> dict[str, str]:
    if not isinstance(value, Mapping):
        return {}
    return {str(k): _text(v) for k, v in value.items()}


# --- violations and notEvaluated -------------------------------------------------------


def violation_to_json(violation: Violation) -> JSON:
    entry: JSON = {
        "index": violation.index,
        "metric": violation.metric,
        "cause": str(violation.cause),
        "kind": str(violation.kind),
    }
    reason = _reason(violation.reason)
    if reason:
        entry["reason"] = reason
    return entry


def violation_from_json(entry: Mapping[str, Any]) -> Violation:
    """A kind or cause this version does not know reads as unjudged evidence
    (``NotReported``/``Evidence``): never as a hardware verdict."""
    try:
        kind = ViolationKind(str(entry.get("kind")))
    except ValueError:
        kind = ViolationKind.NOT_REPORTED
    try:
        cause = Cause(str(entry.get("cause")))
    except ValueError:
        cause = Cause.EVIDENCE
    return Violation(
        index=int_or_default(entry.get("index"), 0),
        metric=_text(entry.get("metric")),
        kind=kind,
        cause=cause,
        reason=_text(entry.get("reason")),
    )


def not_evaluated_to_json(item: NotEvaluated) -> JSON:
    return {"metric": item.metric, "reason": _reason(item.reason)}


def not_evaluated_from_json(entry: Mapping[str, Any]) -> NotEvaluated:
    reason = entry.get("reason")
    return NotEvaluated(
        metric=_text(entry.get("metric")),
        reason=_text(reason) if reason is not None else NOT_EVALUATED_REASON,
    )


# --- attempts ------------------------------------------------------------------------


def attempt_to_json(record: AttemptRecord, *, deciding: bool = False) -> JSON:
    """One ``TestAttempt``; ``deciding`` leaves metrics and message to the result."""
    entry: JSON = {
        "attempt": record.attempt,
        "trigger": str(record.trigger),
        "phase": str(record.phase),
        "exitCode": record.exit_code,
    }
    if record.node:
        entry["node"] = record.node
    if record.pod_name:
        entry["podName"] = record.pod_name
    if record.pod_uid:
        entry["podUID"] = record.pod_uid
    if record.started_at:
        entry["startedAt"] = record.started_at
    if record.finished_at:
        entry["finishedAt"] = record.finished_at
    if deciding:
        entry[DECIDING] = True
    else:
        if record.metrics:
            entry["metrics"] = dict(sorted(record.metrics.items()))
        message = _message(record.message)
        if message:
            entry["message"] = message
    entry["provenance"] = str(record.provenance)
    return entry


def attempt_from_json(
    entry: Mapping[str, Any],
    *,
    result_metrics: Mapping[str, str] | None = None,
    result_message: str = "",
) -> AttemptRecord:
    """One attempt; a ``deciding`` attempt takes the result's metrics and message."""
    deciding = entry.get(DECIDING) is True
    metrics = entry.get("metrics")
    message = entry.get("message")
    return AttemptRecord(
        attempt=int_or_default(entry.get("attempt"), 1),
        trigger=trigger_from_json(entry.get("trigger")),
        phase=phase_from_json(entry.get("phase")),
        exit_code=int_or_default(entry.get("exitCode", 0), -1),
        message=_text(message) if message is not None or not deciding else result_message,
        metrics=(
            _metrics(metrics) if metrics is not None or not deciding else dict(result_metrics or {})
        ),
        node=_text(entry.get("node")),
        pod_name=_text(entry.get("podName")),
        pod_uid=_text(entry.get("podUID")),
        started_at=entry.get("startedAt"),
        finished_at=entry.get("finishedAt"),
        provenance=provenance_from_json(entry.get("provenance")),
    )


# --- results -------------------------------------------------------------------------


def _deciding_index(state: TestResultState) -> int | None:
    """The attempt whose metrics and message are the settled result's, if any."""
    if state.open or not state.attempts:
        return None
    last = state.attempts[-1]
    same = dict(last.metrics) == dict(state.metrics) and _message(last.message) == _message(
        state.message
    )
    if same and (last.metrics or last.message):
        return len(state.attempts) - 1
    return None


def result_to_json(state: TestResultState, *, base: Mapping[str, Any] | None = None) -> JSON:
    """``base`` (scope, nodes, timestamps, artifacts, axes: untouched) with every
    verdict-owned field replaced by ``state``'s, written together (D4)."""
    out: JSON = dict(base or {})
    out["name"] = state.name
    out["kind"] = state.kind
    out["phase"] = str(state.phase)
    out["repeatsRequired"] = state.repeats_required
    out["repeatsCompleted"] = state.repeats_completed
    out["errorRetries"] = state.error_retries
    deciding = _deciding_index(state)
    out["attempts"] = [
        attempt_to_json(record, deciding=index == deciding)
        for index, record in enumerate(state.attempts)
    ]
    out["provenance"] = str(state.provenance)
    if state.suspect:
        out["suspect"] = True
    else:
        out.pop("suspect", None)
    optional: tuple[tuple[str, Any], ...] = (
        ("message", _message(state.message)),
        ("metrics", dict(sorted(state.metrics.items()))),
        ("violations", [violation_to_json(v) for v in state.violations]),
        ("notEvaluated", [not_evaluated_to_json(n) for n in state.not_evaluated]),
        ("unmeasurable", sorted(state.unmeasurable)),
    )
    for key, value in optional:
        if value:
            out[key] = value
        else:
            out.pop(key, None)
    return out


def _list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list | tuple) else []


def result_from_json(
    result: Mapping[str, Any],
    *,
    required: bool,
    attempts: Iterable[Mapping[str, Any]] | None = None,
) -> TestResultState:
    """The verdict package's view of a result. ``attempts`` overrides the entries to
    decode (the operator leaves its in-flight attempt out)."""
    metrics = _metrics(result.get("metrics"))
    message = _text(result.get("message"))
    entries = _list(result.get("attempts")) if attempts is None else list(attempts)
    return TestResultState(
        name=_text(result.get("name")),
        kind=_text(result.get("kind")),
        required=required,
        phase=phase_from_json(result.get("phase")),
        repeats_required=int_or_default(result.get("repeatsRequired", 1), 1) or 1,
        repeats_completed=int_or_default(result.get("repeatsCompleted", 0), 0),
        error_retries=int_or_default(result.get("errorRetries", 0), 0),
        attempts=tuple(
            attempt_from_json(a, result_metrics=metrics, result_message=message)
            for a in entries
            if isinstance(a, Mapping)
        ),
        message=message,
        metrics=metrics,
        violations=tuple(
            violation_from_json(v)
            for v in _list(result.get("violations"))
            if isinstance(v, Mapping)
        ),
        not_evaluated=tuple(
            not_evaluated_from_json(n)
            for n in _list(result.get("notEvaluated"))
            if isinstance(n, Mapping)
        ),
        unmeasurable=tuple(str(n) for n in _list(result.get("unmeasurable"))),
        provenance=provenance_from_json(result.get("provenance")),
        suspect=bool(result.get("suspect")),
    )


# --- compact records (issue 18: runs with thousands of results) ------------------------

#: The fields of a compact record: a settled unit's identity and what the run's verdict
#: reads of it (phase, provenance, suspect: D5 counts, certification, Measured), so the
#: status stays the checkpoint (E1) and ``kubectl get`` counts stay right. Everything
#: else (metrics, message, attempts, counters, violations, artifacts, scope, times) is
#: evidence, and lives in a shard; only open results need their counters, and they are
#: never compacted.
COMPACT_KEYS: Final = ("name", "kind", "phase", "nodes", "provenance", "suspect", "variantAxes")
#: Where a compact record's full result lives: ``<shard digest>/<index>``.
EVIDENCE_KEY: Final = "evidence"
#: Hex digits of a shard's SHA-256 that name it (and are checked on every read).
SHARD_DIGEST_HEX: Final = 16
#: The key of a shard ConfigMap's payload: a JSON list of full results.
SHARD_PAYLOAD_KEY: Final = "results.json"
SHARD_UNREADABLE: Final = "evidence shard {shard} is missing or unreadable ({why}); result unjudged"
#: What must agree between a compact record and the full result it points at: the
#: unit, its verdict, and what the verdict may certify (provenance, suspect). A shard
#: entry is evidence, never a second opinion on the record: one that says silicon under
#: a record that says sim would otherwise certify what the status never claimed.
_IDENTITY: Final = ("name", "kind", "phase", "nodes", "variantAxes", "provenance")


def canonical(obj: Any) -> bytes:
    """The one byte form a digest is taken of (sorted keys, no spaces, UTF-8)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def shard_digest(payload: str) -> str:
    """The digest that names a shard: of its payload text exactly as stored."""
    return hashlib.sha256(payload.encode()).hexdigest()[:SHARD_DIGEST_HEX]


def shard_name(run_name: str, digest: str) -> str:
    """The ConfigMap that holds shard ``digest`` of run ``run_name``."""
    return f"{run_name[:200]}-ev-{digest}"


def is_compact(result: Mapping[str, Any]) -> bool:
    return EVIDENCE_KEY in result


def evidence_ref(record: Mapping[str, Any]) -> tuple[str, int] | None:
    """``(shard digest, index)`` of a compact record, None when unreadable."""
    digest, _, index = _text(record.get(EVIDENCE_KEY)).partition("/")
    position = int_or_default(index, None)
    if not digest or position is None or position < 0:
        return None
    return digest, position


def compact_result(result: Mapping[str, Any], *, shard: str, index: int) -> JSON:
    """``result``'s compact record: its verdict and identity, and where the rest is."""
    record: JSON = {k: result[k] for k in COMPACT_KEYS if k in result}
    record[EVIDENCE_KEY] = f"{shard}/{index}"
    return record


def _unjudged(
    record: Mapping[str, Any], *, why: str, entry: Mapping[str, Any] | None = None
) -> JSON:
    """Fail closed: a compact record whose evidence cannot be read is Error (unjudged),
    never its recorded phase; identity stays, so it is counted, never dropped. When the
    shard ``entry`` was read but disagrees, the Error is as weak as the weaker side:
    sim if either says sim, suspect if either says suspect."""
    out: JSON = {k: record[k] for k in COMPACT_KEYS if k in record}
    out["phase"] = str(Phase.ERROR)
    if entry is not None:
        sides = (record.get("provenance"), entry.get("provenance"))
        out["provenance"] = str(weakest(provenance_from_json(p) for p in sides))
        if _suspect(record) or _suspect(entry):
            out["suspect"] = True
    shard = _text(record.get(EVIDENCE_KEY)).partition("/")[0]
    out["message"] = clamp_text(SHARD_UNREADABLE.format(shard=shard, why=why), MAX_MESSAGE_BYTES)
    return out


def expand_result(record: Mapping[str, Any], shards: Mapping[str, Any]) -> JSON:
    """The full result a record stands for. ``shards`` maps a shard digest to its
    decoded payload (a list of full results), or to None when it could not be read. A
    record that is not compact is itself; one whose shard is absent or unreadable, or
    whose entry is missing or disagrees with it (name, kind, phase, nodes, axes,
    provenance, suspect), reads Error."""
    if not is_compact(record):
        return dict(record)
    ref = evidence_ref(record)
    if ref is None:
        return _unjudged(record, why="unreadable reference")
    payload = shards.get(ref[0])
    if not isinstance(payload, list):
        return _unjudged(record, why="absent, foreign or altered")
    full = payload[ref[1]] if ref[1] < len(payload) else None
    if not isinstance(full, Mapping):
        return _unjudged(record, why=f"no entry {ref[1]}")
    for key in _IDENTITY:
        if full.get(key) != record.get(key):
            return _unjudged(record, why=f"{key} disagrees with the status", entry=full)
    if _suspect(full) != _suspect(record):
        return _unjudged(record, why="suspect disagrees with the status", entry=full)
    return dict(full)


def _suspect(result: Mapping[str, Any]) -> bool:
    """``suspect`` as :func:`result_from_json` reads it (absent is False)."""
    return bool(result.get("suspect"))


def shard_digests(results: Iterable[Mapping[str, Any]]) -> list[str]:
    """The shards ``results`` reference (by digest), in first-reference order."""
    names: dict[str, None] = {}
    for result in results:
        if isinstance(result, Mapping) and is_compact(result):
            ref = evidence_ref(result)
            if ref is not None:
                names[ref[0]] = None
    return list(names)


def _owned_payload(config_map: Any, *, uid: str, digest: str, key: str) -> Any:
    """The JSON under ``key`` of a ConfigMap owned by the run ``uid`` whose text is the
    bytes ``digest`` names; None for anything else."""
    if not isinstance(config_map, Mapping):
        return None
    metadata = config_map.get("metadata")
    owners = metadata.get("ownerReferences") if isinstance(metadata, Mapping) else None
    if not any(isinstance(o, Mapping) and o.get("uid") == uid for o in _list(owners)):
        return None
    data = config_map.get("data")
    text = data.get(key) if isinstance(data, Mapping) else None
    if not isinstance(text, str) or shard_digest(text) != digest:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def decode_shard_payload(config_map: Any, *, uid: str, digest: str) -> list[Any] | None:
    """A shard ConfigMap's payload, or None when it is absent, not owned by the run
    ``uid``, unreadable, or not the bytes its ``digest`` names: every result it holds
    then reads Error (:func:`expand_result`)."""
    payload = _owned_payload(config_map, uid=uid, digest=digest, key=SHARD_PAYLOAD_KEY)
    return payload if isinstance(payload, list) else None


# --- the run-start fingerprint of a large run ------------------------------------------

#: The status field naming the fingerprint shards, and a shard's payload key.
FINGERPRINT_SHARD_KEY: Final = "fingerprintShards"
FINGERPRINT_PAYLOAD_KEY: Final = "fingerprint.json"
FINGERPRINT_UNREADABLE: Final = (
    "run-start fingerprint unavailable: a shard of {name} is missing or altered"
)


def fingerprint_shard_name(run_name: str, digest: str) -> str:
    """The ConfigMap that holds the run-start fingerprint of run ``run_name``."""
    return f"{run_name[:200]}-fp-{digest}"


def decode_fingerprint_payload(config_map: Any, *, uid: str, digest: str) -> dict[str, str] | None:
    """A fingerprint shard's node -> text map, or None (absent, foreign, altered)."""
    payload = _owned_payload(config_map, uid=uid, digest=digest, key=FINGERPRINT_PAYLOAD_KEY)
    if not isinstance(payload, Mapping):
        return None
    return {str(k): v for k, v in payload.items() if isinstance(v, str)}


# --- packed records (issue 18: runs past a few thousand results) ---------------------

#: The status field that holds packed groups of compact records.
PACKED_KEY: Final = "packedResults"
#: What every member of a packed group shares (besides its shard): a compact record
#: without its node and index.
PACKED_SHARED: Final = ("name", "kind", "phase", "provenance", "suspect", "variantAxes")
PACKED_UNREADABLE: Final = "packed record of shard {shard} is unreadable ({why}); result unjudged"


def packable(record: Mapping[str, Any]) -> bool:
    """A compact record of one node with a readable reference: only these pack (one
    with no node or several keeps its own record, as does anything not compact)."""
    if not is_compact(record) or evidence_ref(record) is None:
        return False
    nodes = record.get("nodes")
    return isinstance(nodes, list) and len(nodes) == 1 and isinstance(nodes[0], str)


def pack_records(records: Iterable[Mapping[str, Any]]) -> list[JSON]:
    """``records`` (each :func:`packable`) as packed groups: one per shard and shared
    fields, members in shard order, groups in the order their first record came (so
    results read back in the order they settled, and packing the unpacked groups
    again gives the same bytes). A record given twice is kept once;
    two records that differ but name one shard entry are both kept (expansion then
    reads the one that disagrees with its shard as Error)."""
    groups: dict[tuple[str, bytes], tuple[JSON, dict[tuple[int, str], None]]] = {}
    for record in records:
        ref = evidence_ref(record)
        if ref is None:
            continue
        shared = {k: record[k] for k in PACKED_SHARED if k in record}
        key = (ref[0], canonical(shared))
        if key not in groups:
            groups[key] = ({EVIDENCE_KEY: ref[0], **shared}, {})
        groups[key][1][(ref[1], str(record["nodes"][0]))] = None
    packed: list[JSON] = []
    for head, members in groups.values():
        ordered = sorted(members)
        packed.append(head | {"indexes": [i for i, _ in ordered], "nodes": [n for _, n in ordered]})
    return packed


def unpack_records(groups: Any) -> list[JSON]:
    """The compact records packed ``groups`` stand for, each equal to what
    :func:`compact_result` writes. Fail closed: a group whose members cannot be
    read (nodes and indexes of unequal length, a non-string node, a bad index) gives
    each node it names as an Error record (unjudged, still counted); a group whose
    nodes cannot be read at all names no unit, and gives nothing."""
    out: list[JSON] = []
    for group in _list(groups):
        if not isinstance(group, Mapping):
            continue
        digest = _text(group.get(EVIDENCE_KEY))
        nodes, indexes = _list(group.get("nodes")), _list(group.get("indexes"))
        shared = {k: group[k] for k in PACKED_SHARED if k in group}
        readable = bool(digest) and "/" not in digest and len(nodes) == len(indexes)
        for position, node in enumerate(nodes):
            if not isinstance(node, str):
                continue
            index = int_or_default(indexes[position], None) if readable else None
            if index is None or index < 0:
                message = PACKED_UNREADABLE.format(shard=digest, why="its members")
                out.append(shared | {"nodes": [node], "phase": str(Phase.ERROR),
                                     "message": message, EVIDENCE_KEY: f"{digest}/"})  # fmt: skip
            else:
                out.append(shared | {"nodes": [node], EVIDENCE_KEY: f"{digest}/{index}"})
    return out


def packed_members(
    groups: Any,
) -> dict[tuple[str, str], tuple[str, tuple[tuple[str, str], ...], Mapping[str, Any]]]:
    """``(evidence, node)`` -> ``(name, variant cell, shared fields)`` of every readable
    member of packed ``groups`` (what :func:`unpack_records` reads as a compact record),
    read straight off the groups: a writer checks thousands of records against them."""
    out: dict[tuple[str, str], tuple[str, tuple[tuple[str, str], ...], Mapping[str, Any]]] = {}
    for group in _list(groups):
        if not isinstance(group, Mapping):
            continue
        digest = _text(group.get(EVIDENCE_KEY))
        nodes, indexes = _list(group.get("nodes")), _list(group.get("indexes"))
        if not digest or "/" in digest or len(nodes) != len(indexes):
            continue
        shared = {k: group[k] for k in PACKED_SHARED if k in group}
        name, _, cell = unit_key(shared)
        for node, index in zip(nodes, indexes, strict=True):
            position = int_or_default(index, None)
            if isinstance(node, str) and position is not None and position >= 0:
                out[(f"{digest}/{position}", node)] = (name, cell, shared)
    return out


def packed_units(
    members: Mapping[tuple[str, str], tuple[str, tuple[tuple[str, str], ...], Mapping[str, Any]]],
) -> dict[tuple[str, tuple[str, ...], tuple[tuple[str, str], ...]], Mapping[str, Any]]:
    """:func:`unit_key` -> shared fields of every member :func:`packed_members` found."""
    return {(name, (node,), cell): shared for (_, node), (name, cell, shared) in members.items()}


def same_record(record: Mapping[str, Any], shared: Mapping[str, Any]) -> bool:
    """Whether compact ``record`` is the packed member whose shared fields are ``shared``
    (its node and reference already matched): nothing more, nothing different."""
    extra = set(record) - {"nodes", EVIDENCE_KEY}
    return extra == set(shared) and all(record[k] == shared[k] for k in extra)


def unit_key(
    result: Mapping[str, Any],
) -> tuple[str, tuple[str, ...], tuple[tuple[str, str], ...]]:
    """What a result is the result *of*: its planned test, nodes and variant cell."""
    nodes = tuple(str(n) for n in _list(result.get("nodes")))
    axes = result.get("variantAxes")
    cell = (
        tuple(sorted((str(k), str(v)) for k, v in axes.items()))
        if isinstance(axes, Mapping)
        else ()
    )
    return _text(result.get("name")), nodes, cell


def status_results(status: Mapping[str, Any]) -> list[JSON]:
    """Every result a run status holds, each unit once: its packed records, then
    ``results`` (each a dict; anything else is dropped). A unit in ``results``
    supersedes its packed record: code that edits a status writes back every result
    its view read, and the write packs them again. The one reading of
    ``status.results`` that sees a run of any size."""
    listed = [r for r in _list(status.get("results")) if isinstance(r, dict)]
    packed = unpack_records(status.get(PACKED_KEY))
    if not packed:
        return listed
    units = {unit_key(r) for r in listed}
    return [r for r in packed if unit_key(r) not in units] + listed
