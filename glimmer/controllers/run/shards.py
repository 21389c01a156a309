"""Evidence shards: how a run with thousands of results keeps its status under etcd's limit.

The design (docs/status-shards.md): while a run object fits :data:`SHARD_AT_BYTES` its
status is written exactly as before (api §4, wire compatible). Beyond it, the write
moves the evidence of *settled* results (metrics, message, attempts, violations,
artifacts, times) into immutable ConfigMaps owned by the run, and leaves in
``status.results[]`` a compact record per result: its identity, its verdict and its
counters (so the status stays the checkpoint, E1: no pass needs a shard), plus
``evidenceShard`` and ``evidenceDigest``.

Ordering is the atomicity: every shard a status write references is created (and read
back as ours) *before* that write is sent; a failed shard create fails the write, so
no status ever names a shard that was not durable. Shards are content-addressed
(their name carries the digest of their payload) and ``immutable``, so a retried write
recreates the same name with the same bytes, and nothing ever rewrites a shard a status
already references. A write that loses (409) leaves an orphan shard that the run's
deletion collects (ownerReference). Readers expand compact records through
:func:`hydrate`, and a shard missing or unreadable makes its results Error (unjudged),
never dropped and never their recorded phase.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

from glimmer.api import API_VERSION, GROUP, status_layout
from glimmer.controllers.kit import names
from glimmer.controllers.kit.view import RunView
from glimmer.engine import CONFIGMAPS, ApiError, KubeClient, is_already_exists
from glimmer.plan import label_value
from glimmer.sinks import build
from glimmer.verdict import codec

JSON = dict[str, Any]

#: A run object larger than this (as the JSON a write sends) has its settled results'
#: evidence moved to shards on the next status write. Half the status budget: the
#: status then shrinks back to compact records plus the open results.
SHARD_AT_BYTES: Final = 512 * 1024
#: Over ``SHARD_AT_BYTES``, a write shards only once this much evidence could move.
SHARD_MIN_BYTES: Final = 256 * 1024
#: The most payload one shard carries (a ConfigMap holds at most 1 MiB of data).
SHARD_MAX_BYTES: Final = 768 * 1024
#: Compact records weighing more than this in ``status.results`` are packed (ten times
#: smaller: ~20 bytes a result instead of ~180), so a run's status grows by its node
#: names, not by its records, and tens of thousands of results fit.
PACK_AT_BYTES: Final = 64 * 1024
#: A run-start fingerprint larger than this moves to owned shards (about 500 nodes).
FINGERPRINT_INLINE_BYTES: Final = 64 * 1024
#: The ConfigMap key that holds the payload: JSON, evidence digest -> full result.
PAYLOAD_KEY: Final = status_layout.SHARD_PAYLOAD_KEY
#: Marks a ConfigMap as a run's evidence shard.
SHARD_LABEL: Final = f"{GROUP}/evidence-shard"


class ShardError(Exception):
    """A shard could not be made durable; the status write that needed it is not sent.
    ``refused``: the apiserver refused it for what it is (4xx: size, quota, RBAC, a
    foreign object under its name), so retrying it unchanged cannot help."""

    def __init__(self, detail: str, *, refused: bool) -> None:
        super().__init__(detail)
        self.refused = refused


def shardable(result: Mapping[str, Any]) -> bool:
    """Settled, single-node, not yet compact: only these move. An open result keeps its
    attempts in status (the next attempt's number and trigger come from them), and a
    Pair/Group result stays whole (links read their members' histories)."""
    if status_layout.is_compact(result):
        return False
    if not codec.phase_from_json(result.get("phase")).terminal:
        return False
    nodes = result.get("nodes")
    return not (isinstance(nodes, list) and len(nodes) > 1)


def _shard_body(view: RunView, *, name: str, payload: str, key: str = PAYLOAD_KEY) -> JSON:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": name,
            "namespace": view.namespace,
            "labels": {names.RUN_LABEL: label_value(view.name), SHARD_LABEL: "true"},
            "ownerReferences": [
                {
                    "apiVersion": API_VERSION,
                    "kind": "BurnInRun",
                    "name": view.name,
                    "uid": view.uid,
                    "controller": False,
                    "blockOwnerDeletion": False,
                }
            ],
        },
        "immutable": True,
        "data": {key: payload},
    }


