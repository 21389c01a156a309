"""The one I/O seam between reconcilers and the apiserver.

Reconcilers and informers talk to Kubernetes only through `KubeClient`, a
small protocol over plain JSON dicts addressed by `Resource` descriptors
(group, version, plural, namespaced). Nothing above the engine depends on
generated model classes, and tests swap in `FakeClient` (an in-memory
apiserver) the way httpx tests swap in a mock transport.

The production implementation is `ApiServerClient` (in `apiserver`).
"""

from __future__ import annotations

import enum
import json
from collections.abc import AsyncGenerator, Mapping
from typing import Any, Protocol

import aiohttp
import attrs

JSON = dict[str, Any]

FIELD_MANAGER = "glimmer"
"""Field manager for server-side apply and every write."""

LOG_CHUNK_BYTES = 64 * 1024
"""Default size of one chunk of a streamed pod log (bounds what one read holds)."""


@attrs.frozen
class Resource:
    """A REST resource: where its objects live on the apiserver."""

    group: str
    """API group; "" for the core group."""
    version: str
    plural: str
    namespaced: bool
    kind: str = ""
    """Kind, used to fill in `kind`/`apiVersion` on server-side apply bodies."""

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def __str__(self) -> str:
        return f"{self.plural}.{self.group}" if self.group else self.plural

    def collection_path(self, namespace: str | None) -> str:
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if self.namespaced and namespace is not None:
            return f"{base}/namespaces/{namespace}/{self.plural}"
        if not self.namespaced and namespace is not None:
            raise ValueError(f"{self} is cluster-scoped; got namespace {namespace!r}")
        return f"{base}/{self.plural}"

    def object_path(self, name: str, namespace: str | None, subresource: str | None = None) -> str:
        if self.namespaced and namespace is None:
            raise ValueError(f"{self} is namespaced; a namespace is required for {name!r}")
        path = f"{self.collection_path(namespace)}/{name}"
        return f"{path}/{subresource}" if subresource else path


PODS = Resource("", "v1", "pods", namespaced=True, kind="Pod")
NODES = Resource("", "v1", "nodes", namespaced=False, kind="Node")
CONFIGMAPS = Resource("", "v1", "configmaps", namespaced=True, kind="ConfigMap")
NAMESPACES = Resource("", "v1", "namespaces", namespaced=False, kind="Namespace")
EVENTS = Resource("", "v1", "events", namespaced=True, kind="Event")
LEASES = Resource("coordination.k8s.io", "v1", "leases", namespaced=True, kind="Lease")


class PatchType(enum.Enum):
    """Patch flavours, by the Content-Type the apiserver expects."""

    MERGE = "application/merge-patch+json"
    JSON = "application/json-patch+json"
    STRATEGIC = "application/strategic-merge-patch+json"


class ApiError(Exception):
    """A non-2xx answer from the apiserver, with its `Status` body when present."""

    def __init__(self, *, status: int, reason: str, body: JSON | None = None) -> None:
        self.status = status
        self.reason = reason
        self.body = body or {}
        message = self.body.get("message") if isinstance(self.body, dict) else None
        super().__init__(f"{status} {reason}: {message or ''}".rstrip(": "))

    @classmethod
    def from_response(cls, *, status: int, reason: str, text: str) -> ApiError:
        try:
            body = json.loads(text) if text else {}
        except ValueError:
            body = {"message": text[:500]}
        return cls(status=status, reason=reason, body=body if isinstance(body, dict) else {})

    @property
    def status_reason(self) -> str:
        """The `Status.reason` (e.g. "NotFound", "Conflict", "Expired")."""
        return str(self.body.get("reason", ""))


def is_not_found(exc: BaseException) -> bool:
    return isinstance(exc, ApiError) and exc.status == 404


def is_conflict(exc: BaseException) -> bool:
    return isinstance(exc, ApiError) and exc.status == 409


def is_already_exists(exc: BaseException) -> bool:
    return isinstance(exc, ApiError) and exc.status == 409 and exc.status_reason == "AlreadyExists"


