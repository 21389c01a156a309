"""The manager: controllers behind leader election, health, readiness and metrics."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp
import pytest

from glimmer.engine import (
    LEASES,
    PODS,
    ApiError,
    ControllerRegistration,
    FakeClient,
    FakeClock,
    InformerEvent,
    LeadershipLostError,
    Manager,
    ManagerOptions,
    Result,
    Watch,
    settle,
)
from glimmer.engine.manager import parse_bind_address

FAST_LEASE = {"lease_duration": 3.0, "renew_deadline": 2.0, "retry_period": 0.25}


def options(**kwargs: Any) -> ManagerOptions:
    base: dict[str, Any] = {
        "metrics_bind_address": "127.0.0.1:0",
        "health_probe_bind_address": "127.0.0.1:0",
        "leader_elect": False,
    }
    base.update(kwargs)
    return ManagerOptions(**base)


class Recording:
    def __init__(self) -> None:
        self.keys: list[str] = []

    async def reconcile(self, key: str) -> Result:
        self.keys.append(key)
        return Result()


async def fetch(manager: Manager, server: str, path: str) -> tuple[int, str]:
    host, port = manager.addresses[server]
    async with (
        aiohttp.ClientSession() as session,
        session.get(f"http://{host}:{port}{path}", timeout=aiohttp.ClientTimeout(total=5)) as r,
    ):
        return r.status, await r.text()


async def eventually(predicate: Any, *, seconds: float = 5.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError("condition not reached")
        await asyncio.sleep(0.01)


def test_bind_addresses_parse_like_controller_runtime() -> None:
    assert parse_bind_address(":8080") == ("0.0.0.0", 8080)
    assert parse_bind_address("127.0.0.1:9") == ("127.0.0.1", 9)
    assert parse_bind_address("0") is None
    with pytest.raises(ValueError):
        parse_bind_address("8080")


async def test_with_no_reconcilers_it_serves_health_readiness_and_metrics() -> None:
    manager = Manager(FakeClient(), options=options())
    stop = asyncio.Event()
    running = asyncio.create_task(manager.run(stop))
    await eventually(lambda: "health" in manager.addresses and "metrics" in manager.addresses)
    assert await fetch(manager, "health", "/healthz") == (200, "ok")
    status, body = await fetch(manager, "health", "/readyz")
    assert status == 200 and json.loads(body)["caches_synced"] is True
    status, text = await fetch(manager, "metrics", "/metrics")
    assert status == 200
    assert "glimmer_build_info{" in text
    stop.set()
    await asyncio.wait_for(running, 5)


async def test_events_of_watched_resources_reach_the_reconciler_as_keys() -> None:
    client = FakeClient()
    await client.create(PODS, {"metadata": {"name": "early"}}, namespace="ns")
    reconciler = Recording()
    manager = Manager(
        client,
        options=options(),
        controllers=[ControllerRegistration("pods", reconciler, watches=[Watch(PODS)])],
    )
    stop = asyncio.Event()
    running = asyncio.create_task(manager.run(stop))
    await eventually(lambda: "ns/early" in reconciler.keys)
    await client.create(PODS, {"metadata": {"name": "late"}}, namespace="ns")
    await eventually(lambda: "ns/late" in reconciler.keys)
    _, text = await fetch(manager, "metrics", "/metrics")
    assert 'controller_runtime_reconcile_total{controller="pods",result="success"}' in text
    assert 'workqueue_adds_total{name="pods"}' in text
    stop.set()
    await asyncio.wait_for(running, 5)


async def test_a_watch_can_map_secondary_objects_to_owner_keys() -> None:
    client = FakeClient()
    reconciler = Recording()

    def to_run(event: InformerEvent) -> list[str]:
        meta = event.obj["metadata"]
        run = (meta.get("labels") or {}).get("burnin.glimmer.ai/run")
        return [f"{meta['namespace']}/{run}"] if run else []

    manager = Manager(
        client,
        options=options(),
        controllers=[
            ControllerRegistration("runs", reconciler, watches=[Watch(PODS, to_keys=to_run)])
        ],
    )
    stop = asyncio.Event()
    running = asyncio.create_task(manager.run(stop))
    await client.create(
        PODS,
        {"metadata": {"name": "p1", "labels": {"burnin.glimmer.ai/run": "r1"}}},
        namespace="ns",
    )
    await client.create(PODS, {"metadata": {"name": "p2"}}, namespace="ns")
    await eventually(lambda: "ns/r1" in reconciler.keys)
    await asyncio.sleep(0.05)
    assert set(reconciler.keys) == {"ns/r1"}
    stop.set()
    await asyncio.wait_for(running, 5)


async def test_only_the_leader_runs_controllers_and_readyz_reports_leadership() -> None:
    client = FakeClient()
    first, second = Recording(), Recording()
    a = Manager(
        client,
        options=options(leader_elect=True, leader_identity="a", **FAST_LEASE),
        controllers=[ControllerRegistration("pods", first, watches=[Watch(PODS)])],
    )
    b = Manager(
        client,
        options=options(leader_elect=True, leader_identity="b", **FAST_LEASE),
        controllers=[ControllerRegistration("pods", second, watches=[Watch(PODS)])],
    )
    stop_a, stop_b = asyncio.Event(), asyncio.Event()
    run_a = asyncio.create_task(a.run(stop_a))
    await eventually(lambda: a.is_leader)
    run_b = asyncio.create_task(b.run(stop_b))
    await eventually(lambda: "health" in b.addresses)
    await client.create(PODS, {"metadata": {"name": "x"}}, namespace="ns")
    await eventually(lambda: "ns/x" in first.keys)
    await eventually(b.caches_synced)
    assert second.keys == [] and not b.is_leader
    status, body = await fetch(b, "health", "/readyz")
    assert status == 200, "a standby with warm caches is ready"
    assert json.loads(body)["leader"] is False
    status, body = await fetch(a, "health", "/readyz")
    assert json.loads(body)["leader"] is True
    stop_a.set()  # a releases the lease; b takes over within one retry period
    await asyncio.wait_for(run_a, 5)
    await eventually(lambda: b.is_leader, seconds=8)
    await eventually(lambda: "ns/x" in second.keys)
    lease = await client.get(LEASES, "glimmer-manager", namespace="glimmer-system")
    assert lease["spec"]["holderIdentity"] == "b"
    assert lease["spec"]["leaseTransitions"] == 1
    stop_b.set()
    await asyncio.wait_for(run_b, 5)


async def test_losing_the_lease_stops_controllers_and_run_raises() -> None:
    client, clock = FakeClient(), FakeClock()
    manager = Manager(
        client,
        clock=clock,
        options=options(leader_elect=True),
        controllers=[ControllerRegistration("pods", Recording(), watches=[Watch(PODS)])],
    )
    running = asyncio.create_task(manager.run())
    await eventually(lambda: manager.controllers[0].running)
    client.inject_error("get", ApiError(status=503, reason="ServiceUnavailable"), times=1000)
    for _ in range(200):
        clock.advance(0.1)
        await settle()
        if running.done():
            break
    with pytest.raises(LeadershipLostError):
        await asyncio.wait_for(running, 5)
    assert not manager.controllers[0].running
    assert not manager.is_leader
