"""Cordons and releases are written from the cached node under its
resourceVersion; a stale cache never decides a cordon or a release (E10, E12, E22)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from glimmer.controllers.kit import names
from glimmer.controllers.kit.names import FINGERPRINTS, RUNS
from glimmer.controllers.run.setup import run_controller
from glimmer.engine import NODES, CachedReader, InformerFactory, Readers, Resource
from tests.unit.controllers.conftest import cached_reconciler
from tests.unit.controllers.run.harness import NS, Cluster, custom_test
from tests.unit.controllers.run.test_run_reads import (
    calls_of_next_pass,
    start_run,
)
from tests.unit.engine.test_reader import settle_watches

FOREIGN = "other/owner/uid-other"


class StaleNodes(CachedReader):
    """The manager's caches, except that some nodes are frozen at an older copy."""

    def __init__(self, factory: InformerFactory, nodes: dict[str, dict[str, Any]]) -> None:
        super().__init__(factory)
        self.nodes = nodes

    async def get(self, resource: Resource, name: str, **kwargs: Any) -> Any:
        if resource == NODES and name in self.nodes:
            return copy.deepcopy(self.nodes[name])
        return await super().get(resource, name, **kwargs)


def _owner(cluster: Cluster, node: str) -> str | None:
    return (cluster.node(node)["metadata"].get("annotations") or {}).get(names.CORDON_OWNER)


async def _finish_first_pod(cluster: Cluster) -> None:
    (first,) = cluster.live_pods()
    await cluster.kubelet(first["metadata"]["name"], exit_code=0, log="ok=1\n")


async def test_E22_a_cordon_and_a_release_from_a_current_cache_read_no_node(
    cached: tuple[Cluster, InformerFactory],
) -> None:
    cluster, factory = cached
    await start_run(cluster, factory, cap=1)
    await _finish_first_pod(cluster)
    calls = await calls_of_next_pass(cluster, factory)  # releases n0, cordons n1
    assert [c for c in calls if c[:2] == ("get", "nodes")] == [], calls
    assert calls.count(("patch", "nodes", "n1")) == 1  # stamp and unschedulable, one write
    assert calls.count(("patch", "nodes", "n0")) == 1
    assert _owner(cluster, "n0") is None
    assert cluster.node("n1")["spec"].get("unschedulable") is True
    assert (await cluster.run())["status"]["cordonedNodes"] == ["n1"]


async def test_E22_a_stale_cache_never_takes_another_owners_cordon(
    cached: tuple[Cluster, InformerFactory],
) -> None:
    cluster, factory = cached
    await start_run(cluster, factory, cap=1)  # n0 cordoned and loaded
    unstamped = copy.deepcopy(cluster.node("n1"))  # what the cache will go on showing
    await cluster.client.patch(
        NODES, "n1", {"metadata": {"annotations": {names.CORDON_OWNER: FOREIGN}}}
    )
    await _finish_first_pod(cluster)
    await settle_watches(cluster.client, factory)
    cluster.reconciler.ctx.reads.cached = StaleNodes(factory, {"n1": unstamped})
    await cluster.reconcile()  # harvests n0, then launches on n1 over the stale cache
    assert _owner(cluster, "n1") == FOREIGN  # E10: another owner's cordon is never taken
    assert not cluster.node("n1")["spec"].get("unschedulable")
    assert "n1" not in ((await cluster.run())["status"].get("cordonedNodes") or [])


@pytest.mark.parametrize("unschedulable", [True, False])
async def test_E22_a_cache_showing_a_cordon_that_is_gone_never_decides_the_cordon(
    cached: tuple[Cluster, InformerFactory],
    unschedulable: bool,
) -> None:
    """The cache shows n1 already stamped by this run (so the cordon would write nothing,
    or only ``unschedulable``); live, n1 is unstamped: it is stamped before it is
    cordoned, never left with an ownerless cordon."""
    cluster, factory = cached
    await start_run(cluster, factory, cap=1)  # n0 cordoned by r1
    cordoned = copy.deepcopy(cluster.node("n0"))
    stamp = cordoned["metadata"]["annotations"][names.CORDON_OWNER]
    cordoned["metadata"]["name"] = "n1"  # the cache: n1 already ours, unschedulable
    cordoned["metadata"]["annotations"][names.CORDON_OWNER] = stamp
    cordoned["spec"]["unschedulable"] = unschedulable
    await _finish_first_pod(cluster)
    await settle_watches(cluster.client, factory)
    cluster.reconciler.ctx.reads.cached = StaleNodes(factory, {"n1": cordoned})
    await cluster.reconcile()  # nothing to write, or a 409: n1 is read live
    assert _owner(cluster, "n1") == stamp
    assert cluster.node("n1")["spec"].get("unschedulable") is True


