"""Cached pods (I6): a pass reads its pods from the cache, and a lagging cache never decides
a release (E12, H) or settles a live pod early (E16)."""

from __future__ import annotations

import copy
from typing import Any

from glimmer.controllers.kit import names
from glimmer.controllers.kit.names import RUNS
from glimmer.controllers.run.sweep import POD_CACHE_PATIENCE, POD_CACHE_WAIT_SECONDS
from glimmer.engine import PODS, ApiError, CachedReader, InformerFactory, Resource
from tests.unit.controllers.run.harness import NS, Cluster
from tests.unit.controllers.run.test_run_reads import (
    calls_of_next_pass,
    start_run,
)
from tests.unit.engine.test_reader import settle_watches


class PodsUnseen(CachedReader):
    """The manager's caches, except that the pod cache has not seen any pod yet."""

    def by_index(self, resource: Resource, index: str, value: str, **kwargs: Any) -> Any:
        return []

    async def get_metadata(self, resource: Resource, name: str, **kwargs: Any) -> Any:
        if resource == PODS:
            raise ApiError(status=404, reason="Not Found", body={"reason": "NotFound"})
        return await super().get_metadata(resource, name, **kwargs)


class FrozenPods(CachedReader):
    """The manager's caches, with the pod index frozen at one moment."""

    def __init__(self, factory: InformerFactory, pods: list[dict[str, Any]]) -> None:
        super().__init__(factory)
        self.frozen = pods

    def by_index(self, resource: Resource, index: str, value: str, **kwargs: Any) -> Any:
        return copy.deepcopy(self.frozen)


async def test_E12_a_release_over_a_cache_that_shows_every_created_pod_lists_nothing(
    cached: tuple[Cluster, InformerFactory],
) -> None:
    cluster, factory = cached
    await start_run(cluster, factory, cap=1)  # n0 cordoned, its pod created by this process
    (first,) = cluster.live_pods()
    await cluster.kubelet(first["metadata"]["name"], exit_code=0, log="ok=1\n")
    calls = await calls_of_next_pass(cluster, factory)  # harvest n0, release it, cordon n1
    assert ("list", "pods", "") not in calls, calls
    assert names.CORDON_OWNER not in (cluster.node("n0")["metadata"].get("annotations") or {})
    run = await cluster.run()
    assert run["status"]["cordonedNodes"] == ["n1"]


async def test_E12_a_cache_lagging_a_pod_this_process_created_never_releases_its_node(
    cached: tuple[Cluster, InformerFactory],
) -> None:
    cluster, factory = cached
    await start_run(cluster, factory, cap=1)  # the same reconciler created n0's pod
    assert len(cluster.live_pods()) == 1
    run = await cluster.run()
    run["spec"]["suspend"] = True  # nothing launches: only the pod holds n0
    await cluster.client.replace(RUNS, run, namespace=NS)
    await settle_watches(cluster.client, factory)
    cluster.reconciler.ctx.reads.cached = PodsUnseen(factory)  # the pod cache lags
    for _ in range(POD_CACHE_PATIENCE + 1):  # put off while patient, then a pass proper
        await cluster.reconcile()
    node = cluster.node("n0")
    assert node["spec"].get("unschedulable") is True, "released under a pod about to run"
    assert names.CORDON_OWNER in node["metadata"]["annotations"]


async def test_E16_a_stale_cached_pod_never_settles_a_pod_that_started(
    cached: tuple[Cluster, InformerFactory],
) -> None:
    cluster, factory = cached
    await start_run(cluster, factory, cap=1)
    (pod,) = cluster.live_pods()
    name = pod["metadata"]["name"]
    await cluster.kubelet(name, exit_code=None, waiting="ImagePullBackOff")
    await settle_watches(cluster.client, factory)
    stale = [copy.deepcopy(p) for p in cluster.pods()]  # the cache's view: still pulling
    await cluster.kubelet(name, exit_code=None)  # live: the image arrived, it runs
    cluster.advance(200)  # past the image-pull grace (120 s), not yet overdue (425 s)
    cluster.reconciler.ctx.reads.cached = FrozenPods(factory, stale)
    await cluster.reconcile()
    (result,) = (await cluster.run())["status"]["results"]
    assert result["phase"] == "Running", result
    assert [p["metadata"]["name"] for p in cluster.live_pods()] == [name]


async def test_a_pass_over_a_cache_lagging_our_new_pods_creates_none_again(
    cached: tuple[Cluster, InformerFactory],
) -> None:
    cluster, factory = cached
    await start_run(cluster, factory, cap=2)  # two pods created by this process
    await settle_watches(cluster.client, factory)
    cluster.reconciler.ctx.reads.cached = PodsUnseen(factory)  # the pod cache lags them
    mark = len(cluster.client.requests)
    for _ in range(POD_CACHE_PATIENCE):  # their ADDED events are on their way: wait
        assert (await cluster.reconcile()).requeue_after == POD_CACHE_WAIT_SECONDS
    waits = [(r.verb, r.resource) for r in cluster.client.requests[mark:] if r.verb != "watch"]
    assert not [c for c in waits if c[1] in ("pods", "nodes") or c[0] != "get"], waits
    await cluster.reconcile()
    calls = [(r.verb, r.resource) for r in cluster.client.requests[mark:] if r.verb != "watch"]
    assert ("create", "pods") not in calls, calls  # no AlreadyExists round trips
    assert ("list", "pods") in calls  # one live list instead, once the wait is over
    assert len(cluster.pods()) == 2


class BeforeOurWrite(CachedReader):
    """The manager's caches, with the run frozen at one older copy."""

    def __init__(self, factory: InformerFactory, run: dict[str, Any]) -> None:
        super().__init__(factory)
        self.run = run

    async def get(self, resource: Resource, name: str, **kwargs: Any) -> Any:
        if resource == RUNS:
            return copy.deepcopy(self.run)
        return await super().get(resource, name, **kwargs)


async def test_a_cached_run_behind_our_own_write_waits_for_the_cache(
    cached: tuple[Cluster, InformerFactory],
) -> None:
    cluster, factory = cached
    await start_run(cluster, factory, cap=1)
    (pod,) = cluster.live_pods()
    await cluster.kubelet(pod["metadata"]["name"], exit_code=None)
    before = await cluster.run()
    await settle_watches(cluster.client, factory)
    await cluster.reconcile()  # records the start: a status write by this process
    assert (await cluster.run())["metadata"]["resourceVersion"] != before["metadata"][
        "resourceVersion"
    ]
    cluster.reconciler.ctx.reads.cached = BeforeOurWrite(factory, before)
    mark = len(cluster.client.requests)
    for _ in range(3):
        assert (await cluster.reconcile()).requeue_after == 1.0
    assert [r for r in cluster.client.requests[mark:] if r.verb != "watch"] == []
    await cluster.reconcile()  # patience spent: the pass goes ahead (and loses a 409)
    assert [r for r in cluster.client.requests[mark:] if r.verb != "watch"] != []
