"""How a BurnInRun status is stored when it outgrows one object (docs/status-shards.md):
compact records and the evidence shards they point at, the run-start fingerprint's
shards, packed records, and the ConfigMap names and ownership checks behind them.

The result wire (one result <-> JSON) is ``glimmer.verdict.codec``'s; this module is the
storage layout around it, so the dependency-free core knows nothing of ConfigMaps.
Every reading fails closed: evidence that is absent, foreign, altered or unreadable
makes its result Error (unjudged), never its recorded phase.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any, Final

from glimmer.verdict import Phase
from glimmer.verdict.codec import (
    MAX_MESSAGE_BYTES,
    clamp_text,
    int_or_default,
    provenance_from_json,
)
from glimmer.verdict.phases import weakest

JSON = dict[str, Any]


def _text(value: Any) -> str:
    """As the result wire reads free text (``glimmer.verdict.codec``)."""
    return value if isinstance(value, str) else ("" if value is None else str(value))


def _list(value: Any) -> list[Any]:
    """As the result wire reads a list (``glimmer.verdict.codec``)."""
    return list(value) if isinstance(value, list | tuple) else []


# --- compact records (I9: runs with thousands of results) ------------------------------

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


# --- packed records (I9: runs past a few thousand results) ---------------------------

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
