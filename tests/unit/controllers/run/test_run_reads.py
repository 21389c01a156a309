"""I6: the run reconciler reads the cache where the rules allow and live where
they require it (docs/development.md §7), and a NotCachedError falls back to live."""

from __future__ import annotations

from typing import Any

from glimmer.controllers.kit import names
from glimmer.controllers.kit.names import RUNS
from glimmer.controllers.kit.reaper import StampReaper
from glimmer.controllers.run.setup import run_controller
from glimmer.engine import (
    NODES,
    PODS,
    CachedReader,
    FakeClient,
    InformerEvent,
    InformerFactory,
    NotCachedError,
    Readers,
    Resource,
)
from glimmer.engine.fake import Request
from tests.unit.controllers.conftest import cached_reconciler
from tests.unit.controllers.run.harness import NS, Cluster, custom_test
from tests.unit.engine.test_reader import settle_watches


async def start_run(cluster: Cluster, factory: InformerFactory, *, cap: int) -> None:
    """Create run r1 (at most ``cap`` nodes at once) and take its first pass."""
    await cluster.create_run(maxConcurrentNodes=cap)
    await settle_watches(cluster.client, factory)
    await cluster.reconcile()


def since(client: FakeClient, mark: int) -> list[Request]:
    return [r for r in client.requests[mark:] if r.verb != "watch"]


async def calls_of_next_pass(cluster: Cluster, factory: InformerFactory) -> list[tuple[str, ...]]:
    """(verb, resource, name) of every request the next reconcile makes, caches settled."""
    await settle_watches(cluster.client, factory)
    mark = len(cluster.client.requests)
    await cluster.reconcile()
    return [(r.verb, r.resource, r.name or "") for r in since(cluster.client, mark)]


async def test_I6_a_pass_over_synced_caches_reads_the_run_and_its_pods_from_them(
    cached: tuple[Cluster, InformerFactory],
) -> None:
    cluster, factory = cached
    await start_run(cluster, factory, cap=2)
    for pod in cluster.live_pods():
        await cluster.kubelet(pod["metadata"]["name"], exit_code=None)
    calls = await calls_of_next_pass(cluster, factory)  # both pods run: their attempts
    reads = [(verb, resource) for verb, resource, _ in calls if verb in ("get", "list")]
    assert ("get", str(RUNS)) not in reads, reads
    assert ("list", str(PODS)) not in reads, reads
    run = await cluster.run()
    assert [r["phase"] for r in run["status"]["results"]] == ["Running", "Running"]


async def test_I6_E10_a_cordon_from_the_cached_node_is_conditioned_on_its_version(
    cached: tuple[Cluster, InformerFactory],
) -> None:
    cluster, factory = cached
    await start_run(cluster, factory, cap=1)  # E6 reads both targets live; n0 cordoned and loaded
    (first,) = cluster.live_pods()
    await cluster.kubelet(first["metadata"]["name"], exit_code=0, log="ok=1\n")
    version = cluster.node("n1")["metadata"]["resourceVersion"]
    mark = len(cluster.client.requests)
    calls = await calls_of_next_pass(cluster, factory)  # harvests n0, then cordons n1
    cordon = calls.index(("patch", "nodes", "n1"))
    # E22: no live GET, but the stamp is written only if the cache was current (a 409
    # else, then a live read: tests/unit/controllers/run/test_cached_cordons.py).
    stamp = next(r for r in since(cluster.client, mark)
                 if r.verb == "patch" and r.resource == "nodes" and r.name == "n1")  # fmt: skip
    assert stamp.body["metadata"]["resourceVersion"] == version
    # The run view (from the cache) was confirmed before that first cordon write: by a
    # live read, or by a status write the apiserver accepted under its resourceVersion
    # (the pass writes what it settled before it touches a node: I9).
    confirming = {("get", str(RUNS), "r1"), ("replace", str(RUNS), "r1")}
    assert confirming & set(calls[:cordon]), calls


async def test_I6_E12_a_release_is_decided_on_live_pods_when_the_cache_lags(
    cached: tuple[Cluster, InformerFactory],
) -> None:
    cluster, factory = cached
    await start_run(cluster, factory, cap=1)
    assert len(cluster.live_pods()) == 1
    run = await cluster.run()
    run["spec"]["suspend"] = True
    await cluster.client.replace(RUNS, run, namespace=NS)
    await settle_watches(cluster.client, factory)
    cluster.reconciler = cached_reconciler(cluster, _readers(LaggingPods(factory), cluster.client))
    await cluster.reconcile()
    node = cluster.node("n0")
    assert node["spec"].get("unschedulable") is True, "released under a pod about to run"
    assert names.CORDON_OWNER in node["metadata"]["annotations"]


