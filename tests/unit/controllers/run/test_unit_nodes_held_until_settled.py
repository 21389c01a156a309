"""E8/E10/F1/F4: every node of a Pair or Group unit stays cordoned, stamped and in
``status.cordonedNodes`` from before the unit's first pod exists until the unit has
settled and none of its pods is live, and no other run is admitted onto any of them.

The unit's result opens only once its lead pod (the server, rank 0) has started, so the
window this pins is the lead's creation to its start, and a settled unit's pods still
going: a busy set of "nodes with a live pod of their own" alone released the client's
and workers' nodes there."""

from __future__ import annotations

from typing import Any

from glimmer.controllers.kit import names
from glimmer.controllers.kit.names import RUNS
from glimmer.controllers.kit.view import RunView
from glimmer.controllers.run.passes import Pass
from glimmer.engine import NODES, PODS
from tests.unit.controllers.run.harness import NS, Cluster
from tests.unit.controllers.run.test_links_sequencing import (
    ends,
    group_test,
    name_of,
    pair_test,
    pod_by_role,
    running,
    start,
)


def held_everywhere(cluster: Cluster, run: dict[str, Any], nodes: list[str]) -> list[str]:
    """What is wrong with ``nodes`` being held by ``run``: stamp, cordon, status record
    (an empty list when every node is held)."""
    stamp = f"{NS}/r1/{run['metadata']['uid']}"
    problems: list[str] = []
    recorded = RunView(run).cordoned_nodes
    for name in nodes:
        node = cluster.node(name)
        if (node["metadata"].get("annotations") or {}).get(names.CORDON_OWNER) != stamp:
            problems.append(f"{name}: not stamped")
        if not node["spec"].get("unschedulable"):
            problems.append(f"{name}: schedulable")
        if name not in recorded:
            problems.append(f"{name}: not in status.cordonedNodes {recorded}")
    return problems


async def test_E8_F4_every_node_of_a_group_is_held_from_launch_until_the_group_settles() -> None:
    cluster = Cluster(nodes=3)
    nodes = list(cluster.node_names)
    run = await start(cluster, group_test())
    assert pod_by_role(cluster, "rank-0") is not None
    assert held_everywhere(cluster, run, nodes) == []
    # Rank 0 exists but has not started: no result is open yet. Two passes over it.
    for _ in range(2):
        await cluster.reconcile()
        run = await cluster.run()
        assert not run["status"].get("results")
        assert held_everywhere(cluster, run, nodes) == []
    await running(cluster, "rank-0")
    await cluster.reconcile()  # rank 0 Ready: every worker created together
    assert pod_by_role(cluster, "rank-1") is not None and pod_by_role(cluster, "rank-2")
    run = await cluster.run()
    assert held_everywhere(cluster, run, nodes) == []
    for rank in (1, 2):
        await running(cluster, f"rank-{rank}")
    await ends(cluster, "rank-0", exit_code=0, log="bw=12\n")
    await ends(cluster, "rank-1", exit_code=0, log="bw=12\n")
    await cluster.reconcile()  # one rank still running: the group has not settled
    run = await cluster.run()
    assert held_everywhere(cluster, run, nodes) == []
    await ends(cluster, "rank-2", exit_code=0, log="bw=12\n")
    await cluster.reconcile()
    run = await cluster.run()
    assert run["status"]["phase"] == "Passed", run["status"]
    for name in nodes:
        assert not cluster.node(name)["spec"].get("unschedulable"), name


async def test_E8_F1_a_pair_clients_node_is_held_while_the_server_has_not_started() -> None:
    cluster = Cluster(nodes=2)
    run = await start(cluster, pair_test())
    for _ in range(2):
        await cluster.reconcile()
        run = await cluster.run()
        assert held_everywhere(cluster, run, ["n0", "n1"]) == []
    await running(cluster, "server")
    await cluster.reconcile()
    assert pod_by_role(cluster, "client") is not None
    run = await cluster.run()
    assert held_everywhere(cluster, run, ["n0", "n1"]) == []


async def test_E3_a_started_but_unstarted_group_leaves_no_node_free_for_another_run() -> None:
    """Every node of the in-flight unit is held: a second run over a worker's node is
    refused (E3, decided on a live list of every run) while rank 0 has not started."""
    cluster = Cluster(nodes=3)
    await start(cluster, group_test())
    await cluster.reconcile()
    pods_before = len(cluster.pods())
    await cluster.client.create(
        RUNS,
        {"metadata": {"name": "r2"},
         "spec": {"profileRef": "prof", "target": {"nodeNames": ["n2"]}}},
        namespace=NS,
    )  # fmt: skip
    await cluster.reconcile("r2")
    second = await cluster.run("r2")
    assert second["status"]["phase"] == "Error"
    [refusal] = second["status"]["results"]
    assert refusal["name"] == "admission" and f"run {NS}/r1 already holds n2" in refusal["message"]
    assert len(cluster.pods()) == pods_before  # nothing launched for r2


async def test_E8_a_live_pod_of_a_settled_link_unit_holds_every_node_of_its_unit() -> None:
    """The pass's busy set itself: a live server whose attempt has settled (it is
    deleted after the status write) still holds the client's node until it is gone."""
    cluster = Cluster(nodes=2)
    await start(cluster, pair_test())
    await running(cluster, "server")
    await cluster.reconcile()
    await running(cluster, "client")
    await ends(cluster, "client", exit_code=0, log="bw=12\n")
    run = await cluster.run()
    plan = RunView(run).pinned_plan()
    assert plan is not None
    server = await cluster.client.get(PODS, name_of(cluster, "server"), namespace=NS)
    settled = [{"name": "t", "nodes": ["n0", "n1"], "phase": "Passed"}]
    work = Pass(run=run, plan=plan, pods={server["metadata"]["name"]: server},
                now=cluster.clock, results=settled)  # fmt: skip
    assert work.busy() == {"n0", "n1"}
    node_pod = dict(server, metadata={**server["metadata"], "labels": {}})
    work = Pass(run=run, plan=plan, pods={"p": node_pod}, now=cluster.clock, results=settled)
    assert work.busy() == {"n0"}  # a pod that is no link member holds its own node only


async def test_E12_the_group_releases_every_node_once_its_pods_are_gone() -> None:
    cluster = Cluster(nodes=3)
    await start(cluster, group_test())
    await running(cluster, "rank-0")
    await cluster.reconcile()
    for rank in range(3):
        await ends(cluster, f"rank-{rank}", exit_code=0, log="bw=12\n")
    await cluster.reconcile()
    run = await cluster.run()
    assert run["status"]["phase"] == "Passed"
    assert not run["status"].get("cordonedNodes")
    for node in cluster.client.objects(NODES):
        assert names.CORDON_OWNER not in (node["metadata"].get("annotations") or {})
