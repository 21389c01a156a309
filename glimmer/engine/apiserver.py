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
import contextlib
import json
import os
import random
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from typing import Any, TypeVar
from urllib.parse import urlencode

import aiohttp
import attrs
from aiohttp.helpers import get_env_proxy_for_url
from kubernetes_asyncio import client as k8s_client
from kubernetes_asyncio import config as k8s_config
from yarl import URL

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


def _dumps(body: Any) -> bytes:
    """A request body as compact UTF-8 JSON (what every content type here takes)."""
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()


_RETRYABLE_STATUS = frozenset({429, 500, 502, 503, 504})
#: How much of an error answer to a log read is kept for the ApiError message.
_ERROR_BODY_BYTES = 64 * 1024


@attrs.frozen
class ClientOptions:
    """Behaviour of `ApiServerClient`."""

    qps: float = 200.0
    """Sustained requests per second; below 0, no client-side limit (client-go's -1).

    Sized for a fleet: a thousand-node run makes ~12,000 requests, which 20 (the old
    client-go default) or 50 would stretch to 10 or 4 minutes of waiting on our own
    bucket. The apiserver protects itself with API Priority and Fairness (a 429,
    which reads retry with back-off and writes surface to their caller to requeue), so
    this limit is a backstop against a runaway loop, not the pacing of normal work. See
    docs/performance.md for the measured rates.
    """
    burst: int = 400
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
        self._bucket: TokenBucket | None = (
            None
            if self.options.qps < 0
            else TokenBucket(qps=self.options.qps, burst=self.options.burst, clock=self._clock)
        )
        self._metrics = metrics
        self._api.user_agent = self.options.user_agent
        self._host = str(self._api.configuration.host).rstrip("/")
        self._own_session: aiohttp.ClientSession | None = None
        self._request_extra: dict[str, Any] = {}
        self._timeout = aiohttp.ClientTimeout(
            total=self.options.request_timeout, connect=self.options.connect_timeout
        )

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
        if self._own_session is not None:
            await self._own_session.close()  # leaves the shared connector to its owner
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
        """One HTTP exchange on kubernetes-asyncio's authenticated session.

        Built here rather than through ``ApiClient.call_api``, which walks every body
        through ``sanitize_for_serialization`` (a recursive copy: ~12 ms for a 0.5 MB
        run status) and rebuilds its headers per call; the auth header still comes from
        ``Configuration.auth_settings()`` each time, so token refresh hooks keep working.
        The session is :meth:`_session`'s, for the reason given there.
        """
        headers = {**self._api.default_headers, "Content-Type": content_type, "Accept": accept}
        if self._api.cookie:
            headers["Cookie"] = self._api.cookie
        for setting in (await self._api.configuration.auth_settings()).values():
            if setting.get("in") == "header" and setting.get("value"):
                headers[setting["key"]] = setting["value"]
        url = self._host + path
        if query:
            url += "?" + urlencode(query)
        data: bytes | None = None
        if body is not None:
            data = body if isinstance(body, bytes) else _dumps(body)
        response: aiohttp.ClientResponse = await self._session().request(
            method, url, headers=headers, data=data, timeout=timeout, **self._request_extra
        )
        return response

    def _session(self) -> aiohttp.ClientSession:
        """An aiohttp session on kubernetes-asyncio's connector (its TLS and pool), but
        with ``trust_env`` off.

        kubernetes-asyncio's own session trusts the environment, so aiohttp spends two
        thread-pool round trips on every request: one re-reading ``~/.netrc`` (never a
        source of Kubernetes credentials), one re-reading the proxy variables. The
        proxy is resolved once instead, here, from the configuration or else from
        ``HTTPS_PROXY``/``NO_PROXY`` as the session would have (client-go honours them
        too); changing them needs a restart, as it does for client-go.
        """
        if self._own_session is None:
            rest = self._api.rest_client
            extra: dict[str, Any] = {}
            if rest.proxy:
                extra["proxy"] = rest.proxy
                if rest.proxy_headers:
                    extra["proxy_headers"] = rest.proxy_headers
            else:
                with contextlib.suppress(LookupError):
                    proxy, proxy_auth = get_env_proxy_for_url(URL(self._host))
                    extra["proxy"] = proxy
                    if proxy_auth is not None:
                        extra["proxy_auth"] = proxy_auth
            if rest.server_hostname:
                extra["server_hostname"] = rest.server_hostname
            self._request_extra = extra
            self._own_session = aiohttp.ClientSession(
                connector=rest.pool_manager.connector,
                connector_owner=False,
                trust_env=False,
                # As kubernetes-asyncio's: a watch line may hold an object of ~1.5 MiB.
                read_bufsize=2**21,
            )
        return self._own_session

    async def _throttle(self) -> None:
        if self._bucket is not None:
            await self._bucket.wait()

    def _count(self, verb: str, code: int | str) -> None:
        if self._metrics is not None:
            self._metrics.api_requests.labels(verb=verb, code=str(code)).inc()

    async def _call_bytes(
        self,
        method: str,
        path: str,
        *,
        query: list[tuple[str, str]] | None = None,
        body: Any = None,
        content_type: str = "application/json",
        accept: str = "application/json",
    ) -> bytes:
        """The answer's body, undecoded (2xx), else `ApiError`."""
        total = self.options.request_timeout
        timeout = self._timeout
        # Throttling is a finite, computed wait; it is kept outside the request
        # timeout so a backlog of callers is delayed, not failed.
        await self._throttle()
        try:
            async with asyncio.timeout(total + 1.0):
                response = await self._send(
                    method, path, query=query, body=body, content_type=content_type,
                    accept=accept, timeout=timeout,
                )  # fmt: skip
                async with response:
                    raw = await response.read()
                    status = response.status
                    reason = response.reason or ""
        except (TimeoutError, aiohttp.ClientError) as exc:
            self._count(method, type(exc).__name__)
            raise
        self._count(method, status)
        if not 200 <= status <= 299:
            text = raw.decode("utf-8", "replace")
            raise ApiError.from_response(status=status, reason=reason, text=text)
        return raw

    async def _call_json(
        self,
        method: str,
        path: str,
        *,
        query: list[tuple[str, str]] | None = None,
        body: Any = None,
        content_type: str = "application/json",
    ) -> JSON:
        raw = await self._call_bytes(
            method, path, query=query, body=body, content_type=content_type
        )
        try:
            data = json.loads(raw) if raw else {}
        except ValueError:
            data = None
        if not isinstance(data, dict):
            message = raw[:200].decode("utf-8", "replace")
            raise ApiError(status=500, reason="BadResponse", body={"message": message})
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
        await self._throttle()
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
            await self._throttle()
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
