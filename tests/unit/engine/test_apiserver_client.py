"""ApiServerClient against a local HTTP stub: paths, retries, timeouts, watch streaming."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from aiohttp import web
from kubernetes_asyncio import client as k8s_client

from glimmer.engine import (
    LEASES,
    NODES,
    PODS,
    ApiError,
    ApiServerClient,
    ClientOptions,
    PatchType,
    Resource,
    is_conflict,
)


class Stub:
    """A scripted apiserver: each request pops the next (status, body) for its method."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str, dict[str, str], Any]] = []
        self.script: dict[str, list[tuple[int, Any]]] = {}
        self.hang = False
        self.watch_lines: list[str] = []
        #: A log body sent in pieces with a pause before each (a slow kubelet).
        self.slow_log: list[bytes] = []
        self.slow_log_pause = 0.0

    async def handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.text()
        self.requests.append(
            (request.method, request.path, dict(request.query),
             {"content_type": request.headers.get("Content-Type"), "body": body})
        )  # fmt: skip
        if self.hang:
            await asyncio.sleep(2)
        if self.slow_log and request.path.endswith("/log"):
            response = web.StreamResponse()
            await response.prepare(request)
            for piece in self.slow_log:
                await asyncio.sleep(self.slow_log_pause)
                await response.write(piece)
            return response
        if request.query.get("watch") == "true":
            response = web.StreamResponse()
            await response.prepare(request)
            for line in self.watch_lines:
                await response.write(line.encode() + b"\n")
            return response
        status, payload = self.script.get(request.method, [(200, {})]).pop(0)
        if isinstance(payload, bytes):
            return web.Response(body=payload, status=status, content_type="text/plain")
        return (
            web.json_response(payload, status=status)
            if not isinstance(payload, str)
            else web.Response(text=payload, status=status)
        )


@pytest_asyncio.fixture(loop_scope="function")
async def stub() -> AsyncIterator[tuple[Stub, ApiServerClient]]:
    stub = Stub()
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", stub.handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    host, port = runner.addresses[0][:2]
    configuration = k8s_client.Configuration(host=f"http://{host}:{port}")
    client = ApiServerClient(
        k8s_client.ApiClient(configuration),
        options=ClientOptions(request_timeout=0.5, retry_initial_delay=0.001, qps=1000, burst=1000),
    )
    yield stub, client
    await client.close()
    await runner.cleanup()


def test_resource_paths_for_core_group_and_cluster_scope() -> None:
    assert PODS.object_path("p", "ns", "status") == "/api/v1/namespaces/ns/pods/p/status"
    assert NODES.collection_path(None) == "/api/v1/nodes"
    assert LEASES.object_path("l", "ns") == "/apis/coordination.k8s.io/v1/namespaces/ns/leases/l"
    runs = Resource("burnin.glimmer.ai", "v1alpha1", "burninruns", namespaced=True)
    assert runs.collection_path(None) == "/apis/burnin.glimmer.ai/v1alpha1/burninruns"
    with pytest.raises(ValueError):
        NODES.collection_path("ns")
    with pytest.raises(ValueError):
        PODS.object_path("p", None)


async def test_reads_are_retried_on_5xx(stub: tuple[Stub, ApiServerClient]) -> None:
    server, client = stub
    server.script["GET"] = [(503, {}), (500, {}), (200, {"metadata": {"name": "p"}})]
    got = await client.get(PODS, "p", namespace="ns")
    assert got["metadata"]["name"] == "p"
    assert len(server.requests) == 3


async def test_writes_are_never_retried(stub: tuple[Stub, ApiServerClient]) -> None:
    server, client = stub
    server.script["POST"] = [(503, {"reason": "ServiceUnavailable"}), (200, {})]
    with pytest.raises(ApiError) as caught:
        await client.create(PODS, {"metadata": {"name": "p"}}, namespace="ns")
    assert caught.value.status == 503
    assert len(server.requests) == 1


async def test_a_conflict_surfaces_with_its_status_reason(
    stub: tuple[Stub, ApiServerClient],
) -> None:
    server, client = stub
    server.script["PUT"] = [(409, {"kind": "Status", "reason": "Conflict", "message": "stale"})]
    with pytest.raises(ApiError) as caught:
        await client.replace(PODS, {"metadata": {"name": "p", "resourceVersion": "1"}},
                             namespace="ns")  # fmt: skip
    assert is_conflict(caught.value) and caught.value.status_reason == "Conflict"


async def test_every_call_is_bounded_by_the_request_timeout(
    stub: tuple[Stub, ApiServerClient],
) -> None:
    server, client = stub
    server.hang = True
    loop = asyncio.get_running_loop()
    began = loop.time()
    with pytest.raises((TimeoutError, asyncio.TimeoutError)):
        await client.create(PODS, {"metadata": {"name": "p"}}, namespace="ns")
    assert loop.time() - began < 3


