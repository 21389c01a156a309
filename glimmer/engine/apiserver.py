"""`KubeClient` over a real apiserver, through kubernetes-asyncio's transport.

kubernetes-asyncio provides configuration (kubeconfig, in-cluster service
account, token refresh, TLS) and the authenticated aiohttp session; we call
`ApiClient.call_api` with `_preload_content=False` so responses stay plain JSON
and watch bodies can be streamed line by line.

Guarantees the generated client does not give:
- every call is bounded: a per-request timeout on the HTTP exchange and an
  `asyncio.timeout` around the whole call (including reading the body);
- a watch has a connect timeout and a read-inactivity timeout, so a silently
  dead connection is noticed;
- a client-side QPS/burst token bucket throttles every request;
- only idempotent reads (get, list, the opening of a log stream) are retried, on connection
  errors, 429 and 5xx, with jittered back-off; writes are never retried here,
  their callers decide (a retried create could double-act).
"""

from __future__ import annotations

import asyncio
import json
import os
import random
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from typing import Any, TypeVar

import aiohttp
import attrs
from kubernetes_asyncio import client as k8s_client
from kubernetes_asyncio import config as k8s_config

from glimmer.engine.client import (
    FIELD_MANAGER,
    JSON,
    LOG_CHUNK_BYTES,
    ApiError,
    PatchType,
    Resource,
    WatchEvent,
)
from glimmer.engine.clock import Clock, MonotonicClock
from glimmer.engine.metrics import EngineMetrics
from glimmer.engine.ratelimit import TokenBucket

T = TypeVar("T")

_RETRYABLE_STATUS = frozenset({429, 500, 502, 503, 504})
#: How much of an error answer to a log read is kept for the ApiError message.
_ERROR_BODY_BYTES = 64 * 1024


@attrs.frozen
class ClientOptions:
    """Behaviour of `ApiServerClient`."""

    qps: float = 20.0
    """Sustained requests per second (controller-runtime's default)."""
    burst: int = 30
    """Requests allowed above `qps` in a burst."""
    request_timeout: float = 30.0
    """Upper bound in seconds on any single non-watch call, body included."""
    connect_timeout: float = 10.0
    """TCP+TLS connect timeout in seconds, watches included."""
    watch_inactivity_timeout: float = 70.0
    """A watch that delivers no line for this long is treated as dead."""
    read_retries: int = 3
    """Extra attempts for idempotent reads after a retryable failure."""
    retry_initial_delay: float = 0.2
    """First retry delay in seconds; doubles per attempt, jittered."""
    user_agent: str = "glimmer-manager"


async def load_configuration(kubeconfig: str | None = None) -> k8s_client.Configuration:
    """kubeconfig when one is given (or `$KUBECONFIG` is set), else in-cluster."""
    configuration = k8s_client.Configuration()
    path = kubeconfig or os.environ.get("KUBECONFIG")
    if path:
        await k8s_config.load_kube_config(config_file=path, client_configuration=configuration)
    elif os.environ.get("KUBERNETES_SERVICE_HOST"):
        # kubernetes-asyncio ships this function without annotations.
        k8s_config.load_incluster_config(client_configuration=configuration)  # type: ignore[no-untyped-call]
    else:
        await k8s_config.load_kube_config(client_configuration=configuration)
    return configuration


