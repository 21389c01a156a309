"""Link provenance and the server's report in the operator (I14 at link scope, F2, F3).

A Pair's provenance is decided over every member of the attempt and every planned node
of the unit, terminated or not, pod or no pod: a server on a simulated node that is still
running when its client settles makes the link ``sim`` (it never certifies either node),
and a server that did not report makes it ``unknown``. So that healthy links still
certify, the client's settle waits a bounded grace for the server's own report and folds
it in when it comes."""

from __future__ import annotations

from typing import Any

from glimmer.engine import NODES, PODS
from glimmer.verdict.links import SERVER_REPORT_GRACE_SECONDS
from tests.unit.controllers.run.harness import NS, Cluster
from tests.unit.controllers.run.test_links_sequencing import (
    ends,
    name_of,
    pair_test,
    pod_by_role,
    result_of,
    running,
)

GATE = [{"metric": "bw", "comparison": "GreaterThanOrEqual", "value": "10"}]
SILICON_CLIENT = "provenance=silicon\nbw=12\nCLIENT_PASS\n"
SILICON_SERVER = "provenance=silicon\nserverSide=1\nSERVER_PASS\n"


async def simulated_node(cluster: Cluster, name: str) -> None:
    """Label ``name`` as the simulated kubelet labels the nodes it runs."""
    node = cluster.node(name)
    labels = dict(node["metadata"].get("labels") or {}, **{"sim.glimmer.dev/instance": "sim-0"})
    await cluster.client.patch(NODES, name, {"metadata": {"labels": labels}})


async def pair_with_client_running(
    cluster: Cluster, *, tests: dict[str, Any] | None = None
) -> None:
    await cluster.setup(tests=tests or {"t": pair_test(thresholds=GATE)})
    await cluster.create_run(maxConcurrentNodes=2)
    await cluster.reconcile()
    await running(cluster, "server")
    await cluster.reconcile()
    assert pod_by_role(cluster, "client") is not None


async def test_a_server_on_a_simulated_node_still_running_when_the_client_settles_reads_sim() -> (
    None
):
    cluster = Cluster(nodes=2)
    await pair_with_client_running(cluster)
    await simulated_node(cluster, "n0")  # the server's node; the server never terminates
    await ends(cluster, "client", exit_code=0, log=SILICON_CLIENT)
    cluster.advance(SERVER_REPORT_GRACE_SECONDS)
    await cluster.reconcile()
    run = await cluster.run()
    result = result_of(run)
    assert result["phase"] == "Passed", result  # the client decides the phase (F3)
    assert "did not report" in result["message"]
    assert result["provenance"] == "sim", result
    assert run["status"]["certifiesSilicon"] is False


async def test_a_server_that_did_not_report_makes_the_pair_unknown_and_certifies_nothing() -> None:
    cluster = Cluster(nodes=2)
    await pair_with_client_running(cluster)
    await ends(cluster, "client", exit_code=0, log=SILICON_CLIENT)
    cluster.advance(SERVER_REPORT_GRACE_SECONDS + 5)
    await cluster.reconcile()
    run = await cluster.run()
    result = result_of(run)
    assert result["phase"] == "Passed" and "did not report" in result["message"], result
    assert result["provenance"] == "unknown"
    assert run["status"]["certifiesSilicon"] is False


async def test_the_client_settle_waits_for_the_server_and_folds_its_report() -> None:
    cluster = Cluster(nodes=2)
    await pair_with_client_running(cluster)
    await ends(cluster, "client", exit_code=0, log=SILICON_CLIENT)
    outcome = await cluster.reconcile()
    result = result_of(await cluster.run())
    assert result["phase"] == "Running", result  # within the grace: not settled
    assert outcome.requeue_after is not None
    assert 0 < outcome.requeue_after <= SERVER_REPORT_GRACE_SECONDS
    cluster.advance(3)
    await ends(cluster, "server", exit_code=0, log=SILICON_SERVER)
    await cluster.reconcile()
    run = await cluster.run()
    result = result_of(run)
    assert result["phase"] == "Passed", result
    assert "did not report" not in result["message"]
    assert "server n0 Pass (exit 0): SERVER_PASS" in result["message"]
    assert result["metrics"]["serverSide"] == "1" and result["metrics"]["bw"] == "12"
    assert result["provenance"] == "silicon"
    assert run["status"]["certifiesSilicon"] is True  # a healthy link still certifies


async def test_an_early_servers_client_node_that_is_simulated_makes_the_pair_sim() -> None:
    cluster = Cluster(nodes=2)
    await cluster.setup(tests={"t": pair_test()})
    await cluster.create_run(maxConcurrentNodes=2)
    await cluster.reconcile()
    await simulated_node(cluster, "n1")  # the client's planned node; no client pod ever
    await ends(cluster, "server", exit_code=1, log="provenance=silicon\nLINK_FAIL: no NIC\n")
    await cluster.reconcile()
    result = result_of(await cluster.run())
    assert result["phase"] == "Failed", result
    assert pod_by_role(cluster, "client") is None
    assert result["provenance"] == "sim"


async def test_an_overdue_pair_on_a_simulated_node_reads_sim() -> None:
    cluster = Cluster(nodes=2)
    await pair_with_client_running(cluster)
    await running(cluster, "client")
    await simulated_node(cluster, "n1")
    cluster.advance(5 + 120 + 300 + 1)
    await cluster.reconcile()
    result = result_of(await cluster.run())
    assert result["phase"] == "Error" and "never finished" in result["message"], result
    assert result["provenance"] == "sim"


async def test_a_client_end_the_kubelet_gave_no_time_settles_at_once_never_waiting_for_ever() -> (
    None
):
    cluster = Cluster(nodes=2)
    await pair_with_client_running(cluster)
    await ends(cluster, "client", exit_code=0, log=SILICON_CLIENT)
    client = name_of(cluster, "client")
    pod = await cluster.client.get(PODS, client, namespace=NS)
    status = pod["status"]
    del status["containerStatuses"][0]["state"]["terminated"]["finishedAt"]
    await cluster.client.patch(PODS, client, {"status": status}, namespace=NS, subresource="status")
    await cluster.reconcile()
    result = result_of(await cluster.run())
    assert result["phase"] == "Passed" and "did not report" in result["message"], result
    assert result["provenance"] == "unknown"
