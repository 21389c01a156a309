"""The checkpoint store: how a run's status is written (E1: the status is the checkpoint).

One write, :func:`write_status`, keeps a status writable however large its run grows:
evidence shards, packed records, and the size budget, in that order.

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
``glimmer.sinks.build.expand_run``, and a shard missing or unreadable makes its results
Error (unjudged), never dropped and never their recorded phase.

The status size budget (I21). etcd refuses a request over ~1.5 MiB (the
apiserver answers 500 "etcdserver: request is too large" up to 2 MiB, 500
"ResourceExhausted ... larger than max" up to 3 MiB, then 413), and a run whose status
has grown past that would fail every write forever while holding its nodes. So every
status write is measured first (the whole object as JSON, which is what is sent) against
:data:`STATUS_BUDGET_BYTES` (1 MiB, leaving room for managedFields and metadata):

1. over budget, the finished attempts are compacted oldest first (by ``finishedAt``):
   their ``metrics`` and ``message`` go, replaced by a marker message, until the status
   fits. The attempt's phase, trigger, exit code, node, pod and times stay, and so does
   every result with its phase, message, metrics and violations: the verdict and the
   evidence that decided it are never dropped;
2. still over, the write is not sent: :class:`StatusTooLargeError` (the same error a
   write the apiserver refuses for size becomes), which the reconciler turns into a
   terminal Error with a ``StatusSizeBudget`` condition, never a retry loop;
3. the terminal write (``terminal=True``) must fit, so it may go further: result
   metrics and messages are clamped, then attempt histories dropped; each result keeps
   its name, nodes, phase, counters and violations (one verdict per unit). It is sent
   even if it is still over (the apiserver decides); after an apiserver size refusal it
   aims at half the refused size.
"""

from __future__ import annotations

import copy
import functools
import json
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any, Final

from glimmer.api import API_VERSION, GROUP, clamp_message, status_layout
from glimmer.controllers.kit import names
from glimmer.controllers.kit.names import RUNS
from glimmer.controllers.kit.view import ObjectView, RunView
from glimmer.engine import CONFIGMAPS, ApiError, KubeClient, copy_json, is_already_exists
from glimmer.plan import PinnedPlan, PlanDecodeError, label_value
from glimmer.plan.gates import cohort_gated_tests
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


#: The status field the cohort judgement checkpoints (C9; written by the run controller).
COHORT_VERDICTS: Final = "cohortVerdicts"


def awaiting_cohort(run: Mapping[str, Any]) -> frozenset[str]:
    """Tests whose results stay whole in the status (C10): those with a relative gate
    whose cohort judgement is not yet in ``status.cohortVerdicts``. The judgement reads
    every member's metric at the verdict; a member whose evidence had moved to a shard
    could not be judged (nor rewritten: its record would disagree with its shard)."""
    view = RunView(run)
    gated = _cohort_gated(view.plan_text or "")
    if not gated:
        return gated
    judged = {
        str(record.get("test"))
        for record in view.status.get(COHORT_VERDICTS) or []
        if isinstance(record, Mapping)
    }
    return gated - judged


@functools.lru_cache(maxsize=64)
def _cohort_gated(plan_text: str) -> frozenset[str]:
    """:func:`cohort_gated_tests` of a pinned plan's text, decoded once per plan (a large
    run's every status write asks; the pinned plan never changes). Unreadable: none."""
    try:
        plan = PinnedPlan.from_annotation(plan_text) if plan_text else None
    except PlanDecodeError:
        return frozenset()
    return frozenset() if plan is None else cohort_gated_tests(plan)


def _movable(result: Any, keep_whole: frozenset[str]) -> bool:
    return isinstance(result, dict) and shardable(result) and result.get("name") not in keep_whole