def is_gone(exc: BaseException) -> bool:
    """410: the requested resourceVersion is older than etcd's compaction window."""
    return isinstance(exc, ApiError) and (exc.status == 410 or exc.status_reason == "Expired")


def is_transient(exc: BaseException) -> bool:
    """A failure that says nothing about the data: transport errors, 429 and 5xx.

    An informer re-watches from its last version after one of these; only a
    410 (or a refusal such as 403) costs a full relist.
    """
    if isinstance(exc, ApiError):
        return exc.status in (429, 500, 502, 503, 504)
    return isinstance(exc, (OSError, TimeoutError, aiohttp.ClientError))


@attrs.frozen
class WatchEvent:
    """One line of a watch stream."""

    type: str
    """ADDED, MODIFIED, DELETED, BOOKMARK or ERROR."""
    object: JSON


class KubeClient(Protocol):
    """Typed-by-descriptor access to the apiserver; every call is bounded in time."""

    async def get(self, resource: Resource, name: str, *, namespace: str | None = None) -> JSON:
        """An uncached read of one object (raises `ApiError` 404 if absent)."""
        ...

    async def list(
        self,
        resource: Resource,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        resource_version: str | None = None,
        limit: int | None = None,
        continue_token: str | None = None,
    ) -> JSON:
        """One page of a list: the `...List` object with `items` and `metadata`."""
        ...

    def watch(
        self,
        resource: Resource,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        resource_version: str | None = None,
        timeout_seconds: int | None = None,
        allow_bookmarks: bool = True,
    ) -> AsyncGenerator[WatchEvent, None]:
        """Stream changes after `resource_version`; ends when the server closes it.

        Use with `contextlib.aclosing` so the connection is released early.
        """
        ...

    async def create(
        self, resource: Resource, body: Mapping[str, Any], *, namespace: str | None = None
    ) -> JSON: ...

    async def replace(
        self,
        resource: Resource,
        body: Mapping[str, Any],
        *,
        namespace: str | None = None,
        subresource: str | None = None,
    ) -> JSON:
        """PUT; `metadata.resourceVersion` in `body` is the precondition (409 on mismatch)."""
        ...

    async def patch(
        self,
        resource: Resource,
        name: str,
        patch: Any,
        *,
        namespace: str | None = None,
        patch_type: PatchType = PatchType.MERGE,
        subresource: str | None = None,
    ) -> JSON: ...

    async def apply(
        self,
        resource: Resource,
        body: Mapping[str, Any],
        *,
        namespace: str | None = None,
        subresource: str | None = None,
        force: bool = False,
    ) -> JSON:
        """Server-side apply with field manager `glimmer`."""
        ...

    async def delete(
        self,
        resource: Resource,
        name: str,
        *,
        namespace: str | None = None,
        precondition_uid: str | None = None,
        precondition_resource_version: str | None = None,
        propagation_policy: str | None = None,
    ) -> JSON:
        """Delete; returns the object (or `Status`) the server answered with."""
        ...

    def stream_pod_log(
        self,
        name: str,
        *,
        namespace: str,
        container: str | None = None,
        previous: bool = False,
        limit_bytes: int | None = None,
        chunk_size: int = LOG_CHUNK_BYTES,
        timeout: float | None = None,
    ) -> AsyncGenerator[bytes, None]:
        """The container's whole retained log from its first byte, as raw chunks.

        Never decoded: runner output is bytes (a non-UTF-8 byte is data, not an
        error). ``limit_bytes`` asks the server to stop after that many bytes;
        ``timeout`` bounds the whole read, body included (``TimeoutError``). An
        error before the first chunk means nothing was read; one after it means the
        read was cut, and the caller must not judge what it got as the whole log.
        Use with ``contextlib.aclosing``.
        """
        ...

    async def close(self) -> None: ...


def object_key(obj: Mapping[str, Any]) -> str:
    """client-go's `MetaNamespaceKeyFunc`: "namespace/name", or "name" if cluster-scoped."""
    meta = obj.get("metadata") or {}
    namespace = meta.get("namespace")
    name = str(meta.get("name", ""))
    return f"{namespace}/{name}" if namespace else name


def resource_version(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("resourceVersion", ""))
