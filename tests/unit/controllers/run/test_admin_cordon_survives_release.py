"""E10/E12/E21: an admin's cordon is never undone by a release.

A release hands back only what the run itself placed and nobody changed since: the
node goes back to schedulable only if it was schedulable when the run started *and*
when the run stamped it, its ``prior-unschedulable`` annotation still says what the
run wrote, and no field manager but the operator's owns ``spec.unschedulable``. What
``kubectl cordon`` does on a node that is already cordoned (nothing: no request) cannot
be seen; the integration test beside the run tests shows, on the real apiserver, which
admin actions leave a trace (tests/integration/run/test_admin_cordon_survives_release.py).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from glimmer.controllers.kit import names
from glimmer.controllers.kit.cordon import (
    compact_cordon_node,
    cordon_patches,
    cordon_writers,
    release_decision,
)
from glimmer.controllers.kit.indexes import node_watch
from glimmer.controllers.kit.reaper import StampReaper
from glimmer.controllers.kit.ref import RunRef
from glimmer.controllers.run.setup import run_controller
from glimmer.engine import (
    EVENTS,
    FIELD_MANAGER,
    NODES,
    FakeClock,
    InformerFactory,
    Readers,
    compact_node,
)
from tests.unit.controllers.conftest import cached_reconciler
from tests.unit.controllers.run.harness import NS, Cluster, custom_test
from tests.unit.engine.test_reader import settle_watches

OURS = RunRef("team", "r1", "uid-1")


def owner_entry(manager: str, **extra: Any) -> dict[str, Any]:
    """A managedFields entry owning ``spec.unschedulable``, as the apiserver writes one."""
    return {
        "manager": manager,
        "operation": "Update",
        "apiVersion": "v1",
        "time": "2026-01-02T03:04:05Z",
        "fieldsType": "FieldsV1",
        "fieldsV1": {"f:spec": {"f:unschedulable": {}}},
        **extra,
    }


def stamped(*, prior: str = "false", managed: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "name": "n0",
        "resourceVersion": "7",
        "annotations": {names.CORDON_OWNER: OURS.render(), names.PRIOR_UNSCHEDULABLE: prior},
    }
    if managed is not None:
        meta["managedFields"] = managed
    return {"metadata": meta, "spec": {"unschedulable": True}}


# --- the rule, pure ---------------------------------------------------------------------


def test_E12_a_cordon_written_by_another_field_manager_is_kept_on_release() -> None:
    node = stamped(managed=[owner_entry("kubectl"), owner_entry(FIELD_MANAGER)])
    decision = release_decision(node, stamp=OURS, prior=False)
    assert decision is not None
    assert decision.patch["spec"] == {"unschedulable": True}
    notes = decision.patch["metadata"]["annotations"]
    assert notes[names.CORDON_OWNER] is None and notes[names.PRIOR_UNSCHEDULABLE] is None
    assert decision.kept is not None and "kubectl (Update 2026-01-02T03:04:05Z)" in decision.kept


def test_E12_a_cordon_only_the_operator_wrote_is_handed_back() -> None:
    for managed in ([owner_entry(FIELD_MANAGER)], [], None):
        decision = release_decision(stamped(managed=managed), stamp=OURS, prior=False)
        assert decision is not None
        assert decision.patch["spec"] == {"unschedulable": None}, managed
        assert decision.kept is None


def test_E12_a_status_subresource_entry_or_another_field_claims_no_cordon() -> None:
    status_writer = owner_entry("kubelet", subresource="status")
    labeller = dict(owner_entry("kubectl-label"), fieldsV1={"f:metadata": {"f:labels": {}}})
    node = stamped(managed=[status_writer, labeller, owner_entry(FIELD_MANAGER)])
    assert cordon_writers(node) == []
    decision = release_decision(node, stamp=OURS, prior=False)
    assert decision is not None and decision.patch["spec"] == {"unschedulable": None}


def test_E12_a_prior_annotation_set_to_true_keeps_the_cordon_and_says_why() -> None:
    decision = release_decision(stamped(prior="true"), stamp=OURS, prior=False)
    assert decision is not None
    assert decision.patch["spec"] == {"unschedulable": True}
    assert decision.kept is not None and names.PRIOR_UNSCHEDULABLE in decision.kept
    restore = release_decision(stamped(prior="true"), stamp=OURS, prior=True)
    assert restore is not None and restore.kept is None  # a plain restore needs no Event


def test_E10_a_node_cordoned_by_someone_else_when_the_run_stamps_it_records_prior_true() -> None:
    """The start record says schedulable, but the node is unschedulable and unstamped now:
    an admin cordoned it after the start (the run's own cordon is always stamped)."""
    node = {"metadata": {"name": "n0", "resourceVersion": "3"}, "spec": {"unschedulable": True}}
    [patch], record = cordon_patches(node, stamp=OURS, prior=False, heat_until=None)
    assert record
    assert patch["metadata"]["annotations"][names.PRIOR_UNSCHEDULABLE] == "true"
    free = {"metadata": {"name": "n0", "resourceVersion": "3"}, "spec": {}}
    [patch], _ = cordon_patches(free, stamp=OURS, prior=False, heat_until=None)
    assert patch["metadata"]["annotations"][names.PRIOR_UNSCHEDULABLE] == "false"


def test_E12_the_cordon_node_cache_keeps_only_who_owns_the_cordon() -> None:
    node = stamped(managed=[owner_entry("kubectl"), dict(owner_entry("x"), fieldsV1={})])
    node["metadata"]["managedFields"].append(owner_entry("kubelet", subresource="status"))
    cached = compact_cordon_node(node)
    assert cached["metadata"]["managedFields"] == [
        {
            "manager": "kubectl",
            "operation": "Update",
            "time": "2026-01-02T03:04:05Z",
            "fieldsV1": {"f:spec": {"f:unschedulable": {}}},
        }
    ]
    assert cordon_writers(cached) == ["kubectl (Update 2026-01-02T03:04:05Z)"]
    assert compact_cordon_node(stamped())["metadata"]["managedFields"] == []


# --- through the reconciler -------------------------------------------------------------


async def admin_writes_cordon(cluster: Cluster, node: str, manager: str = "kubectl") -> None:
    """What ``kubectl uncordon; kubectl cordon`` leaves on a node the run holds: the same
    ``unschedulable: true``, now owned by kubectl's field manager (the fake apiserver
    keeps no managedFields of its own, so the test writes the apiserver's)."""
    await cluster.client.patch(
        NODES,
        node,
        {"metadata": {"managedFields": [owner_entry(manager)]}, "spec": {"unschedulable": True}},
    )


def kept_events(cluster: Cluster) -> list[str]:
    return [
        str(e["message"]) for e in cluster.client.objects(EVENTS) if e["reason"] == "CordonKept"
    ]


def stamp_of(cluster: Cluster, node: str) -> str | None:
    return (cluster.node(node)["metadata"].get("annotations") or {}).get(names.CORDON_OWNER)


async def test_E19_an_admin_cordon_placed_mid_run_survives_the_terminal_release() -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": custom_test("echo")})
    await cluster.create_run()
    await cluster.reconcile()
    [pod] = cluster.live_pods()
    await admin_writes_cordon(cluster, "n0")
    await cluster.kubelet(pod["metadata"]["name"], exit_code=0, log="ok=1\n")
    await cluster.reconcile()
    assert (await cluster.run())["status"]["phase"] == "Passed"
    assert cluster.node("n0")["spec"].get("unschedulable") is True
    assert stamp_of(cluster, "n0") is None  # the run's own stamp is gone
    [message] = kept_events(cluster)
    assert "node n0 stays cordoned" in message and "kubectl" in message


async def test_E19_an_admin_annotation_keeps_a_node_the_run_holds_cordoned() -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": custom_test("echo")})
    await cluster.create_run()
    await cluster.reconcile()
    [pod] = cluster.live_pods()
    await cluster.client.patch(
        NODES, "n0", {"metadata": {"annotations": {names.PRIOR_UNSCHEDULABLE: "true"}}}
    )
    await cluster.kubelet(pod["metadata"]["name"], exit_code=0, log="ok=1\n")
    await cluster.reconcile()
    assert cluster.node("n0")["spec"].get("unschedulable") is True
    assert stamp_of(cluster, "n0") is None
    assert len(kept_events(cluster)) == 1


async def test_E10_E12_an_admin_cordon_placed_between_two_tests_survives_the_run() -> None:
    """n0 is released after the first test, an admin cordons it, and the second test
    cordons it again: the prior the run writes then is what the node showed (true), not
    the start record (false), so the final release keeps the admin's cordon."""
    cluster = Cluster(nodes=2)
    await cluster.setup(tests={"t1": custom_test("echo"), "t2": custom_test("echo")})
    await cluster.create_run(maxConcurrentNodes=1)

    async def finish_and_pass() -> None:
        [pod] = cluster.live_pods()
        await cluster.kubelet(pod["metadata"]["name"], exit_code=0, log="ok=1\n")
        await cluster.reconcile()

    await cluster.reconcile()  # t1 on n0
    await finish_and_pass()  # t1 on n1; n0 released
    assert stamp_of(cluster, "n0") is None and not cluster.node("n0")["spec"].get("unschedulable")
    await cluster.client.patch(NODES, "n0", {"spec": {"unschedulable": True}})  # the admin
    await finish_and_pass()  # t2 on n0, cordoned again over the admin's cordon
    notes = cluster.node("n0")["metadata"]["annotations"]
    assert notes[names.PRIOR_UNSCHEDULABLE] == "true"
    await finish_and_pass()  # t2 on n1; n0 released
    await finish_and_pass()
    assert (await cluster.run())["status"]["phase"] == "Passed"
    assert cluster.node("n0")["spec"].get("unschedulable") is True
    assert not cluster.node("n1")["spec"].get("unschedulable")
    assert stamp_of(cluster, "n0") is None
    assert len(kept_events(cluster)) == 1


@pytest_asyncio.fixture(loop_scope="function", params=["owners-kept", "owners-dropped"])
async def node_cache(
    request: pytest.FixtureRequest,
) -> AsyncIterator[tuple[Cluster, InformerFactory, bool]]:
    """A cluster whose reconciler reads through informers, nodes cached by
    :func:`compact_cordon_node` (who owns each cordon kept) or by the plain
    :func:`~glimmer.engine.compact_node` (no managedFields at all); and which."""
    kept = request.param == "owners-kept"
    cluster = Cluster(nodes=2)
    await cluster.setup(tests={"t": custom_test("echo")})
    factory = InformerFactory(cluster.client, clock=FakeClock())
    registration = run_controller(client=cluster.client, namespace=None, operator_namespace="x")
    for watch in (*registration.watches, node_watch()):
        factory.informer(
            watch.resource,
            label_selector=watch.label_selector,
            transform=(compact_cordon_node if kept else compact_node)
            if watch.resource == NODES
            else watch.transform,
            indexers=watch.indexers,
        )
    factory.start()
    await settle_watches(cluster.client, factory)
    cluster.reconciler = cached_reconciler(cluster, Readers.over(cluster.client, factory))
    yield cluster, factory, kept
    await factory.stop()


async def test_E12_a_per_pass_release_from_the_cache_keeps_an_admins_cordon(
    node_cache: tuple[Cluster, InformerFactory, bool],
) -> None:
    """Decided on the cached node when the cache keeps who owns the cordon; read live
    first when it keeps no field owners (it cannot tell an admin's cordon from ours)."""
    cluster, factory, kept = node_cache
    await cluster.create_run(maxConcurrentNodes=1)
    await settle_watches(cluster.client, factory)
    await cluster.reconcile()  # n0 cordoned and loaded
    await admin_writes_cordon(cluster, "n0")
    [pod] = cluster.live_pods()
    await cluster.kubelet(pod["metadata"]["name"], exit_code=0, log="ok=1\n")
    await settle_watches(cluster.client, factory)
    mark = len(cluster.client.requests)
    await cluster.reconcile()  # n0 released (n1 launches), decided on the cached node
    gets = [
        r.name for r in cluster.client.requests[mark:] if r.verb == "get" and r.resource == "nodes"
    ]
    assert gets == ([] if kept else ["n0"])
    assert cluster.node("n0")["spec"].get("unschedulable") is True
    assert stamp_of(cluster, "n0") is None
    assert (await cluster.run())["status"]["cordonedNodes"] == ["n1"]
    [message] = kept_events(cluster)
    assert "kubectl" in message


async def test_E21_the_reaper_keeps_a_cordon_someone_else_wrote_and_says_so_on_the_node() -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": custom_test("echo")})
    gone = RunRef(NS, "vanished", "uid-gone")
    await cluster.client.patch(
        NODES,
        "n0",
        {
            "metadata": {
                "annotations": {
                    names.CORDON_OWNER: gone.render(),
                    names.PRIOR_UNSCHEDULABLE: "false",
                },
                "managedFields": [owner_entry("kubectl")],
            },
            "spec": {"unschedulable": True},
        },
    )
    await StampReaper(client=cluster.client).reconcile("n0")
    assert stamp_of(cluster, "n0") is None
    assert cluster.node("n0")["spec"].get("unschedulable") is True
    [event] = [e for e in cluster.client.objects(EVENTS) if e["reason"] == "CordonKept"]
    assert event["involvedObject"]["kind"] == "Node" and event["involvedObject"]["name"] == "n0"
    assert "vanished" in event["message"]
