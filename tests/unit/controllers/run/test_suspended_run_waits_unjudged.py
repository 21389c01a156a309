"""E17: a suspended run lets its in-flight work finish and record its results, then
waits, non-terminal and holding no cordon, until suspend is cleared: even when every
planned unit has settled it is neither judged nor delivered while suspended."""

from __future__ import annotations

from glimmer.controllers.kit import names
from glimmer.controllers.kit.names import RUNS
from glimmer.controllers.kit.view import RunView
from glimmer.controllers.run.delivery import Reason
from glimmer.engine import NODES
from tests.unit.controllers.run.harness import NS, Cluster, custom_test


def terminal_envelopes(cluster: Cluster) -> list[str]:
    return [
        d.event_key
        for d in cluster.delivered.sent
        if d.reason == Reason.RUN_PHASE_CHANGED and d.event_key != "Running"
    ]


async def suspended_with_everything_settled(cluster: Cluster) -> None:
    await cluster.setup(tests={"t": custom_test("echo")})
    await cluster.create_run(maxConcurrentNodes=2)
    await cluster.reconcile()  # both nodes loaded
    await cluster.client.patch(RUNS, "r1", {"spec": {"suspend": True}}, namespace=NS)
    for pod in cluster.live_pods():
        await cluster.kubelet(pod["metadata"]["name"], exit_code=0, log="ok=1\n")
    await cluster.reconcile()  # harvests both: every planned unit has settled
    await cluster.reconcile()


async def test_E17_a_suspended_run_whose_work_has_all_settled_waits_unjudged() -> None:
    cluster = Cluster(nodes=2)
    await suspended_with_everything_settled(cluster)
    run = await cluster.run()
    status = run["status"]
    assert status["phase"] == "Running", status
    assert "finishedAt" not in status
    assert [r["phase"] for r in status["results"]] == ["Passed", "Passed"]  # recorded
    assert terminal_envelopes(cluster) == []  # not delivered
    assert names.FINALIZER in run["metadata"]["finalizers"]
    assert not status.get("cordonedNodes")  # holding no cordon
    for node in cluster.client.objects(NODES):
        assert not node["spec"].get("unschedulable"), node["metadata"]["name"]
        assert names.CORDON_OWNER not in (node["metadata"].get("annotations") or {})
    assert RunView(run).held_nodes() == set()


async def test_E17_clearing_suspend_judges_and_delivers_the_settled_run() -> None:
    cluster = Cluster(nodes=2)
    await suspended_with_everything_settled(cluster)
    await cluster.client.patch(RUNS, "r1", {"spec": {"suspend": False}}, namespace=NS)
    await cluster.reconcile()
    run = await cluster.run()
    assert run["status"]["phase"] == "Passed", run["status"]
    assert terminal_envelopes(cluster) == ["Passed"]
