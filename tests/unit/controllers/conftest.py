"""Fixtures shared by the controller tests."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest_asyncio

from glimmer.controllers.kit.indexes import node_watch
from glimmer.controllers.run.reconciler import RunOptions, RunReconciler
from glimmer.controllers.run.setup import run_controller
from glimmer.engine import FakeClock, InformerFactory, Readers
from tests.unit.controllers.run.harness import Cluster, custom_test
from tests.unit.engine.test_reader import settle_watches


def cached_reconciler(cluster: Cluster, readers: Readers) -> RunReconciler:
    return RunReconciler(
        client=cluster.client,
        options=RunOptions(operator_namespace="glimmer-system"),
        deliverer=cluster.delivered,
        now=lambda: cluster.clock,
        readers=readers,
    )


async def wire_informers(cluster: Cluster) -> InformerFactory:
    """Informers as the manager registers them, started and settled, and the cluster's
    reconciler reading through them."""
    factory = InformerFactory(cluster.client, clock=FakeClock())
    registration = run_controller(client=cluster.client, namespace=None, operator_namespace="x")
    for watch in (*registration.watches, node_watch()):
        factory.informer(
            watch.resource,
            label_selector=watch.label_selector,
            transform=watch.transform,
            indexers=watch.indexers,
        )
    factory.start()
    await settle_watches(cluster.client, factory)
    cluster.reconciler = cached_reconciler(cluster, Readers.over(cluster.client, factory))
    return factory


@pytest_asyncio.fixture(loop_scope="function")
async def cached() -> AsyncIterator[tuple[Cluster, InformerFactory]]:
    """A cluster whose reconciler reads through informers, as the manager wires them."""
    cluster = Cluster(nodes=2)
    await cluster.setup(tests={"t": custom_test("echo")})
    factory = await wire_informers(cluster)
    yield cluster, factory
    await factory.stop()