def plan_offload(run: JSON, *, keep_whole: frozenset[str] = frozenset()) -> list[JSON]:
    """Compact ``run``'s settled results in place, except those of the tests named in
    ``keep_whole``; the shard bodies that must exist before the edited status may be
    written (empty when nothing moved)."""
    view = RunView(run)
    results = view.status.get("results")
    if not isinstance(results, list):
        return []
    chunks: list[list[int]] = [[]]
    size = 0
    for index, result in enumerate(results):
        if not _movable(result, keep_whole):
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
    uid = str(ObjectView(body).owner_references[0].get("uid") or "")
    return ObjectView(current).owned_by(uid) and (current.get("data") or {}) == body["data"]


async def create_shards(client: KubeClient, bodies: Sequence[JSON]) -> None:
    """Make every shard durable, or raise :class:`ShardError` (nothing is then written)."""
    for body in bodies:
        shard = ObjectView(body)
        namespace, name = shard.namespace, shard.name
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


def _movable_bytes(run: JSON, keep_whole: frozenset[str] = frozenset()) -> int:
    """The evidence bytes an offload could move now (results no shard can hold stay)."""
    results = RunView(run).status.get("results")
    if not isinstance(results, list):
        return 0
    weights = (_weight(r) for r in results if _movable(r, keep_whole))
    return sum(w for w in weights if w <= SHARD_MAX_BYTES)


async def offload(
    client: KubeClient, run: JSON, *, at: int = SHARD_AT_BYTES, must_at: int | None = None
) -> int | None:
    """Compact ``run`` (the body about to be written) in place, after creating the
    shards that hold the evidence it moves, when it is over ``at`` bytes and at least
    :data:`SHARD_MIN_BYTES` could move (so shards stay few and large), or whenever it
    is over ``must_at`` (close to the status budget). The body's size when nothing
    moved (what it measured), else None.

    Results of a test whose cohort judgement is pending stay whole (C10) until the
    status is that close to its budget: then they move too, and the judgement counts
    them as excluded rather than the run failing its own status write."""
    size = encoded_size(run)
    if size <= at:
        return size
    must = must_at is not None and size > must_at
    keep_whole = frozenset() if must else awaiting_cohort(run)
    if not must and _movable_bytes(run, keep_whole) < SHARD_MIN_BYTES:
        return size
    bodies = plan_offload(run, keep_whole=keep_whole)
    await create_shards(client, bodies)
    return None if bodies else size


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
    members, units = _packed_index(RunView(run).uid, existing)

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


_Members = dict[tuple[str, str], tuple[str, tuple[tuple[str, str], ...], Mapping[str, Any]]]
_Units = dict[tuple[str, tuple[str, ...], tuple[tuple[str, str], ...]], Mapping[str, Any]]
#: Per run UID: the packed records last read, and their members and units. A large run
#: writes its status hundreds of times while its packed records change a few times, and
#: reading them is a loop over every packed result; an equal list (compared whole, in
#: C) reads the same.
_PACKED_READ: OrderedDict[str, tuple[Any, _Members, _Units]] = OrderedDict()
_PACKED_READ_RUNS: Final = 16


def _packed_index(uid: str, packed: Any) -> tuple[_Members, _Units]:
    """:func:`~glimmer.api.status_layout.packed_members` and ``packed_units`` of
    ``packed`` (read again unless equal to the list last read for the run ``uid``)."""
    seen = _PACKED_READ.get(uid)
    if seen is not None and seen[0] == packed:
        _PACKED_READ.move_to_end(uid)
        return seen[1], seen[2]
    members = status_layout.packed_members(packed)
    units = status_layout.packed_units(members)
    _PACKED_READ[uid] = (copy_json(packed), members, units)
    while len(_PACKED_READ) > _PACKED_READ_RUNS:
        _PACKED_READ.popitem(last=False)
    return members, units


