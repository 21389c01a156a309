"""I9: a pass reads its cached pods in place (the informer store's own objects,
not copies), so nothing a pass does may edit one of them, or anything nested in one.

The guard snapshots every object of the pod cache before each pass and checks after it
that each still equals its snapshot, over passes that launch, harvest (Passed, Failed,
Error and its retry), watch (checkpoints, an image that will not arrive, an overdue
pod), meet a deleted pod and a foreign one, and step a Pair unit."""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
import pytest_asyncio

from glimmer.controllers.kit import names
from glimmer.controllers.kit.indexes import PODS_BY_RUN
from glimmer.controllers.run.reads import RunReads
from glimmer.engine import PODS, Informer, InformerFactory
from glimmer.plan import label_value
from tests.unit.controllers.conftest import wire_informers
from tests.unit.controllers.run.harness import NS, Cluster, custom_test
from tests.unit.controllers.run.test_links_sequencing import ends, pair_test, running
from tests.unit.controllers.run.test_pass_fanout import replace_with_foreign_pod
from tests.unit.engine.test_reader import settle_watches

JSON = dict[str, Any]


class PodCacheGuard:
    """Deep copies of the pod cache's objects, taken before a pass, compared after it;
    and how many pods the passes held that were the cache's own objects (so a guard
    over passes that only ever held copies cannot pass by accident)."""

    def __init__(self, factory: InformerFactory) -> None:
        self.informer: Informer = next(i for i in factory.informers if i.resource == PODS)
        self.taken: list[tuple[JSON, JSON]] = []
        self.shared = 0

    def snapshot(self) -> None:
        self.taken = [(obj, copy.deepcopy(obj)) for obj in self.informer.store.values()]

    def check(self) -> None:
        changed = [
            f"{obj['metadata']['name']}: {', '.join(_differences(before, obj, 'pod'))}"
            for obj, before in self.taken
            if obj != before
        ]
        assert not changed, "a pass mutated a cached pod: " + "; ".join(changed)

    def count_shared(self, pods: list[JSON]) -> None:
        stored = {id(obj) for obj in self.informer.store.values()}
        self.shared += sum(1 for pod in pods if id(pod) in stored)


_ABSENT: Any = "(absent)"


def _differences(before: Any, after: Any, path: str) -> list[str]:
    """Where ``after`` differs from ``before`` (dotted paths), for a readable failure."""
    if isinstance(before, dict) and isinstance(after, dict):
        return [
            found
            for key in sorted({*before, *after}, key=str)
            for found in _differences(
                before.get(key, _ABSENT), after.get(key, _ABSENT), f"{path}.{key}"
            )
        ]
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        return [
            found
            for i, (b, a) in enumerate(zip(before, after, strict=True))
            for found in _differences(b, a, f"{path}[{i}]")
        ]
    return [] if before == after else [f"{path}: {before!r} -> {after!r}"]


@pytest_asyncio.fixture(loop_scope="function")
async def factory_of() -> AsyncIterator[Callable[[Cluster], Awaitable[InformerFactory]]]:
    """Wires a cluster's reconciler to informers, as the manager does (conftest's
    ``cached``, for a cluster of any size)."""
    started: list[InformerFactory] = []

    async def wire(cluster: Cluster) -> InformerFactory:
        factory = await wire_informers(cluster)
        started.append(factory)
        return factory

    yield wire
    for factory in started:
        await factory.stop()