async def test_apply_uses_field_manager_glimmer_and_the_apply_content_type(
    stub: tuple[Stub, ApiServerClient],
) -> None:
    server, client = stub
    server.script["PATCH"] = [(200, {}), (200, {})]
    await client.apply(PODS, {"metadata": {"name": "p"}}, namespace="ns", force=True)
    method, path, query, extra = server.requests[0]
    assert (method, path) == ("PATCH", "/api/v1/namespaces/ns/pods/p")
    assert query == {"fieldManager": "glimmer", "force": "true"}
    assert extra["content_type"] == "application/apply-patch+yaml"
    assert json.loads(extra["body"])["kind"] == "Pod"
    await client.patch(PODS, "p", [{"op": "remove", "path": "/x"}], namespace="ns",
                       patch_type=PatchType.JSON, subresource="status")  # fmt: skip
    method, path, query, extra = server.requests[1]
    assert path.endswith("/pods/p/status")
    assert extra["content_type"] == "application/json-patch+json"


async def _collect(stream: AsyncGenerator[bytes, None]) -> list[bytes]:
    async with contextlib.aclosing(stream) as chunks:
        return [chunk async for chunk in chunks]


async def test_I11_the_pod_log_is_streamed_whole_from_byte_0_in_bounded_chunks(
    stub: tuple[Stub, ApiServerClient],
) -> None:
    server, client = stub
    log = b"".join(b"line %d\n" % i for i in range(20_000))
    server.script["GET"] = [(200, log)]
    chunks = await _collect(
        client.stream_pod_log("p", namespace="ns", container="runner", limit_bytes=1 << 30,
                              chunk_size=4096)
    )  # fmt: skip
    assert b"".join(chunks) == log
    assert max(len(c) for c in chunks) <= 4096 and len(chunks) > 1
    _, path, query, _ = server.requests[0]
    assert path == "/api/v1/namespaces/ns/pods/p/log"
    # The whole retained log: no tail window that the byte limit could cut at its start.
    assert query == {"container": "runner", "limitBytes": str(1 << 30)}


async def test_I19_the_pod_log_is_bytes_and_never_decoded(
    stub: tuple[Stub, ApiServerClient],
) -> None:
    server, client = stub
    log = b"bw=12\n\xff\xfe not utf-8 \xc3\n"
    server.script["GET"] = [(200, log)]
    assert b"".join(await _collect(client.stream_pod_log("p", namespace="ns"))) == log


async def test_a_pod_log_open_is_retried_on_5xx_and_a_refusal_is_an_api_error(
    stub: tuple[Stub, ApiServerClient],
) -> None:
    server, client = stub
    server.script["GET"] = [(503, {"message": "busy"}), (200, b"ok=1\n")]
    assert b"".join(await _collect(client.stream_pod_log("p", namespace="ns"))) == b"ok=1\n"
    server.script["GET"] = [(400, {"kind": "Status", "reason": "BadRequest", "message": "no"})]
    with pytest.raises(ApiError) as refused:
        await _collect(client.stream_pod_log("p", namespace="ns"))
    assert refused.value.status == 400


async def test_I11_a_pod_log_read_is_bounded_in_time_as_a_whole(
    stub: tuple[Stub, ApiServerClient],
) -> None:
    server, client = stub
    # Each piece arrives well inside the socket read timeout; the whole read does not.
    server.slow_log = [b"bw=1\n"] * 20
    server.slow_log_pause = 0.1
    got: list[bytes] = []
    with pytest.raises(TimeoutError):
        async with contextlib.aclosing(
            client.stream_pod_log("p", namespace="ns", timeout=0.6)
        ) as chunks:
            async for chunk in chunks:
                got.append(chunk)
    assert 0 < len(got) < 20


async def test_watch_streams_events_and_asks_for_bookmarks(
    stub: tuple[Stub, ApiServerClient],
) -> None:
    server, client = stub
    server.watch_lines = [
        json.dumps({"type": "ADDED", "object": {"metadata": {"name": "a"}}}),
        "",
        json.dumps({"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "9"}}}),
    ]
    stream = client.watch(PODS, namespace="ns", resource_version="5", timeout_seconds=321)
    async with contextlib.aclosing(stream) as events:
        got = [event async for event in events]
    assert [e.type for e in got] == ["ADDED", "BOOKMARK"]
    _, _, query, _ = server.requests[0]
    assert query["allowWatchBookmarks"] == "true"
    assert query["timeoutSeconds"] == "321"
    assert query["resourceVersion"] == "5"