async def offload_fingerprint(client: KubeClient, run: JSON) -> None:
    """Move ``run``'s run-start fingerprint (the body about to be written) to owned
    shards when it is over :data:`FINGERPRINT_INLINE_BYTES` (a fleet's worth of node
    descriptions, written once, read only by reports), leaving their digests in
    ``status.fingerprintShards``. A shard the apiserver refuses leaves the map inline
    (the status budget then decides); a transient failure is :class:`ShardError`."""
    view = RunView(run)
    fingerprint = view.status.get("fingerprint")
    if not isinstance(fingerprint, dict):
        return
    if len(status_layout.canonical(fingerprint)) <= FINGERPRINT_INLINE_BYTES:
        return
    chunks: list[dict[str, Any]] = [{}]
    size = 0
    for node, text in sorted(fingerprint.items()):
        weight = len(status_layout.canonical({node: text}))
        if chunks[-1] and size + weight > SHARD_MAX_BYTES:
            chunks.append({})
            size = 0
        chunks[-1][node] = text
        size += weight
    bodies, digests = [], []
    for chunk in chunks:
        payload = status_layout.canonical(chunk).decode()
        digest = status_layout.shard_digest(payload)
        name = status_layout.fingerprint_shard_name(view.name, digest)
        key = status_layout.FINGERPRINT_PAYLOAD_KEY
        bodies.append(_shard_body(view, name=name, payload=payload, key=key))
        digests.append(digest)
    try:
        await create_shards(client, bodies)
    except ShardError as err:
        if not err.refused:
            raise
        return
    view.status.pop("fingerprint")
    view.status[status_layout.FINGERPRINT_SHARD_KEY] = digests


def plan_offload(run: JSON) -> list[JSON]:
    """Compact ``run``'s settled results in place; the shard bodies that must exist
    before the edited status may be written (empty when nothing moved)."""
    view = RunView(run)
    results = view.status.get("results")
    if not isinstance(results, list):
        return []
    chunks: list[list[int]] = [[]]
    size = 0
    for index, result in enumerate(results):
        if not isinstance(result, dict) or not shardable(result):
            continue
        weight = _weight(result)
        if weight > SHARD_MAX_BYTES:
            continue  # no shard can hold it: it stays whole, and the budget decides
        if chunks[-1] and size + weight > SHARD_MAX_BYTES:
            chunks.append([])
            size = 0
        chunks[-1].append(index)
        size += weight
    bodies: list[JSON] = []
    for chunk in (c for c in chunks if c):
        payload = status_layout.canonical([results[i] for i in chunk]).decode()
        digest = status_layout.shard_digest(payload)
        for position, i in enumerate(chunk):
            results[i] = status_layout.compact_result(results[i], shard=digest, index=position)
        name = status_layout.shard_name(view.name, digest)
        bodies.append(_shard_body(view, name=name, payload=payload))
    return bodies


def _ours(current: Mapping[str, Any], body: Mapping[str, Any]) -> bool:
    """An existing shard of that name is the one we would write: same bytes, same owner."""
    owners = (current.get("metadata") or {}).get("ownerReferences") or []
    uid = body["metadata"]["ownerReferences"][0]["uid"]
    owned = any(isinstance(o, Mapping) and o.get("uid") == uid for o in owners)
    return owned and (current.get("data") or {}) == body["data"]


async def create_shards(client: KubeClient, bodies: Sequence[JSON]) -> None:
    """Make every shard durable, or raise :class:`ShardError` (nothing is then written)."""
    for body in bodies:
        namespace = str(body["metadata"]["namespace"])
        name = str(body["metadata"]["name"])
        try:
            await client.create(CONFIGMAPS, body, namespace=namespace)
        except ApiError as err:
            if not is_already_exists(err):
                raise ShardError(
                    f"evidence shard {name} could not be created: {err}",
                    refused=400 <= err.status < 500 and err.status != 429,
                ) from err
            current = await client.get(CONFIGMAPS, name, namespace=namespace)
            if not _ours(current, body):
                raise ShardError(
                    f"evidence shard {name} exists with other content or owner", refused=True
                ) from err


def _weight(result: Mapping[str, Any]) -> int:
    """Bytes a result takes in a shard's payload (with its separator)."""
    return len(status_layout.canonical(result)) + 1


def _movable_bytes(run: JSON) -> int:
    """The evidence bytes an offload could move now (results no shard can hold stay)."""
    results = RunView(run).status.get("results")
    if not isinstance(results, list):
        return 0
    weights = (_weight(r) for r in results if isinstance(r, dict) and shardable(r))
    return sum(w for w in weights if w <= SHARD_MAX_BYTES)


