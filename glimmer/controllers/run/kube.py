"""The cluster reads and writes the run reconciler makes, each with its rule attached.

Kept apart from the reconcile logic so that every write that must carry a precondition
(E10, E12, H) does, and every read that must bypass the cache (E22) does, in one place.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Final

import aiohttp

from glimmer.controllers.run import labels
from glimmer.controllers.run.cordon import CordonStamp, owner_of, release_patch
from glimmer.controllers.run.podstate import live, owned_by
from glimmer.engine import EVENTS, NODES, PODS, ApiError, KubeClient, Resource, is_not_found
from glimmer.plan import label_value

JSON = dict[str, Any]

RUNS: Final = Resource("burnin.glimmer.ai", "v1alpha1", "burninruns", True, "BurnInRun")
PROFILES: Final = Resource("burnin.glimmer.ai", "v1alpha1", "burninprofiles", True, "BurnInProfile")
TESTS: Final = Resource("burnin.glimmer.ai", "v1alpha1", "burnintests", True, "BurnInTest")
FINGERPRINTS: Final = Resource(
    "burnin.glimmer.ai", "v1alpha1", "nodefingerprints", True, "NodeFingerprint"
)

#: What a failed log fetch can raise; any of them means "logs unavailable" (A13).
LOG_ERRORS: Final = (ApiError, OSError, TimeoutError, aiohttp.ClientError)


def meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def stamp_of(run: Mapping[str, Any]) -> CordonStamp:
    m = meta(run)
    return CordonStamp(namespace=str(m["namespace"]), name=str(m["name"]), uid=str(m["uid"]))


async def list_all(client: KubeClient, resource: Resource, **kwargs: Any) -> list[JSON]:
    """Every page of an uncached list."""
    items: list[JSON] = []
    token: str | None = None
    while True:
        page = await client.list(resource, limit=500, continue_token=token, **kwargs)
        items.extend(page.get("items") or [])
        token = (page.get("metadata") or {}).get("continue") or None
        if not token:
            return items


async def write_status(client: KubeClient, run: Mapping[str, Any]) -> JSON:
    """PUT the status subresource; the body's resourceVersion is the precondition, so a
    stale view is a 409 (requeue), never a blind overwrite. The answer carries the new
    resourceVersion, which counts as reading the write back (H)."""
    body = copy.deepcopy(dict(run))
    return await client.replace(
        RUNS, body, namespace=str(meta(run)["namespace"]), subresource="status"
    )


async def patch_metadata(client: KubeClient, run: Mapping[str, Any], changes: JSON) -> JSON:
    """A merge patch of metadata with the run's resourceVersion as precondition."""
    m = meta(run)
    body = {"metadata": {"resourceVersion": m.get("resourceVersion"), **changes}}
    return await client.patch(RUNS, str(m["name"]), body, namespace=str(m["namespace"]))


async def owned_pods(client: KubeClient, run: Mapping[str, Any]) -> list[JSON]:
    """Uncached: a stale pod cache would make a just-created pod look vanished."""
    m = meta(run)
    pods = await list_all(
        client,
        PODS,
        namespace=str(m["namespace"]),
        label_selector=f"{labels.RUN_LABEL}={label_value(str(m['name']))}",
    )
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


async def release_node(
    client: KubeClient, node: str, *, stamp: CordonStamp, prior: bool | None
) -> None:
    """E12: uncached read, restore only if the stamp is still ours; missing node is fine."""
    try:
        current = await client.get(NODES, node)
    except ApiError as err:
        if is_not_found(err):
            return
        raise
    patch = release_patch(current, stamp=stamp, prior=prior)
    if patch is not None:
        await client.patch(NODES, node, patch)


async def release_all_stamps(
    client: KubeClient, run: Mapping[str, Any], *, prior: Mapping[str, bool]
) -> list[str]:
    """E19(3)/E20: every node whose owner stamp names this run, from an uncached list."""
    stamp = stamp_of(run)
    released: list[str] = []
    for node in await list_all(client, NODES):
        owner = owner_of(node)
        if owner is None or owner.uid != stamp.uid:
            continue
        name = str(meta(node)["name"])
        patch = release_patch(node, stamp=stamp, prior=prior.get(name))
        if patch is not None:
            try:
                await client.patch(NODES, name, patch)
            except ApiError as err:
                if not is_not_found(err):
                    raise
        released.append(name)
    return released


async def record_event(
    client: KubeClient, run: Mapping[str, Any], *, type_: str, reason: str, message: str
) -> None:
    """A core/v1 Event on the run; best effort, an event never blocks a verdict."""
    m = meta(run)
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    body = {
        "metadata": {"generateName": f"{m['name']}.", "namespace": m["namespace"]},
        "involvedObject": {
            "apiVersion": labels.API_VERSION,
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