def pack(run: JSON, *, at: int | None = None) -> bool:
    """Pack the compact records of ``run`` (the body about to be written) into
    ``status.packedResults`` in place, once they weigh more than ``at``; a status that
    packs already packs every new one too, so a record is never in both places. Whether
    it packed anything.

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
        return False  # nothing new to pack (what was packed is already: drop_packed_twins)
    # A record of a unit a packed member already stands for (and differs from it, or
    # drop_packed_twins would have dropped it) stays in ``results``, where it
    # supersedes the member on read (and expands to Error if it disagrees with its
    # shard): never a second packed result for the unit.
    held = status_layout.packed_units(status_layout.packed_members(existing))
    fresh = [r for r in fresh if status_layout.unit_key(r) not in held]
    if not fresh:
        return False
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
    return True


# --- the size budget ------------------------------------------------------------------

#: The most a run object may weigh as JSON when its status is written (see the module
#: docstring); etcd's own limit is 1.5 MiB for the whole request.
STATUS_BUDGET_BYTES: Final = 1 << 20
COMPACTED: Final = "compacted to fit the status size budget (metrics and message dropped)"
#: Result messages are cut to this many bytes in a terminal write that must shrink.
TERMINAL_MESSAGE_BYTES: Final = 256
_TOO_LARGE_HINTS: Final = (
    "request is too large",
    "request entity too large",
    "larger than max",
    "resourceexhausted",
    "too long",
)


class StatusTooLargeError(Exception):
    """The run status does not fit the size budget (ours, or the apiserver's)."""

    def __init__(
        self, *, run: Mapping[str, Any], size: int, detail: str, by_apiserver: bool = False
    ) -> None:
        super().__init__(detail)
        #: The run as it was to be written (its resourceVersion is still current).
        self.run = copy.deepcopy(dict(run))
        self.size = size
        self.detail = detail
        #: The apiserver refused it (its limit is below our budget): the terminal write
        #: then aims at half the refused size.
        self.by_apiserver = by_apiserver


def encoded_size(obj: Any) -> int:
    """Bytes of ``obj`` as the compact JSON a write sends."""
    return len(json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode())


def too_large(err: ApiError) -> bool:
    """Whether the apiserver refused a write for the object's size (413, or the 500 an
    etcd limit surfaces as, or a 422 for a field that is too long)."""
    if err.status == 413:
        return True
    if err.status not in (422, 500):
        return False
    message = str((err.body or {}).get("message", "") if isinstance(err.body, Mapping) else "")
    text = f"{err.reason} {message}".lower()
    return any(hint in text for hint in _TOO_LARGE_HINTS)


def api_message(err: ApiError) -> str:
    """The apiserver's own words for a refusal: ``<code> <reason>: <message>``."""
    body = err.body if isinstance(err.body, Mapping) else {}
    message = str(body.get("message") or "")
    reason = str(body.get("reason") or err.reason or "")
    return f"{err.status} {reason}: {message}".strip().rstrip(":")


def _compact_attempts(status: JSON, *, size: int, budget: int) -> int:
    """Step 1: oldest finished attempts lose metrics and message first; the new size."""
    entries: list[tuple[str, int, int, JSON]] = []
    for r_index, result in enumerate(status.get("results") or []):
        for a_index, attempt in enumerate(result.get("attempts") or []):
            if attempt.get("phase") in ("Running", "Pending"):
                continue  # in flight: the newest evidence, and tiny
            if "metrics" in attempt or ("message" in attempt and attempt["message"] != COMPACTED):
                entries.append((str(attempt.get("finishedAt") or ""), r_index, a_index, attempt))
    for _, _, _, attempt in sorted(entries, key=lambda e: e[:3]):
        if size <= budget:
            break
        before = encoded_size(attempt)
        attempt.pop("metrics", None)
        attempt["message"] = COMPACTED
        size -= before - encoded_size(attempt)
    return size


def _compact_terminal(status: JSON, *, size: int, budget: int) -> int:
    """Step 3 (terminal write only): clamp result text, then drop attempt histories."""
    results = status.get("results") or []
    for result in results:
        if size <= budget:
            return size
        before = encoded_size(result)
        if "message" in result:
            result["message"] = clamp_message(str(result["message"]), limit=TERMINAL_MESSAGE_BYTES)
        for key in ("metrics", "unmeasurable", "notEvaluated", "artifacts"):
            result.pop(key, None)
        size -= before - encoded_size(result)
    for result in results:
        if size <= budget:
            return size
        before = encoded_size(result)
        result.pop("attempts", None)
        size -= before - encoded_size(result)
    return size


def fit_status(
    run: JSON, *, budget: int = STATUS_BUDGET_BYTES, terminal: bool = False, size: int | None = None
) -> int:
    """Compact ``run``'s status in place until the object fits ``budget``; its size.
    ``size``: ``run``'s encoded size when the caller has just measured it.

    Raises :class:`StatusTooLargeError` when it cannot be made to fit, except for the
    terminal write, which is sent as small as it can be made (the apiserver has the
    last word: no later write could repair a terminal one that was not sent)."""
    size = encoded_size(run) if size is None else size
    if size <= budget:
        return size
    status = RunView(run).status  # compacted in place: the body about to be sent
    size = _compact_attempts(status, size=size, budget=budget)
    if size > budget and terminal:
        size = _compact_terminal(status, size=size, budget=budget)
    size = encoded_size(run)  # the running estimate is exact, but cheap to confirm here
    if size > budget and not terminal:
        raise StatusTooLargeError(
            run=run,
            size=size,
            detail=f"the run status needs {size} bytes, over the {budget}-byte budget",
        )
    return size


def _body(run: Mapping[str, Any]) -> JSON:
    """A deep copy of ``run`` to send, without the results its packed records already
    hold (dropped before copying: a pass writes back every result its view read) and
    without ``metadata.managedFields``: the apiserver keeps an object's field owners
    when an update leaves them out (only an explicit ``[{}]`` clears them), a run read
    from the cache carries none, and a write's answer carries them for every key of the
    run's per-node maps (a fifth of a large run's object, sent again by a pass that
    writes twice)."""
    body = dict(run)
    meta = ObjectView(run).meta
    if "managedFields" in meta:
        body["metadata"] = {k: v for k, v in meta.items() if k != "managedFields"}
    body["status"] = dict(RunView(body).status)
    drop_packed_twins(body)
    return copy_json(body)


async def write_status(
    client: KubeClient,
    run: Mapping[str, Any],
    *,
    budget: int = STATUS_BUDGET_BYTES,
    terminal: bool = False,
    shard_at: int | None = None,
) -> JSON:
    """PUT the status subresource; the body's resourceVersion is the precondition, so a
    stale view is a 409 (requeue), never a blind overwrite. The answer carries the new
    resourceVersion, which counts as reading the write back (H).

    The body is fitted to the size budget first (module docstring); a status that cannot
    fit, or that the apiserver refuses for size, is :class:`StatusTooLargeError`.

    A run over ``shard_at`` bytes (default :data:`SHARD_AT_BYTES`) first has its
    settled results' evidence moved to run-owned shards (docs/status-md),
    created before this write is sent. A shard the apiserver refuses makes a status
    that needs it :class:`StatusTooLargeError` (a transient failure stays
    :class:`ShardError`: nothing is written, the next pass retries); the terminal
    write then goes without shards, clamped as above, so it never loops."""
    body = _body(run)
    measured: int | None = None
    try:
        measured = await offload(
            client,
            body,
            at=SHARD_AT_BYTES if shard_at is None else shard_at,
            must_at=budget - budget // 8,
        )
    except ShardError as err:
        if terminal:
            # The verdict never waits on evidence shards: the terminal write goes
            # without them (fitted by clamping below), so it cannot loop on a shard.
            body = _body(run)
        elif err.refused:
            raise StatusTooLargeError(
                run=run,  # as it was: its settled results still whole
                size=encoded_size(run),
                detail=f"the run status needs evidence shards, which were refused: {err}",
            ) from err
        else:
            raise
    if pack(body):
        measured = None
    size = fit_status(body, budget=budget, terminal=terminal, size=measured)
    try:
        return await client.replace(
            RUNS, body, namespace=RunView(body).namespace, subresource="status"
        )
    except ApiError as err:
        if too_large(err):
            raise StatusTooLargeError(
                run=body,
                size=size,
                detail=f"the apiserver refused a {size}-byte run status: {api_message(err)}",
                by_apiserver=True,
            ) from err
        raise
