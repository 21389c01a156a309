"""A stop request lets in-flight reconciles finish, then releases the lease, within 30 s."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from glimmer.engine import (
    CONFIGMAPS,
    LEASES,
    ApiServerClient,
    ControllerOptions,
    ControllerRegistration,
    Manager,
    ManagerOptions,
    Result,
    Watch,
)

pytestmark = [pytest.mark.controlplane, pytest.mark.timeout(120)]


async def test_stop_drains_in_flight_reconciles_and_releases_the_lease_within_30s(
    namespace: str, engine_client: ApiServerClient
) -> None:
    started = asyncio.Event()
    finished: list[str] = []

    class Slow:
        async def reconcile(self, key: str) -> Result:
            started.set()
            await asyncio.sleep(3.0)
            finished.append(key)
            return Result()

    manager = Manager(
        engine_client,
        options=ManagerOptions(
            namespace=namespace,
            metrics_bind_address="0",
            health_probe_bind_address="0",
            leader_election_namespace=namespace,
            leader_election_id="drain",
        ),
        controllers=[
            ControllerRegistration(
                "slow", Slow(), watches=[Watch(CONFIGMAPS)],
                options=ControllerOptions(max_concurrent_reconciles=2),
            )
        ],
    )  # fmt: skip
    stop = asyncio.Event()
    running = asyncio.create_task(manager.run(stop))
    await engine_client.create(CONFIGMAPS, {"metadata": {"name": "work"}}, namespace=namespace)
    await asyncio.wait_for(started.wait(), 30)
    began = time.monotonic()
    stop.set()
    await asyncio.wait_for(running, 35)
    took = time.monotonic() - began
    print(f"drain took {took:.2f} s")
    assert f"{namespace}/work" in finished, "the in-flight reconcile must finish, not be cut"
    assert 2.0 < took < 30.0
    lease: dict[str, Any] = await engine_client.get(LEASES, "drain", namespace=namespace)
    assert lease["spec"]["holderIdentity"] == ""
