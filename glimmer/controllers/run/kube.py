"""The cluster reads and writes the run reconciler makes, each with its rule attached.

Kept apart from the reconcile logic so that every write that must carry a precondition
(E10, E12, H) does, and every read that must bypass the cache (E22) does, in one place.

The status size budget (issue 19.11). etcd refuses a request over ~1.5 MiB (the
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

import contextlib
import copy
import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Final

import aiohttp

from glimmer.api import API_VERSION, clamp_message
from glimmer.controllers.kit import names
from glimmer.controllers.kit.names import RUNS, SERVICES
from glimmer.controllers.kit.view import RunView
from glimmer.controllers.run import shards
from glimmer.controllers.run.podstate import live, owned_by
from glimmer.engine import (
    EVENTS,
    PODS,
    ApiError,
    KubeClient,
    LiveReader,
    Resource,
    copy_json,
)
from glimmer.plan import label_value

JSON = dict[str, Any]


#: What a failed log fetch can raise; any of them means "logs unavailable" (A13).
LOG_ERRORS: Final = (ApiError, OSError, TimeoutError, aiohttp.ClientError)

#: The most a run object may weigh as JSON when its status is written (see the module
#: docstring); etcd's own limit is 1.5 MiB for the whole request.
STATUS_BUDGET_BYTES: Final = 1 << 20
COMPACTED: Final = "compacted to fit the status size budget (metrics and message dropped)"
#: Result messages are cut to this many bytes in a terminal write that must shrink.
TERMINAL_MESSAGE_BYTES: Final = 256
#: Codes an apiserver answers a write with when it refuses the object itself (admission,
#: validation, quota, policy); anything else (5xx, 429, transport) is transient.
REFUSAL_CODES: Final = frozenset({400, 403, 404, 422})
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


def refusal(err: ApiError) -> bool:
    """Whether a create was refused for what it is, so retrying it unchanged cannot help
    (PodSecurity, quota, a missing PriorityClass, an invalid field)."""
    return err.status in REFUSAL_CODES


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


def fit_status(run: JSON, *, budget: int = STATUS_BUDGET_BYTES, terminal: bool = False) -> int:
    """Compact ``run``'s status in place until the object fits ``budget``; its size.

    Raises :class:`StatusTooLargeError` when it cannot be made to fit, except for the
    terminal write, which is sent as small as it can be made (the apiserver has the
    last word: no later write could repair a terminal one that was not sent)."""
    size = encoded_size(run)
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


def meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


async def list_all(client: KubeClient, resource: Resource, **kwargs: Any) -> list[JSON]:
    """Every page of an uncached list."""
    return await LiveReader(client).list(resource, **kwargs)


def _body(run: Mapping[str, Any]) -> JSON:
    """A deep copy of ``run`` to send, without the results its packed records already
    hold (dropped before copying: a pass writes back every result its view read)."""
    body = dict(run)
    body["status"] = dict(RunView(body).status)
    shards.drop_packed_twins(body)
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

    A run over ``shard_at`` bytes (default ``shards.SHARD_AT_BYTES``) first has its
    settled results' evidence moved to run-owned shards (docs/status-shards.md),
    created before this write is sent. A shard the apiserver refuses makes a status
    that needs it :class:`StatusTooLargeError` (a transient failure stays
    ``shards.ShardError``: nothing is written, the next pass retries); the terminal
    write then goes without shards, clamped as above, so it never loops."""
    body = _body(run)
    try:
        await shards.offload(
            client,
            body,
            at=shards.SHARD_AT_BYTES if shard_at is None else shard_at,
            must_at=budget - budget // 8,
        )
    except shards.ShardError as err:
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
    shards.pack(body)
    size = fit_status(body, budget=budget, terminal=terminal)
    try:
        return await client.replace(
            RUNS, body, namespace=str(meta(run)["namespace"]), subresource="status"
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


async def patch_metadata(client: KubeClient, run: Mapping[str, Any], changes: JSON) -> JSON:
    """A merge patch of metadata with the run's resourceVersion as precondition."""
    m = meta(run)
    body = {"metadata": {"resourceVersion": m.get("resourceVersion"), **changes}}
    return await client.patch(RUNS, str(m["name"]), body, namespace=str(m["namespace"]))


def run_pod_selector(run: Mapping[str, Any]) -> tuple[str, str]:
    """The run label's value for ``run`` and the selector of its runner pods."""
    value = label_value(str(meta(run)["name"]))
    return value, names.equality_selector({names.RUN_LABEL: value}, field="metadata.name")


async def owned_pods(client: KubeClient, run: Mapping[str, Any]) -> list[JSON]:
    """Uncached: the run's runner pods (controlled by its UID)."""
    m = meta(run)
    _, selector = run_pod_selector(run)
    pods = await list_all(client, PODS, namespace=str(m["namespace"]), label_selector=selector)
    return [p for p in pods if owned_by(p, str(m["uid"]))]


async def delete_live_pods(client: KubeClient, run: Mapping[str, Any]) -> int:
    """Delete every live owned pod (terminated ones are kept for their logs)."""
    deleted = 0
    for pod in await owned_pods(client, run):
        if not live(pod):
            continue
        with contextlib.suppress(ApiError):
            await client.delete(
                PODS,
                str(meta(pod)["name"]),
                namespace=str(meta(pod)["namespace"]),
                precondition_uid=str(meta(pod).get("uid") or "") or None,
            )
            deleted += 1
    return deleted


async def delete_owned_services(client: KubeClient, run: Mapping[str, Any]) -> int:
    """Uncached: delete every rendezvous Service the run controls (F1/F4 clean-up).

    The terminal unload's sweep, so a manager killed between the verdict write and the
    settling pass's own Service deletes leaves none behind: the run label selects, the
    controller UID decides, and the delete carries the UID precondition."""
    m = meta(run)
    _, selector = run_pod_selector(run)
    found = await list_all(client, SERVICES, namespace=str(m["namespace"]), label_selector=selector)
    deleted = 0
    for service in found:
        if not owned_by(service, str(m["uid"])):
            continue
        with contextlib.suppress(ApiError):
            await client.delete(
                SERVICES,
                str(meta(service)["name"]),
                namespace=str(meta(service)["namespace"]),
                precondition_uid=str(meta(service).get("uid") or "") or None,
            )
            deleted += 1
    return deleted


async def record_event(
    client: KubeClient, run: Mapping[str, Any], *, type_: str, reason: str, message: str
) -> None:
    """A core/v1 Event on the run; best effort, an event never blocks a verdict."""
    m = meta(run)
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    body = {
        "metadata": {"generateName": f"{m['name']}.", "namespace": m["namespace"]},
        "involvedObject": {
            "apiVersion": API_VERSION,
            "kind": "BurnInRun",
            "name": m["name"],
            "namespace": m["namespace"],
            "uid": m.get("uid"),
        },
        "reason": reason,
        "message": message[:1024],
        "type": type_,
        "firstTimestamp": now,
        "lastTimestamp": now,
        "count": 1,
        "source": {"component": "glimmer-run-controller"},
    }
    with contextlib.suppress(ApiError, OSError, TimeoutError, aiohttp.ClientError):
        await client.create(EVENTS, body, namespace=str(m["namespace"]))
