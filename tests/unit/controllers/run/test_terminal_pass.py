"""I8: the pass that ends a run writes its status once, and that write is the
verdict; the pass's TestCompleted deliveries and the terminal envelope follow it (L4)."""

from __future__ import annotations

from glimmer.controllers.kit.names import RUNS
from glimmer.controllers.run.delivery import Delivery, NoDelivery, Reason
from glimmer.engine import FakeClient
from glimmer.engine.fake import Request
from tests.unit.controllers.run.harness import NS, Cluster, custom_test
from tests.unit.controllers.run.test_sweep_own_pods_and_budget import refuse_pods


class CountingDelivery(NoDelivery):
    """Notes, for each delivery, how many apiserver requests had been made before it."""

    def __init__(self, client: FakeClient) -> None:
        super().__init__()
        self.client = client
        self.after: list[int] = []

    async def deliver(self, delivery: Delivery) -> bool:
        self.after.append(len(self.client.requests))
        return await super().deliver(delivery)


def status_writes(requests: list[Request]) -> list[int]:
    return [
        i
        for i, r in enumerate(requests)
        if r.verb == "replace" and r.resource == str(RUNS) and r.subresource == "status"
    ]


async def started(cluster: Cluster, *, nodes: int = 1, **spec: object) -> CountingDelivery:
    counting = CountingDelivery(cluster.client)
    cluster.delivered = counting
    cluster.reconciler = cluster.new_reconciler()
    await cluster.setup(tests={"t": custom_test("echo")})
    await cluster.create_run(maxConcurrentNodes=nodes, **spec)
    await cluster.reconcile()
    return counting


async def test_I8_the_terminal_pass_performs_exactly_one_status_write() -> None:
    cluster = Cluster(nodes=2)
    counting = await started(cluster, nodes=2)
    for pod in cluster.live_pods():
        await cluster.kubelet(pod["metadata"]["name"], exit_code=0, log="ok=1\n")
    before = len(cluster.client.requests)
    sent_before = len(counting.sent)
    await cluster.reconcile()
    requests = cluster.client.requests
    [write] = [i for i in status_writes(requests) if i >= before]
    body = requests[write].body["status"]
    assert body["phase"] == "Passed" and body["passed"] == 2
    # The verdict write owes no release record: the unload releases by owner stamp.
    assert "cordonedNodes" not in body
    sent = [(d.reason, d.event_key) for d in list(counting.sent)[sent_before:]]
    assert sent == [
        (Reason.TEST_COMPLETED, "t/n0"),
        (Reason.TEST_COMPLETED, "t/n1"),
        (Reason.RUN_PHASE_CHANGED, "Passed"),
    ]
    # L4: every one of them after the durable verdict.
    assert min(counting.after[sent_before:]) > write
    run = await cluster.run()
    assert run["status"]["phase"] == "Passed"
    assert not any(cluster.node(n)["spec"].get("unschedulable") for n in ("n0", "n1"))


async def test_I8_a_cancelling_pass_performs_exactly_one_status_write() -> None:
    cluster = Cluster(nodes=1)
    await started(cluster, cancelPolicy="Immediate")
    await cluster.client.patch(RUNS, "r1", {"spec": {"cancel": True}}, namespace=NS)
    before = len(cluster.client.requests)
    await cluster.reconcile()
    [write] = [i for i in status_writes(cluster.client.requests) if i >= before]
    assert cluster.client.requests[write].body["status"]["phase"] == "Cancelled"
    assert not cluster.node("n0")["spec"].get("unschedulable")


async def test_I8_a_refused_last_pod_writes_the_cordon_then_only_the_verdict() -> None:
    cluster = Cluster(nodes=1)
    refuse_pods(cluster)
    await cluster.setup(tests={"t": custom_test("echo")})
    await cluster.create_run()
    await cluster.reconcile()  # pins, marks Running, cordons, is refused, ends
    writes = [
        cluster.client.requests[i].body["status"] for i in status_writes(cluster.client.requests)
    ]
    # E10: the cordon is recorded before the create; after it, only the verdict.
    first = next(i for i, w in enumerate(writes) if w.get("cordonedNodes") == ["n0"])
    assert writes[first].get("phase") == "Running"
    [verdict] = writes[first + 1 :]
    assert verdict["phase"] == "Error" and "cordonedNodes" not in verdict