class ApiServerClient:
    """The production `KubeClient`."""

    def __init__(
        self,
        api_client: k8s_client.ApiClient,
        *,
        options: ClientOptions | None = None,
        clock: Clock | None = None,
        metrics: EngineMetrics | None = None,
    ) -> None:
        self._api = api_client
        self.options = options or ClientOptions()
        self._clock: Clock = clock if clock is not None else MonotonicClock()
        self._bucket = TokenBucket(
            qps=self.options.qps, burst=self.options.burst, clock=self._clock
        )
        self._metrics = metrics
        self._api.user_agent = self.options.user_agent

    @classmethod
    async def connect(
        cls,
        kubeconfig: str | None = None,
        *,
        options: ClientOptions | None = None,
        metrics: EngineMetrics | None = None,
    ) -> ApiServerClient:
        configuration = await load_configuration(kubeconfig)
        return cls(k8s_client.ApiClient(configuration), options=options, metrics=metrics)

    async def close(self) -> None:
        await self._api.close()

    # --- transport ---------------------------------------------------------

    async def _send(
        self,
        method: str,
        path: str,
        *,
        query: list[tuple[str, str]] | None = None,
        body: Any = None,
        content_type: str = "application/json",
        accept: str = "application/json",
        timeout: aiohttp.ClientTimeout,
    ) -> aiohttp.ClientResponse:
        headers = {"Content-Type": content_type, "Accept": accept}
        response: aiohttp.ClientResponse = await self._api.call_api(
            path,
            method,
            query_params=query or [],
            header_params=headers,
            body=body,
            auth_settings=["BearerToken"],
            _preload_content=False,
            _request_timeout=timeout,
        )
        return response

    def _count(self, verb: str, code: int | str) -> None:
        if self._metrics is not None:
            self._metrics.api_requests.labels(verb=verb, code=str(code)).inc()

    async def _call_text(
        self,
        method: str,
        path: str,
        *,
        query: list[tuple[str, str]] | None = None,
        body: Any = None,
        content_type: str = "application/json",
        accept: str = "application/json",
    ) -> str:
        total = self.options.request_timeout
        timeout = aiohttp.ClientTimeout(total=total, connect=self.options.connect_timeout)
        # Throttling is a finite, computed wait; it is kept outside the request
        # timeout so a backlog of callers is delayed, not failed.
        await self._bucket.wait()
        try:
            async with asyncio.timeout(total + 1.0):
                response = await self._send(
                    method, path, query=query, body=body, content_type=content_type,
                    accept=accept, timeout=timeout,
                )  # fmt: skip
                async with response:
                    text = await response.text()
                    status = response.status
                    reason = response.reason or ""
        except (TimeoutError, aiohttp.ClientError) as exc:
            self._count(method, type(exc).__name__)
            raise
        self._count(method, status)
        if not 200 <= status <= 299:
            raise ApiError.from_response(status=status, reason=reason, text=text)
        return text

    async def _call_json(
        self,
        method: str,
        path: str,
        *,
        query: list[tuple[str, str]] | None = None,
        body: Any = None,
        content_type: str = "application/json",
    ) -> JSON:
        text = await self._call_text(
            method, path, query=query, body=body, content_type=content_type
        )
        data = json.loads(text) if text else {}
        if not isinstance(data, dict):
            raise ApiError(status=500, reason="BadResponse", body={"message": text[:200]})
        return data

    async def _retrying(self, call: Callable[[], Awaitable[T]]) -> T:
        """Retry an idempotent read on transport errors, 429 and 5xx."""
        delay = self.options.retry_initial_delay
        attempt = 0
        while True:
            try:
                return await call()
            except ApiError as exc:
                if exc.status not in _RETRYABLE_STATUS or attempt >= self.options.read_retries:
                    raise
            except (TimeoutError, aiohttp.ClientError):
                if attempt >= self.options.read_retries:
                    raise
            attempt += 1
            await self._clock.sleep(delay * (1.0 + random.random()))
            delay *= 2

    # --- KubeClient ----------------------------------------------------------

    async def get(self, resource: Resource, name: str, *, namespace: str | None = None) -> JSON:
        path = resource.object_path(name, namespace)
        return await self._retrying(lambda: self._call_json("GET", path))

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
        query: list[tuple[str, str]] = []
        if label_selector:
            query.append(("labelSelector", label_selector))
        if field_selector:
            query.append(("fieldSelector", field_selector))
        if resource_version is not None:
            query.append(("resourceVersion", resource_version))
        if limit is not None:
            query.append(("limit", str(limit)))
        if continue_token:
            query.append(("continue", continue_token))
        path = resource.collection_path(namespace)
        return await self._retrying(lambda: self._call_json("GET", path, query=query))

    async def watch(
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
        query: list[tuple[str, str]] = [("watch", "true")]
        if label_selector:
            query.append(("labelSelector", label_selector))
        if field_selector:
            query.append(("fieldSelector", field_selector))
        if resource_version is not None:
            query.append(("resourceVersion", resource_version))
        if allow_bookmarks:
            query.append(("allowWatchBookmarks", "true"))
        if timeout_seconds is not None:
            query.append(("timeoutSeconds", str(timeout_seconds)))
        # No total timeout: the server ends the watch after `timeoutSeconds`;
        # the inactivity timeout catches a connection that died silently.
        timeout = aiohttp.ClientTimeout(
            total=None,
            connect=self.options.connect_timeout,
            sock_connect=self.options.connect_timeout,
            sock_read=self.options.watch_inactivity_timeout,
        )
        await self._bucket.wait()
        async with asyncio.timeout(self.options.request_timeout):
            response = await self._send(
                "GET", resource.collection_path(namespace), query=query, timeout=timeout
            )
        async with response:
            self._count("WATCH", response.status)
            if not 200 <= response.status <= 299:
                async with asyncio.timeout(self.options.request_timeout):
                    text = await response.text()
                raise ApiError.from_response(
                    status=response.status, reason=response.reason or "", text=text
                )
            # A hard ceiling in case the server ignores timeoutSeconds.
            ceiling = (timeout_seconds or 1800) + self.options.watch_inactivity_timeout
            deadline = asyncio.get_running_loop().time() + ceiling
            while True:
                async with asyncio.timeout_at(deadline):
                    line = await response.content.readline()
                if not line:
                    return
                line = line.strip()
                if not line:
                    continue
                event = json.loads(line)
                yield WatchEvent(type=str(event.get("type", "")), object=event.get("object") or {})

    async def create(
        self, resource: Resource, body: Mapping[str, Any], *, namespace: str | None = None
    ) -> JSON:
        return await self._call_json(
            "POST",
            resource.collection_path(namespace),
            query=[("fieldManager", FIELD_MANAGER)],
            body=dict(body),
        )

    async def replace(
        self,
        resource: Resource,
        body: Mapping[str, Any],
        *,
        namespace: str | None = None,
        subresource: str | None = None,
    ) -> JSON:
        name = str((body.get("metadata") or {}).get("name", ""))
        return await self._call_json(
            "PUT",
            resource.object_path(name, namespace, subresource),
            query=[("fieldManager", FIELD_MANAGER)],
            body=dict(body),
        )

    async def patch(
        self,
        resource: Resource,
        name: str,
        patch: Any,
        *,
        namespace: str | None = None,
        patch_type: PatchType = PatchType.MERGE,
        subresource: str | None = None,
    ) -> JSON:
        return await self._call_json(
            "PATCH",
            resource.object_path(name, namespace, subresource),
            query=[("fieldManager", FIELD_MANAGER)],
            body=patch,
            content_type=patch_type.value,
        )

    async def apply(
        self,
        resource: Resource,
        body: Mapping[str, Any],
        *,
        namespace: str | None = None,
        subresource: str | None = None,
        force: bool = False,
    ) -> JSON:
        document = {"apiVersion": resource.api_version, "kind": resource.kind, **dict(body)}
        name = str((document.get("metadata") or {}).get("name", ""))
        query = [("fieldManager", FIELD_MANAGER)]
        if force:
            query.append(("force", "true"))
        return await self._call_json(
            "PATCH",
            resource.object_path(name, namespace, subresource),
            query=query,
            body=document,
            content_type="application/apply-patch+yaml",
        )

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
        options: JSON = {"apiVersion": "v1", "kind": "DeleteOptions"}
        preconditions: JSON = {}
        if precondition_uid:
            preconditions["uid"] = precondition_uid
        if precondition_resource_version:
            preconditions["resourceVersion"] = precondition_resource_version
        if preconditions:
            options["preconditions"] = preconditions
        if propagation_policy:
            options["propagationPolicy"] = propagation_policy
        return await self._call_json("DELETE", resource.object_path(name, namespace), body=options)

    async def stream_pod_log(
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
        query: list[tuple[str, str]] = []
        if container:
            query.append(("container", container))
        if limit_bytes is not None:
            query.append(("limitBytes", str(limit_bytes)))
        if previous:
            query.append(("previous", "true"))
        path = f"/api/v1/namespaces/{namespace}/pods/{name}/log"
        budget = timeout if timeout is not None else self.options.request_timeout
        deadline = asyncio.get_running_loop().time() + budget
        # No aiohttp total: the deadline below bounds the whole read, body included,
        # and a server that stops sending is caught by the socket read timeout.
        client_timeout = aiohttp.ClientTimeout(
            total=None,
            connect=self.options.connect_timeout,
            sock_connect=self.options.connect_timeout,
            sock_read=self.options.request_timeout,
        )

        async def open_stream() -> aiohttp.ClientResponse:
            await self._bucket.wait()
            try:
                async with asyncio.timeout_at(deadline):
                    response = await self._send(
                        "GET", path, query=query, accept="*/*", timeout=client_timeout
                    )
                    if 200 <= response.status <= 299:
                        self._count("GET", response.status)
                        return response
                    async with response:
                        # An error body is the apiserver's Status, never runner output.
                        raw = await response.content.read(_ERROR_BODY_BYTES)
            except (TimeoutError, aiohttp.ClientError) as exc:
                self._count("GET", type(exc).__name__)
                raise
            self._count("GET", response.status)
            raise ApiError.from_response(
                status=response.status,
                reason=response.reason or "",
                text=raw.decode("utf-8", "replace"),
            )

        # Only opening is retried: once a byte has been handed on, a retry would
        # repeat output, so a failure from then on is the caller's cut read.
        response = await self._retrying(open_stream)
        async with response:
            while True:
                async with asyncio.timeout_at(deadline):
                    chunk = await response.content.read(chunk_size)
                if not chunk:
                    return
                yield chunk