async def test_I6_a_stale_cached_run_never_cordons_a_node() -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": custom_test("echo")})
    await cluster.create_run()
    await cluster.reconcile()  # Running, its pod created, n0 cordoned
    stale = await cluster.run()
    run = await cluster.run()
    run["spec"].update(cancel=True, cancelPolicy="Immediate")
    await cluster.client.replace(RUNS, run, namespace=NS)
    await cluster.reconcile()  # cancelled: the pod deleted, n0 released
    assert (await cluster.run())["status"]["phase"] == "Cancelled"
    assert not cluster.pods()
    cluster.reconciler = cached_reconciler(
        cluster, _readers(StaleRun(cluster.client, stale), cluster.client)
    )
    mark = len(cluster.client.requests)
    result = await cluster.reconcile()
    assert result.requeue
    assert not [
        r for r in since(cluster.client, mark) if r.verb == "patch" and r.resource == "nodes"
    ]
    assert names.CORDON_OWNER not in (cluster.node("n0")["metadata"].get("annotations") or {})


async def test_I6_a_read_no_cache_covers_falls_back_to_live() -> None:
    cluster = Cluster(nodes=1)  # the harness reconciler has no informers at all
    await cluster.setup(tests={"t": custom_test("echo")})
    await cluster.create_run()
    await cluster.reconcile()
    assert (await cluster.run())["status"]["phase"] == "Running"
    assert len(cluster.live_pods()) == 1


def test_I6_a_pod_event_enqueues_the_run_that_controls_it() -> None:
    registration = run_controller(client=FakeClient(), namespace=None, operator_namespace="x")
    watch = next(w for w in registration.watches if w.resource == PODS)
    assert watch.label_selector == names.RUN_LABEL
    owner = {"kind": "BurnInRun", "name": "r1", "uid": "u", "controller": True}
    old = {"metadata": {"name": "p", "namespace": NS, "ownerReferences": [owner]},
           "status": {"phase": "Running"}}  # fmt: skip
    new = {**old, "status": {"phase": "Failed"}}
    assert watch.to_keys(InformerEvent("update", new, old=old)) == [f"{NS}/r1"]


class LaggingPods(CachedReader):
    """The manager's caches, except that the pod index has not seen any pod yet."""

    def by_index(self, resource: Resource, index: str, value: str, **kwargs: Any) -> Any:
        return []


class StaleRun(CachedReader):
    """A cache that still holds an old copy of the run, and nothing else."""

    def __init__(self, client: FakeClient, run: dict[str, Any]) -> None:
        super().__init__(InformerFactory(client))
        self.run = run

    async def get(self, resource: Resource, name: str, **kwargs: Any) -> Any:
        if resource == RUNS:
            return self.run
        raise NotCachedError("not cached")


def _readers(cached: CachedReader, client: FakeClient) -> Readers:
    return Readers(cached=cached, live=Readers.over(client, InformerFactory(client)).live)


async def test_I6_E22_the_reaper_answers_from_the_cache_and_reaps_only_on_live_reads(
    cached: tuple[Cluster, InformerFactory],
) -> None:
    cluster, factory = cached
    await cluster.create_run()
    await settle_watches(cluster.client, factory)
    await cluster.reconcile()  # n0, n1 stamped by r1
    await settle_watches(cluster.client, factory)
    reaper = StampReaper(client=cluster.client, readers=Readers.over(cluster.client, factory))
    mark = len(cluster.client.requests)
    assert (await reaper.reconcile("n0")).requeue_after  # r1 is alive: recheck later
    assert since(cluster.client, mark) == []  # answered by the cache alone
    # An orphan: a stamp naming a run that does not exist.
    await cluster.client.patch(
        NODES, "n1", {"metadata": {"annotations": {names.CORDON_OWNER: f"{NS}/gone/uid-x"}}}
    )
    await settle_watches(cluster.client, factory)
    mark = len(cluster.client.requests)
    await reaper.reconcile("n1")
    calls = [(r.verb, r.resource, r.name) for r in since(cluster.client, mark)]
    patch = calls.index(("patch", "nodes", "n1"))
    assert ("get", "nodes", "n1") in calls[:patch] and ("get", str(RUNS), "gone") in calls[:patch]
    assert names.CORDON_OWNER not in (cluster.node("n1")["metadata"].get("annotations") or {})