class Guarded:
    """A cached cluster whose every pass runs under the guard."""

    def __init__(
        self, cluster: Cluster, factory: InformerFactory, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        self.cluster = cluster
        self.factory = factory
        self.guard = PodCacheGuard(factory)
        reads = cluster.reconciler.ctx.reads
        original = RunReads.pods_of

        async def pods_of(run: Any) -> tuple[list[JSON], bool]:
            pods, cached = await original(reads, run)
            self.guard.count_shared(pods)
            return pods, cached

        monkeypatch.setattr(reads, "pods_of", pods_of)

    async def reconcile(self) -> None:
        await settle_watches(self.cluster.client, self.factory)
        self.guard.snapshot()
        await self.cluster.reconcile()
        self.guard.check()

    def pod_names(self) -> list[str]:
        return sorted(p["metadata"]["name"] for p in self.cluster.pods())

    def live_names(self) -> list[str]:
        return sorted(p["metadata"]["name"] for p in self.cluster.live_pods())

    async def results(self) -> list[JSON]:
        return list((await self.cluster.run())["status"].get("results") or [])


def _messages(results: list[JSON]) -> str:
    return " ".join(
        str(m.get("message", "")) for r in results for m in (r, *(r.get("attempts") or []))
    )


async def _launch_and_harvest(g: Guarded) -> None:
    """A launch wave; checkpoints of running pods; Passed, Failed, and an OOM-killed
    Error whose retry is launched and passes."""
    cluster = g.cluster
    await cluster.create_run(maxConcurrentNodes=3, retryOnErrorLimit=1)
    await g.reconcile()  # launch n0, n1, n2
    first = g.live_names()
    assert len(first) == 3
    for name in first:
        await cluster.kubelet(name, exit_code=None)
    await g.reconcile()  # starts recorded (UIDs pinned)
    cluster.advance(11)
    await g.reconcile()  # checkpoints read the running logs (H1)
    passed, failed, killed = first
    await cluster.kubelet(passed, exit_code=0, log="ok=1\n")
    await cluster.kubelet(failed, exit_code=1, log="ok=0\n")
    await cluster.kubelet(killed, exit_code=137, reason="OOMKilled", log="ok=1\n")
    await g.reconcile()  # all three harvested; the Error's retry created
    [retry] = g.live_names()
    await cluster.kubelet(retry, exit_code=None)
    await g.reconcile()
    await cluster.kubelet(retry, exit_code=0, log="ok=1\n")
    await g.reconcile()
    await g.reconcile()
    results = await g.results()
    assert sorted(r["phase"] for r in results) == ["Failed", "Passed", "Passed"], results
    assert "OOMKilled" in _messages(results)


async def _deleted_pulling_overdue(g: Guarded) -> None:
    """A started pod deleted under the run, an image that never arrives, an overdue pod."""
    cluster = g.cluster
    await cluster.create_run(maxConcurrentNodes=3)
    await g.reconcile()
    pulling, overdue, deleted = g.live_names()
    await cluster.kubelet(pulling, exit_code=None, waiting="ImagePullBackOff")
    await cluster.kubelet(overdue, exit_code=None)
    await cluster.kubelet(deleted, exit_code=None)
    await g.reconcile()  # two starts recorded, one pulling
    await cluster.client.delete(PODS, deleted, namespace=NS)
    cluster.advance(10)  # past the image-pull grace (5 s here)
    await g.reconcile()  # the deleted pod is an Error; the pull never arrives: Error
    cluster.advance(1000)  # past the overdue bound
    await g.reconcile()  # the running pod is overdue: Error, deleted after the write
    await g.reconcile()
    results = await g.results()
    assert [r["phase"] for r in results] == ["Error"] * 3, results
    messages = _messages(results)
    for words in ("deleted before it terminated", "ImagePullBackOff", "still not terminated"):
        assert words in messages, messages


async def _foreign_pod(g: Guarded) -> None:
    """I18: a pod under our name that is not ours is never read, and left alone."""
    cluster = g.cluster
    await cluster.create_run()
    await g.reconcile()
    [ours] = cluster.pods()
    await replace_with_foreign_pod(cluster, ours)
    await g.reconcile()
    await g.reconcile()
    [result] = await g.results()
    assert result["phase"] == "Error" and "foreign pod" in result["message"], result


async def _pair_unit(g: Guarded) -> None:
    """F1: Service and server first, the client once the server is Ready, both judged."""
    cluster = g.cluster
    await cluster.create_run(maxConcurrentNodes=2)
    await g.reconcile()  # Service, cordons, server
    await running(cluster, "server")
    await g.reconcile()  # server Ready: the client is created
    await running(cluster, "client")
    await g.reconcile()
    await ends(cluster, "client", exit_code=0, log="ok=1\n")
    await ends(cluster, "server", exit_code=0, log="ok=1\n")
    await g.reconcile()  # both sides read, combined, judged
    await g.reconcile()
    [result] = await g.results()
    assert result["phase"] == "Passed", result


SCENARIOS: dict[str, tuple[int, JSON, Callable[[Guarded], Awaitable[None]]]] = {
    "launch-and-harvest": (
        3,
        custom_test("echo", checkpointIntervalSeconds=10),
        _launch_and_harvest,
    ),
    "deleted-pulling-overdue": (3, custom_test("echo"), _deleted_pulling_overdue),
    "foreign-pod": (1, custom_test("echo"), _foreign_pod),
    "pair-unit": (2, pair_test(), _pair_unit),
}


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
async def test_I9_a_pass_never_mutates_a_cached_pod(
    scenario: str,
    factory_of: Callable[[Cluster], Awaitable[InformerFactory]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    nodes, test, steps = SCENARIOS[scenario]
    cluster = Cluster(nodes=nodes)
    await cluster.setup(tests={"t": test})
    guarded = Guarded(cluster, await factory_of(cluster), monkeypatch)
    await steps(guarded)
    assert guarded.guard.shared > 0, "no pass held the cache's own pod objects"


async def test_I9_the_pods_of_a_pass_are_the_cache_objects_themselves(
    factory_of: Callable[[Cluster], Awaitable[InformerFactory]],
) -> None:
    cluster = Cluster(nodes=2)
    await cluster.setup(tests={"t": custom_test("echo")})
    factory = await factory_of(cluster)
    await cluster.create_run(maxConcurrentNodes=2)
    await cluster.reconcile()
    await settle_watches(cluster.client, factory)
    run = await cluster.run()
    pods, cached = await cluster.reconciler.ctx.reads.pods_of(run)
    store = PodCacheGuard(factory).informer.store
    assert cached and len(pods) == 2
    assert all(any(p is s for s in store.values()) for p in pods)  # shared, not copied
    # The copying read is still there for whoever edits what it reads.
    copies = cluster.reconciler.ctx.reads.cached.by_index(
        PODS, PODS_BY_RUN, label_value("r1"), namespace=NS, label_selector=names.RUN_LABEL
    )
    assert copies == pods and not any(c is p for c in copies for p in pods)


async def test_I9_an_event_replaces_a_cached_pod_and_never_edits_the_one_a_pass_holds(
    factory_of: Callable[[Cluster], Awaitable[InformerFactory]],
) -> None:
    """What makes shared reads safe across an await: the informer stores each event's
    object in place of the old one (Store.upsert), so a pod a pass holds keeps showing
    the version it read, exactly as a copy would."""
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": custom_test("echo")})
    factory = await factory_of(cluster)
    await cluster.create_run()
    await cluster.reconcile()
    await settle_watches(cluster.client, factory)
    [held], cached = await cluster.reconciler.ctx.reads.pods_of(await cluster.run())
    assert cached
    before = copy.deepcopy(held)
    await cluster.kubelet(held["metadata"]["name"], exit_code=0, log="ok=1\n")
    await settle_watches(cluster.client, factory)
    [now], _ = await cluster.reconciler.ctx.reads.pods_of(await cluster.run())
    assert now["status"]["phase"] == "Succeeded" and now is not held
    assert held == before  # the held version is untouched by the event
