"""E10/E19: a run cordons only its plan's targets, so its release scan reads only those.

The scan reads live (E22), node by node for a small plan and one list of every node for a
large one; either way a stamp the run wrote without recording it (a crash between the
cordon and the status write) is still found and released.
"""

from __future__ import annotations

from typing import Any

import pytest

from glimmer.controllers.kit import names as kit_names
from glimmer.controllers.kit.names import RUNS
from glimmer.controllers.kit.ref import RunRef
from glimmer.controllers.run.finish import RELEASE_READS_BY_NAME
from glimmer.engine import NODES
from glimmer.plan import PinnedPlan
from tests.unit.controllers.run.harness import NS, Cluster, custom_test


def node_calls(cluster: Cluster, since: int) -> list[tuple[str, str | None]]:
    return [
        (verb, name) for verb, res, _, name in cluster.client.calls[since:] if res == str(NODES)
    ]


async def stamp_unrecorded(cluster: Cluster, node: str) -> None:
    """What a manager killed between a cordon and the status write recording it leaves."""
    run = await cluster.run()
    stamp = RunRef.of(run)
    await cluster.client.patch(
        NODES,
        node,
        {
            "metadata": {"annotations": {kit_names.CORDON_OWNER: stamp.render()}},
            "spec": {"unschedulable": True},
        },
    )


async def finish_all(cluster: Cluster) -> dict[str, Any]:
    for pod in cluster.live_pods():
        await cluster.kubelet(pod["metadata"]["name"], exit_code=0, log="ok\n")
    await cluster.reconcile()
    return await cluster.run()


async def test_E19_a_small_plan_releases_by_reading_its_own_nodes_not_the_cluster() -> None:
    cluster = Cluster(nodes=5)
    await cluster.setup(tests={"t": custom_test("echo")})
    await cluster.client.create(RUNS, {
        "metadata": {"name": "r1"},
        "spec": {"profileRef": "prof", "target": {"nodeNames": ["n0", "n1"]},
                 "maxConcurrentNodes": 1},
    }, namespace=NS)  # fmt: skip
    await cluster.reconcile()
    assert (await cluster.run())["status"]["cordonedNodes"] == ["n0"]
    await stamp_unrecorded(cluster, "n1")  # planned, never launched, its stamp unrecorded
    await cluster.client.patch(
        RUNS, "r1", {"spec": {"cancel": True, "cancelPolicy": "Immediate"}}, namespace=NS
    )
    since = len(cluster.client.calls)
    await cluster.reconcile()
    run = await cluster.run()
    assert run["status"]["phase"] == "Cancelled", run["status"]
    calls = node_calls(cluster, since)
    assert ("list", None) not in calls, calls
    assert {name for verb, name in calls if verb == "get"} == {"n0", "n1"}, calls
    for node in ("n0", "n1"):
        annotations = cluster.node(node)["metadata"].get("annotations") or {}
        assert kit_names.CORDON_OWNER not in annotations, node
        assert not cluster.node(node)["spec"].get("unschedulable"), node


async def test_E19_a_large_plan_lists_every_node_once_and_releases_an_unrecorded_stamp() -> None:
    count = RELEASE_READS_BY_NAME + 2
    cluster = Cluster(nodes=count)
    await cluster.setup(tests={"t": custom_test("echo")})
    await cluster.create_run(maxConcurrentNodes=count)
    await cluster.reconcile()
    run = await cluster.run()
    recorded = set(run["status"]["cordonedNodes"])
    assert recorded == set(cluster.node_names)
    since = len(cluster.client.calls)
    run = await finish_all(cluster)
    assert run["status"]["phase"] == "Passed", run["status"]
    assert node_calls(cluster, since).count(("list", None)) == 1
    assert not any(cluster.node(n)["spec"].get("unschedulable") for n in cluster.node_names)


async def test_E10_a_node_outside_the_pinned_plan_is_never_cordoned() -> None:
    cluster = Cluster(nodes=3)
    await cluster.setup(tests={"t": custom_test("echo")})
    await cluster.client.create(RUNS, {
        "metadata": {"name": "r1"},
        "spec": {"profileRef": "prof", "target": {"nodeNames": ["n0"]}},
    }, namespace=NS)  # fmt: skip
    await cluster.reconcile()
    run = await cluster.run()
    plan = PinnedPlan.from_annotation(run["metadata"]["annotations"][kit_names.PLAN_ANNOTATION])
    assert plan is not None
    sweeper = cluster.reconciler.sweeper
    work = await sweeper.new_pass(run, plan)
    with pytest.raises(ValueError, match="n2"):
        await sweeper.cordon(work, plan.tests[0], "n2")
    annotations = cluster.node("n2")["metadata"].get("annotations") or {}
    assert kit_names.CORDON_OWNER not in annotations
    assert not cluster.node("n2")["spec"].get("unschedulable")
