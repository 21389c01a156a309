"""I2: an election that cannot start says why and how to fix it."""

from __future__ import annotations

import asyncio
import json
import random
from typing import Any

import aiohttp
import pytest
from structlog.testing import capture_logs

from glimmer.engine import (
    LEASES,
    ApiError,
    FakeClient,
    FakeClock,
    LeaderElectionConfig,
    LeaderElector,
    Manager,
    ManagerOptions,
    settle,
)
from glimmer.engine.client import JSON, Resource
from glimmer.engine.leaderelection import GUIDANCE_INTERVAL, blocked_reason


def namespace_missing(namespace: str) -> ApiError:
    """The apiserver's answer to a create in a namespace that does not exist."""
    return ApiError(
        status=404,
        reason="Not Found",
        body={
            "kind": "Status",
            "message": f'namespaces "{namespace}" not found',
            "reason": "NotFound",
            "details": {"name": namespace, "kind": "namespaces"},
            "code": 404,
        },
    )


class NamespacedFake(FakeClient):
    """A FakeClient whose lease creates fail while their namespace is missing."""

    def __init__(self, *, missing: set[str], forbidden: bool = False) -> None:
        super().__init__()
        self.missing = missing
        self.forbidden = forbidden
        self.lease_creates = 0

    async def create(self, resource: Resource, body: Any, *, namespace: str | None = None) -> JSON:
        self.lease_creates += resource == LEASES
        if resource == LEASES and self.forbidden:
            raise ApiError(
                status=403,
                reason="Forbidden",
                body={"message": 'leases.coordination.k8s.io is forbidden: User "x" cannot create'},
            )
        if resource == LEASES and namespace in self.missing:
            raise namespace_missing(namespace)
        return await super().create(resource, body, namespace=namespace)


def elector(client: FakeClient, clock: FakeClock) -> LeaderElector:
    config = LeaderElectionConfig(lease_name="glimmer", lease_namespace="glimmer-system",
                                  identity="me")  # fmt: skip
    return LeaderElector(client, config, clock=clock, rng=random.Random(0))


async def run_for(clock: FakeClock, seconds: float, *, step: float = 0.5) -> None:
    for _ in range(round(seconds / step)):
        clock.advance(step)
        await settle()


def errors(logs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in logs if e["log_level"] == "error"]


async def test_I2_missing_lease_namespace_is_an_error_naming_the_fix_at_a_bounded_rate() -> None:
    client = NamespacedFake(missing={"glimmer-system"})
    clock = FakeClock()
    with capture_logs() as logs:
        le = elector(client, clock)
        task = asyncio.create_task(le.acquire())
        await run_for(clock, 2 * GUIDANCE_INTERVAL + 10)
        assert not task.done()
        assert client.lease_creates > 20  # it kept retrying ...
        lines = errors(logs)
        assert len(lines) == 3  # ... but said so once per interval, not per retry
        assert "kubectl create namespace glimmer-system" in lines[0]["reason"]
        assert "--leader-election-namespace" in lines[0]["reason"]
        assert le.blocked_reason is not None and "not found" in le.blocked_reason
        assert not [e for e in logs if e["log_level"] in ("info", "warning")
                    and e["event"] == "lease attempt failed"]  # fmt: skip

        client.missing.clear()  # someone ran kubectl create namespace
        await run_for(clock, 10)
        assert task.done()
        await task
    assert le.is_leader and le.blocked_reason is None
    assert any(e["event"] == "leader election unblocked" and e["log_level"] == "info" for e in logs)
    assert any(e["event"] == "acquired leader lease" for e in logs)


async def test_I2_forbidden_leases_is_an_error_naming_the_rbac_needed() -> None:
    client = NamespacedFake(missing=set(), forbidden=True)
    clock = FakeClock()
    with capture_logs() as logs:
        le = elector(client, clock)
        task = asyncio.create_task(le.acquire())
        await run_for(clock, 10)
        task.cancel()
    lines = errors(logs)
    assert len(lines) == 1
    assert (
        "ServiceAccount needs get, create and update on leases.coordination.k8s.io"
        in (lines[0]["reason"])
    )
    assert le.blocked_reason == lines[0]["reason"]


@pytest.mark.parametrize(
    "exc",
    [
        ApiError(status=404, reason="NotFound", body={"details": {"kind": "leases"}}),
        ApiError(status=503, reason="ServiceUnavailable"),
        ApiError(status=409, reason="Conflict"),
        OSError("connection refused"),
        TimeoutError(),
    ],
)
def test_I2_errors_a_retry_may_fix_do_not_block(exc: BaseException) -> None:
    assert blocked_reason(exc, namespace="n") is None


async def test_I2_a_transient_error_warns_and_does_not_clear_a_block() -> None:
    client = NamespacedFake(missing={"glimmer-system"})
    clock = FakeClock()
    with capture_logs() as logs:
        le = elector(client, clock)
        task = asyncio.create_task(le.acquire())
        await run_for(clock, 3)
        assert le.blocked_reason is not None
        creates = client.lease_creates
        client.inject_error("get", ApiError(status=503, reason="ServiceUnavailable"), times=1000)
        await run_for(clock, 10)
        assert client.lease_creates == creates  # every attempt since was the 503
        assert le.blocked_reason is not None
        task.cancel()
    assert any(e["log_level"] == "warning" and e["event"] == "lease attempt failed" for e in logs)


async def _readyz(manager: Manager) -> tuple[int, dict[str, Any]]:
    host, port = manager.addresses["health"]
    async with (
        aiohttp.ClientSession() as session,
        session.get(f"http://{host}:{port}/readyz", timeout=aiohttp.ClientTimeout(total=5)) as r,
    ):
        return r.status, json.loads(await r.text())


async def test_I2_readyz_says_why_while_the_election_is_blocked_then_follows_normal_rules() -> None:
    client = NamespacedFake(missing={"glimmer-system"})
    manager = Manager(
        client,
        options=ManagerOptions(
            metrics_bind_address="0",
            health_probe_bind_address="127.0.0.1:0",
            lease_duration=3.0,
            renew_deadline=2.0,
            retry_period=0.25,
        ),
    )
    stop = asyncio.Event()
    run = asyncio.create_task(manager.run(stop))
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 5
    while (
        manager.elector is None
        or manager.elector.blocked_reason is None
        or ("health" not in manager.addresses)
    ):
        assert loop.time() < deadline
        await asyncio.sleep(0.02)
    status, body = await _readyz(manager)
    assert status == 503
    assert body["caches_synced"] is True  # synced caches alone are not enough
    assert body["not_ready"] == [
        'leader election: lease namespace "glimmer-system" not found: create it '
        "(kubectl create namespace glimmer-system) or pass --leader-election-namespace"
    ]
    client.missing.clear()
    deadline = loop.time() + 5
    while not manager.is_leader:
        assert loop.time() < deadline
        await asyncio.sleep(0.02)
    status, body = await _readyz(manager)
    assert (status, body["not_ready"]) == (200, [])
    stop.set()
    await run