async def test_E12_a_cache_lagging_our_cordon_never_keeps_the_node_cordoned(
    cached: tuple[Cluster, InformerFactory],
) -> None:
    cluster, factory = cached
    before = copy.deepcopy(cluster.node("n0"))  # unstamped: the cache lags our cordon
    await start_run(cluster, factory, cap=1)
    assert _owner(cluster, "n0") is not None
    run = await cluster.run()
    run["spec"]["suspend"] = True  # nothing else launches: n0 is released once it ends
    await cluster.client.replace(RUNS, run, namespace=NS)
    await _finish_first_pod(cluster)
    await settle_watches(cluster.client, factory)
    cluster.reconciler.ctx.reads.cached = StaleNodes(factory, {"n0": before})
    await cluster.reconcile()
    assert _owner(cluster, "n0") is None
    assert not cluster.node("n0")["spec"].get("unschedulable")
    assert not (await cluster.run())["status"].get("cordonedNodes")


async def test_E12_a_release_from_a_stale_cache_never_touches_another_owners_stamp(
    cached: tuple[Cluster, InformerFactory],
) -> None:
    cluster, factory = cached
    await start_run(cluster, factory, cap=1)
    ours = copy.deepcopy(cluster.node("n0"))  # the cache: our stamp, still
    run = await cluster.run()
    run["spec"]["suspend"] = True
    await cluster.client.replace(RUNS, run, namespace=NS)
    await cluster.client.patch(
        NODES, "n0", {"metadata": {"annotations": {names.CORDON_OWNER: FOREIGN}}}
    )  # live: someone else's by now (our stamp reaped, the node re-cordoned)
    await _finish_first_pod(cluster)
    await settle_watches(cluster.client, factory)
    cluster.reconciler.ctx.reads.cached = StaleNodes(factory, {"n0": ours})
    await cluster.reconcile()
    assert _owner(cluster, "n0") == FOREIGN
    assert cluster.node("n0")["spec"].get("unschedulable") is True


async def test_a_passed_result_makes_no_event_a_failed_one_does() -> None:
    cluster = Cluster(nodes=2)
    await cluster.setup(tests={"t": custom_test("echo")})
    await cluster.create_run(maxConcurrentNodes=2)
    await cluster.reconcile()
    first, second = sorted(p["metadata"]["name"] for p in cluster.live_pods())
    await cluster.kubelet(first, exit_code=0, log="ok=1\n")
    await cluster.kubelet(second, exit_code=1, log="broken\n")
    mark = len(cluster.client.requests)
    await cluster.reconcile()
    reasons = [
        r.body["reason"]
        for r in cluster.client.requests[mark:]
        if r.verb == "create" and r.resource == "events"
    ]
    assert "TestPassed" not in reasons, reasons
    assert "TestFailed" in reasons, reasons


async def test_E14_a_launch_reads_its_nodes_fingerprint_from_the_cache() -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": custom_test("echo")})
    await cluster.client.create(
        FINGERPRINTS,
        {"metadata": {"name": "n0"}, "status": {"gpus": [{"vendor": "nvidia"}]}},
        namespace="glimmer-system",
    )
    factory = InformerFactory(cluster.client)
    registration = run_controller(
        client=cluster.client, namespace=None, operator_namespace="glimmer-system",
    )  # fmt: skip
    for watch in registration.watches:
        factory.informer(watch.resource, namespace=watch.namespace,
                         label_selector=watch.label_selector, transform=watch.transform,
                         indexers=watch.indexers)  # fmt: skip
    factory.start()
    try:
        await settle_watches(cluster.client, factory)
        cluster.reconciler = cached_reconciler(cluster, Readers.over(cluster.client, factory))
        await cluster.create_run()
        await settle_watches(cluster.client, factory)
        mark = len(cluster.client.requests)
        await cluster.reconcile()
        assert len(cluster.live_pods()) == 1
        gets = [r for r in cluster.client.requests[mark:] if r.verb == "get"]
        assert not [r for r in gets if r.resource == str(FINGERPRINTS)], gets
    finally:
        await factory.stop()
