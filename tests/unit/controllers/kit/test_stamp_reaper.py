"""The stamp reaper copies only metadata from the cache (E21, E22)."""

from __future__ import annotations

from typing import Any

from glimmer.controllers.kit import names
from glimmer.controllers.kit.names import RUNS
from glimmer.controllers.kit.reaper import StampReaper
from glimmer.engine import NODES, CachedReader, FakeClient, InformerFactory, Readers, Resource
from tests.unit.controllers.run.harness import NS, Cluster, custom_test
from tests.unit.engine.test_reader import settle_watches


class MetadataOnly(CachedReader):
    """The manager's caches, refusing any whole-object copy of a run or node."""

    async def get(self, resource: Resource, name: str, **kwargs: Any) -> Any:
        raise AssertionError(f"whole {resource} {name} copied from the cache")


def _readers(factory: InformerFactory, client: FakeClient) -> Readers:
    return Readers(cached=MetadataOnly(factory), live=Readers.over(client, factory).live)


async def _cluster() -> tuple[Cluster, InformerFactory]:
    cluster = Cluster(nodes=2)
    await cluster.setup(tests={"t": custom_test("echo")})
    factory = InformerFactory(cluster.client)
    factory.informer(NODES)
    factory.informer(RUNS)
    factory.start()
    await cluster.create_run()
    await cluster.reconcile()  # n0, n1 stamped by r1
    await settle_watches(cluster.client, factory)
    return cluster, factory


async def test_E21_the_reaper_reads_only_metadata_from_the_cache() -> None:
    cluster, factory = await _cluster()
    try:
        reaper = StampReaper(client=cluster.client, readers=_readers(factory, cluster.client))
        mark = len(cluster.client.requests)
        assert (await reaper.reconcile("n0")).requeue_after  # r1 alive: recheck later
        assert [r for r in cluster.client.requests[mark:] if r.verb != "watch"] == []
    finally:
        await factory.stop()


async def test_E22_an_orphan_seen_in_metadata_is_still_reaped_on_live_reads() -> None:
    cluster, factory = await _cluster()
    try:
        await cluster.client.patch(
            NODES, "n1", {"metadata": {"annotations": {names.CORDON_OWNER: f"{NS}/gone/u-x"}}}
        )
        await settle_watches(cluster.client, factory)
        reaper = StampReaper(client=cluster.client, readers=_readers(factory, cluster.client))
        await reaper.reconcile("n1")
        assert names.CORDON_OWNER not in (cluster.node("n1")["metadata"].get("annotations") or {})
        # The live run r1 keeps its stamp on n0: a UID that matches is never reaped.
        await reaper.reconcile("n0")
        assert names.CORDON_OWNER in cluster.node("n0")["metadata"]["annotations"]
    finally:
        await factory.stop()
