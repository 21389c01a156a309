"""I9: what a pass settles reaches status before the pass's releases and the next
wave's cordons (at fleet scale, hundreds of node writes), so exit -> status is the
pass's walk, not a wave of node patches."""

from __future__ import annotations

from typing import Any

from glimmer.controllers.kit.names import RUNS
from glimmer.controllers.run.reads import RunReads
from glimmer.engine import FakeClient, FakeClock, InformerFactory, Readers
from tests.unit.controllers.run.harness import Cluster, custom_test


async def test_I9_a_settled_result_is_written_before_the_pass_touches_a_node() -> None:
    cluster = Cluster(nodes=2)
    await cluster.setup(tests={"t": custom_test("echo")})
    await cluster.create_run(maxConcurrentNodes=1)
    for _ in range(3):
        if cluster.live_pods():
            break
        await cluster.reconcile()
    (first,) = cluster.live_pods()
    await cluster.kubelet(first["metadata"]["name"], exit_code=0, log="ok=1\n")
    cluster.client.requests.clear()
    await cluster.reconcile()  # settles n0, releases it, cordons n1, creates its pod
    requests = cluster.client.requests
    node_writes = [i for i, r in enumerate(requests) if (r.verb, r.resource) == ("patch", "nodes")]
    assert len(node_writes) >= 2, [(r.verb, r.resource) for r in requests]  # release + cordon

    def settles_n0(body: Any) -> bool:
        results = ((body or {}).get("status") or {}).get("results") or []
        return any(r.get("nodes") == ["n0"] and r.get("phase") == "Passed" for r in results)

    settled = [
        i
        for i, r in enumerate(requests)
        if (r.verb, r.resource, r.subresource) == ("replace", str(RUNS), "status")
        and settles_n0(r.body)
    ]
    assert settled and settled[0] < node_writes[0], "the result waited for the node writes"
    creates = [i for i, r in enumerate(requests) if (r.verb, r.resource) == ("create", "pods")]
    assert creates and creates[0] > node_writes[-1]  # E10 unchanged: cordon, then the pod
    run = await cluster.run()
    assert run["status"]["cordonedNodes"] == ["n1"]


def _run(version: str) -> dict[str, Any]:
    return {"metadata": {"uid": "u1", "resourceVersion": version}}


def test_I9_a_cache_behind_either_write_of_a_pass_waits_for_it() -> None:
    # A pass writes twice (what settled, then the cordons): a cache still showing the
    # version before either write would redo what they recorded (a pod create met by
    # AlreadyExists, a status write lost to a 409).
    client = FakeClient()
    reads = RunReads(Readers.over(client, InformerFactory(client, clock=FakeClock())))
    reads.wrote(_run("10"), _run("11"))
    reads.wrote(_run("11"), _run("12"))
    assert reads.behind_our_write(_run("10"))
    assert reads.behind_our_write(_run("11"))
    assert not reads.behind_our_write(_run("12"))  # caught up
    reads.wrote(_run("12"), _run("13"))
    reads.wrote(_run("20"), _run("21"))  # someone else wrote in between: a new chain
    assert not reads.behind_our_write(_run("12"))
