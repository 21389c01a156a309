"""ApiServerClient's own transport (runs at fleet scale): what the per-request shortcuts must keep.

The client builds each request itself on a session with ``trust_env`` off, instead of
through kubernetes-asyncio's ``call_api``; these tests pin what that must not lose:
the bearer token (refreshed per request), the exact body, the environment's proxy,
and a client-side rate limit that can be lifted but still applies when set.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from aiohttp import web
from kubernetes_asyncio import client as k8s_client

from glimmer.engine import PODS, ApiError, ApiServerClient, ClientOptions, FakeClock, settle


class Recorder:
    """An apiserver stand-in that records each request's headers, target and body."""

    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []
        self.answer: bytes = b'{"metadata": {"name": "p"}}'
        self.content_type = "application/json"
        self.port = 0

    async def handle(self, request: web.Request) -> web.Response:
        self.seen.append(
            {
                "method": request.method,
                "path": request.path,
                "query": dict(request.query),
                "headers": dict(request.headers),
                "body": await request.read(),
            }
        )
        return web.Response(body=self.answer, content_type=self.content_type)


Start = Callable[..., Awaitable[tuple[Recorder, ApiServerClient]]]


@pytest_asyncio.fixture(loop_scope="function")
async def start() -> AsyncIterator[Start]:
    runners: list[web.AppRunner] = []
    clients: list[ApiServerClient] = []

    async def make(
        *,
        host: str | None = None,
        options: ClientOptions | None = None,
        clock: FakeClock | None = None,
        **config: Any,
    ) -> tuple[Recorder, ApiServerClient]:
        recorder = Recorder()
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", recorder.handle)
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        runners.append(runner)
        address, recorder.port = runner.addresses[0][:2]
        configuration = k8s_client.Configuration(host=host or f"http://{address}:{recorder.port}")
        for key, value in config.items():
            setattr(configuration, key, value)
        client = ApiServerClient(
            k8s_client.ApiClient(configuration),
            options=options or ClientOptions(qps=-1, request_timeout=5.0),
            clock=clock,
        )
        clients.append(client)
        return recorder, client

    yield make
    for client in clients:
        await client.close()
    for runner in runners:
        await runner.cleanup()


async def test_the_bearer_token_is_sent_and_refreshed_per_request(start: Start) -> None:
    tokens = iter(["first", "second"])

    def refresh(configuration: k8s_client.Configuration) -> None:
        configuration.api_key["BearerToken"] = next(tokens)

    recorder, client = await start(
        api_key={"BearerToken": "stale"},
        api_key_prefix={"BearerToken": "Bearer"},
        refresh_api_key_hook=refresh,
    )
    await client.get(PODS, "p", namespace="ns")
    await client.get(PODS, "p", namespace="ns")
    assert [r["headers"].get("Authorization") for r in recorder.seen] == [
        "Bearer first",
        "Bearer second",
    ]
    assert recorder.seen[0]["headers"]["User-Agent"] == "glimmer-manager"


async def test_a_body_arrives_as_exactly_the_json_given(start: Start) -> None:
    recorder, client = await start()
    body = {"metadata": {"name": "p", "labels": {"a": "ünïcødé ✓"}}, "spec": {"n": [1, 2.5]}}
    await client.create(PODS, body, namespace="ns")
    sent = recorder.seen[0]
    assert sent["method"] == "POST" and sent["query"] == {"fieldManager": "glimmer"}
    assert sent["headers"]["Content-Type"] == "application/json"
    assert json.loads(sent["body"]) == body


async def test_selectors_are_query_encoded(start: Start) -> None:
    recorder, client = await start()
    recorder.answer = b'{"items": [], "metadata": {}}'
    await client.list(PODS, namespace="ns", label_selector="a in (x,y),b!=z", limit=5)
    assert recorder.seen[0]["query"] == {"labelSelector": "a in (x,y),b!=z", "limit": "5"}


async def test_netrc_is_never_a_source_of_credentials(
    start: Start, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    netrc = tmp_path / "netrc"
    netrc.write_text("machine 127.0.0.1 login intruder password secret\n")
    netrc.chmod(0o600)
    monkeypatch.setenv("NETRC", str(netrc))
    recorder, client = await start()
    await client.get(PODS, "p", namespace="ns")
    assert "Authorization" not in recorder.seen[0]["headers"]


async def test_the_environment_proxy_is_honoured(
    start: Start, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("NO_PROXY", "no_proxy", "HTTPS_PROXY", "https_proxy", "HTTP_PROXY"):
        monkeypatch.delenv(name, raising=False)
    proxy, _ = await start()
    monkeypatch.setenv("http_proxy", f"http://127.0.0.1:{proxy.port}")
    # The apiserver's host does not resolve: only the proxy can answer.
    _, client = await start(host="http://apiserver.invalid:6443")
    got = await client.get(PODS, "p", namespace="ns")
    assert got["metadata"]["name"] == "p"
    assert proxy.seen[0]["path"] == "/api/v1/namespaces/ns/pods/p"


async def test_a_2xx_answer_that_is_not_a_json_object_is_an_error(start: Start) -> None:
    recorder, client = await start(options=ClientOptions(qps=-1, read_retries=0))
    recorder.answer, recorder.content_type = b"<html>proxy says hi</html>", "text/html"
    with pytest.raises(ApiError) as caught:
        await client.create(PODS, {"metadata": {"name": "p"}}, namespace="ns")
    assert caught.value.reason == "BadResponse"


async def test_a_negative_qps_lifts_the_client_side_limit(start: Start) -> None:
    clock = FakeClock()
    _, client = await start(options=ClientOptions(qps=-1, burst=1), clock=clock)
    for _ in range(5):  # a bucket of burst 1 would park the second call on the fake clock
        await client.get(PODS, "p", namespace="ns")
    assert clock.pending_timers == 0


async def test_a_positive_qps_still_throttles(start: Start) -> None:
    clock = FakeClock()
    recorder, client = await start(options=ClientOptions(qps=1, burst=1), clock=clock)
    await client.get(PODS, "p", namespace="ns")
    second = asyncio.create_task(client.get(PODS, "p", namespace="ns"))
    await settle()
    assert len(recorder.seen) == 1 and clock.pending_timers == 1
    clock.advance(1.0)
    await second
    assert len(recorder.seen) == 2