async def offload(
    client: KubeClient, run: JSON, *, at: int = SHARD_AT_BYTES, must_at: int | None = None
) -> None:
    """Compact ``run`` (the body about to be written) in place, after creating the
    shards that hold the evidence it moves, when it is over ``at`` bytes and at least
    :data:`SHARD_MIN_BYTES` could move (so shards stay few and large), or whenever it
    is over ``must_at`` (close to the status budget)."""
    size = len(json.dumps(run, separators=(",", ":"), ensure_ascii=False).encode())
    if size <= at:
        return
    if (must_at is None or size <= must_at) and _movable_bytes(run) < SHARD_MIN_BYTES:
        return
    bodies = plan_offload(run)
    await create_shards(client, bodies)


def _pack_weight(records: Sequence[Mapping[str, Any]]) -> int:
    return sum(len(status_layout.canonical(r)) + 1 for r in records)


def drop_packed_twins(run: JSON) -> None:
    """Drop from ``run``'s ``results`` (the body about to be written) what its packed
    records already hold: a compact record equal to a packed member (a pass writes back
    every result its view read, packed ones included), and a settled result whose unit
    is packed (a pass that writes twice sends its settled results again, in full, after
    its first write packed them; a settled result never changes, and the packed one's
    shard is durable). Runs before :func:`offload`, so no second shard is made of the
    same evidence, and before the body is copied, so a pass's write-back costs nothing.
    Only assigns new lists: ``run``'s own lists are never edited."""
    status = RunView(run).status
    existing = status.get(status_layout.PACKED_KEY)
    raw = status.get("results")
    if not existing or not isinstance(raw, list):
        return
    members = status_layout.packed_members(existing)
    units = status_layout.packed_units(members)

    def twin(result: Any) -> bool:
        if not isinstance(result, Mapping):
            return False
        if status_layout.is_compact(result):
            nodes = result.get("nodes")
            node = str(nodes[0]) if isinstance(nodes, list) and len(nodes) == 1 else ""
            member = members.get((str(result.get(status_layout.EVIDENCE_KEY)), node))
            return member is not None and status_layout.same_record(result, member[2])
        if not codec.phase_from_json(result.get("phase")).terminal:
            return False
        shared = units.get(status_layout.unit_key(result))
        # Only the very verdict that was packed: a result that differs stays, supersedes
        # the packed one on read, and is compacted (never packed beside it) later.
        return shared is not None and shared == {
            k: result[k] for k in status_layout.PACKED_SHARED if k in result
        }

    status["results"] = [r for r in raw if not twin(r)]


def pack(run: JSON, *, at: int | None = None) -> None:
    """Pack the compact records of ``run`` (the body about to be written) into
    ``status.packedResults`` in place, once they weigh more than ``at``; a status that
    packs already packs every new one too, so a record is never in both places.

    The body may still hold a packed record a second time, unpacked in ``results``
    (:func:`drop_packed_twins` runs first and removes those it can): each is kept
    once. Pure: packed records reference shards that are already durable."""
    status = RunView(run).status
    existing = status.get(status_layout.PACKED_KEY)
    raw = status.get("results")
    results = raw if isinstance(raw, list) else []
    fresh = [r for r in results if isinstance(r, Mapping) and status_layout.packable(r)]
    limit = PACK_AT_BYTES if at is None else at
    if not fresh or (not existing and _pack_weight(fresh) <= limit):
        return  # nothing new to pack (what was packed is already, once: drop_packed_twins)
    # A record of a unit a packed member already stands for (and differs from it, or
    # drop_packed_twins would have dropped it) stays in ``results``, where it
    # supersedes the member on read (and expands to Error if it disagrees with its
    # shard): never a second packed result for the unit.
    held = status_layout.packed_units(status_layout.packed_members(existing))
    fresh = [r for r in fresh if status_layout.unit_key(r) not in held]
    if not fresh:
        return
    unpacked = status_layout.unpack_records(existing)
    packing = {id(r) for r in fresh}
    rest = [r for r in results if id(r) not in packing]
    # An unreadable member unpacks as an Error record: it stays, counted, in results.
    unreadable = [r for r in unpacked if not status_layout.packable(r)]
    if unreadable:
        kept = {status_layout.canonical(r) for r in rest if isinstance(r, Mapping)}
        unreadable = [r for r in unreadable if status_layout.canonical(r) not in kept]
    status[status_layout.PACKED_KEY] = status_layout.pack_records(
        [r for r in unpacked if status_layout.packable(r)] + fresh
    )
    status["results"] = unreadable + rest


#: Readers (sinks, reports, tests) expand compact records through these, kept with the
#: envelope builder so every layer that shows results reads shards the same way.
read_shards = build.read_evidence
hydrate = build.expand_run


async def hydrated(client: KubeClient, run: Mapping[str, Any]) -> JSON:
    """``run`` with every result in full, read through its shards."""
    return build.expand_run(run, await build.read_evidence(client, run))
