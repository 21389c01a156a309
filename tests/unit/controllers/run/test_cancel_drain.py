"""E25: a Graceful cancel sends its running pods their SIGTERM (a delete with the pod's
grace) and ends the run only once they are gone, harvesting nothing from them."""

from __future__ import annotations

import copy

from glimmer.controllers.kit.names import RUNS
from glimmer.controllers.run import podstate
from glimmer.controllers.run.reconciler import cancelling_message
from glimmer.engine import PODS

from .harness import NS, Cluster, custom_test


def test_E25_the_drain_message_counts_pods_and_names_the_grace() -> None:
    assert cancelling_message(1, 30) == "draining 1 pod, grace 30s"
    assert cancelling_message(3, 5) == "draining 3 pods, grace 5s"
    assert podstate.grace_seconds({"spec": {"terminationGracePeriodSeconds": 5}}) == 5
    assert podstate.grace_seconds({"spec": {}}) == 30


async def test_E25_a_graceful_cancel_waits_for_a_terminating_pod_then_ends_cancelled() -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": custom_test("echo", durationSeconds=3600)})
    await cluster.create_run()
    await cluster.reconcile()
    [pod] = cluster.live_pods()
    name = pod["metadata"]["name"]
    await cluster.kubelet(name, exit_code=None)
    running = copy.deepcopy(await cluster.client.get(PODS, name, namespace=NS))
    await cluster.client.patch(RUNS, "r1", {"spec": {"cancel": True}}, namespace=NS)
    await cluster.reconcile()
    assert name not in {p["metadata"]["name"] for p in cluster.pods()}, "no SIGTERM sent"
    # The kubelet is still inside the grace: the pod exists, deleting, still running.
    running["metadata"]["deletionTimestamp"] = running["metadata"].get(
        "creationTimestamp", "2030-01-01T00:00:00Z"
    )
    running["metadata"].pop("resourceVersion", None)
    await cluster.client.create(PODS, running, namespace=NS)
    result = await cluster.reconcile()
    run = await cluster.run()
    assert run["status"]["phase"] == "Running"
    assert result.requeue_after is not None and result.requeue_after <= 1.0
    assert run["status"]["cordonedNodes"] == ["n0"], "the node is released under a live load"
    await cluster.client.delete(PODS, name, namespace=NS)  # the grace is over
    await cluster.reconcile()
    run = await cluster.run()
    assert run["status"]["phase"] == "Cancelled"
    assert [r["phase"] for r in run["status"]["results"]] == ["Cancelled"]
    cancelling = {c["type"]: c for c in run["status"]["conditions"]}["Cancelling"]
    assert (cancelling["status"], cancelling["reason"]) == ("False", "Drained")
