"""The cluster reads and writes the run reconciler makes, each with its rule attached.

Kept apart from the reconcile logic so that every write that must carry a precondition
(E10, E12, H) does, and every read that must bypass the cache (E22) does, in one place.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Final

import aiohttp

from glimmer.api import API_VERSION, format_time
from glimmer.controllers.kit import names
from glimmer.controllers.kit.names import RUNS, SERVICES
from glimmer.controllers.kit.view import ObjectView
from glimmer.controllers.run.podstate import live, owned_by
from glimmer.engine import (
    EVENTS,
    PODS,
    ApiError,
    KubeClient,
    LiveReader,
    Resource,
)
from glimmer.plan import label_value

JSON = dict[str, Any]


#: What a failed log fetch can raise; any of them means "logs unavailable" (A13).
LOG_ERRORS: Final = (ApiError, OSError, TimeoutError, aiohttp.ClientError)

#: Codes an apiserver answers a write with when it refuses the object itself (admission,
#: validation, quota, policy); anything else (5xx, 429, transport) is transient.
REFUSAL_CODES: Final = frozenset({400, 403, 404, 422})


def refusal(err: ApiError) -> bool:
    """Whether a create was refused for what it is, so retrying it unchanged cannot help
    (PodSecurity, quota, a missing PriorityClass, an invalid field)."""
    return err.status in REFUSAL_CODES


async def list_all(client: KubeClient, resource: Resource, **kwargs: Any) -> list[JSON]:
    """Every page of an uncached list."""
    return await LiveReader(client).list(resource, **kwargs)


async def patch_metadata(client: KubeClient, run: Mapping[str, Any], changes: JSON) -> JSON:
    """A merge patch of metadata with the run's resourceVersion as precondition."""
    view = ObjectView(run)
    body = {"metadata": {"resourceVersion": view.resource_version or None, **changes}}
    return await client.patch(RUNS, view.name, body, namespace=view.namespace)


def run_pod_selector(run: Mapping[str, Any]) -> tuple[str, str]:
    """The run label's value for ``run`` and the selector of its runner pods."""
    value = label_value(ObjectView(run).name)
    return value, names.equality_selector({names.RUN_LABEL: value}, field="metadata.name")


async def owned_pods(client: KubeClient, run: Mapping[str, Any]) -> list[JSON]:
    """Uncached: the run's runner pods (controlled by its UID)."""
    view = ObjectView(run)
    _, selector = run_pod_selector(run)
    pods = await list_all(client, PODS, namespace=view.namespace, label_selector=selector)
    return [p for p in pods if owned_by(p, view.uid)]


async def delete_live_pods(
    client: KubeClient, run: Mapping[str, Any], *, pods: Sequence[Mapping[str, Any]] | None = None
) -> int:
    """Delete every live owned pod (terminated ones are kept for their logs): of ``pods``
    when the caller has a complete account of them, else of an uncached list."""
    deleted = 0
    for pod in pods if pods is not None else await owned_pods(client, run):
        if not live(pod):
            continue
        found = ObjectView(pod)
        with contextlib.suppress(ApiError):
            await client.delete(
                PODS, found.name, namespace=found.namespace, precondition_uid=found.uid or None
            )
            deleted += 1
    return deleted


async def delete_owned_services(client: KubeClient, run: Mapping[str, Any]) -> int:
    """Uncached: delete every rendezvous Service the run controls (F1/F4 clean-up).

    The terminal unload's sweep, so a manager killed between the verdict write and the
    settling pass's own Service deletes leaves none behind: the run label selects, the
    controller UID decides, and the delete carries the UID precondition."""
    view = ObjectView(run)
    _, selector = run_pod_selector(run)
    found = await list_all(client, SERVICES, namespace=view.namespace, label_selector=selector)
    deleted = 0
    for service in map(ObjectView, found):
        if not service.controlled_by(view.uid):
            continue
        with contextlib.suppress(ApiError):
            await client.delete(
                SERVICES,
                service.name,
                namespace=service.namespace,
                precondition_uid=service.uid or None,
            )
            deleted += 1
    return deleted


async def record_event(
    client: KubeClient, run: Mapping[str, Any], *, type_: str, reason: str, message: str
) -> None:
    """A core/v1 Event on the run; best effort, an event never blocks a verdict."""
    view = ObjectView(run)
    now = format_time(datetime.now(UTC))
    body = {
        "metadata": {"generateName": f"{view.name}.", "namespace": view.namespace},
        "involvedObject": {
            "apiVersion": API_VERSION,
            "kind": "BurnInRun",
            "name": view.name,
            "namespace": view.namespace,
            "uid": view.uid or None,
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
        await client.create(EVENTS, body, namespace=view.namespace)
