"""A Pair's server report is folded in even when the server ends after its client (F2, F3).

Real apiserver, simulated kubelets: the client ends first, and its settle waits a bounded
grace (``SERVER_REPORT_GRACE_SECONDS``) for the server pod to terminate, then reads and
folds the server's own report through the same ``combine_pair`` the bare host's
``--server-record`` path uses. A server that outlives the grace did not report: the link
is never silicon, and the server pod is deleted after the verdict's write."""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from glimmer.engine import NODES, ApiServerClient
from glimmer.verdict.links import SERVER_REPORT_GRACE_SECONDS
from tests.integration.run.conftest import Operator, apply_profile, create_run, terminal_run
from tests.integration.run.test_links_cluster import (
    RUNNER_IMAGES,
    assert_nothing_left,
    link_nodes,
    only_result,
    shell,
)

pytestmark = [pytest.mark.controlplane, pytest.mark.timeout(300)]

#: A label the tests put on nodes whose pods a simulated kubelet runs (see _pooled_nodes).
POOL = "glimmer.test/pool"


def _pair(mark: Path, server: str) -> dict[str, Any]:
    """The client marks its end; the server waits for that mark, then does ``server``."""
    script = (
        f'if [ "$BURNIN_ROLE" = server ]; then '
        f'until [ -e "{mark}" ]; do sleep 0.1; done; {server}; '
        f'else echo bw=12; echo CLIENT_OK; touch "{mark}"; fi'
    )
    gate = [{"metric": "bw", "comparison": "GreaterThanOrEqual", "value": "10"}]
    return shell("Pair", script, thresholds=gate)


async def test_a_server_that_reports_after_its_client_ended_is_folded_in(
    operator: Operator, kube: ApiServerClient, namespace: str, sim_nodes: Any, tmp_path: Path
) -> None:
    nodes = link_nodes(sim_nodes, 2)
    server = "sleep 2; echo serverSide=1; echo SERVER_OK"
    await apply_profile(kube, namespace, {"fold": _pair(tmp_path / "client-ended", server)})
    await create_run(kube, namespace, "fold", nodes.names)
    run = await terminal_run(kube, namespace, "fold", timeout=120)
    result = only_result(run)
    assert result["phase"] == "Passed", result["message"]
    assert "did not report" not in result["message"], result["message"]
    assert f"server {nodes.names[0]} Pass (exit 0): SERVER_OK" in result["message"]
    assert result["metrics"]["serverSide"] == "1" and result["metrics"]["bw"] == "12"
    assert result["provenance"] == "sim"  # every node here is simulated
    await assert_nothing_left(kube, namespace, nodes.names)


async def test_a_server_that_outlives_the_grace_did_not_report_and_is_deleted(
    operator: Operator, kube: ApiServerClient, namespace: str, sim_nodes: Any, tmp_path: Path
) -> None:
    nodes = link_nodes(sim_nodes, 2)
    await apply_profile(
        kube, namespace, {"deaf": _pair(tmp_path / "client-ended", "sleep 600; echo late")}
    )
    began = time.monotonic()
    await create_run(kube, namespace, "deaf", nodes.names)
    run = await terminal_run(kube, namespace, "deaf", timeout=150)
    took = time.monotonic() - began
    result = only_result(run)
    assert result["phase"] == "Passed", result["message"]  # the client decides (F3)
    assert f"server {nodes.names[0]} did not report" in result["message"]
    assert result["provenance"] != "silicon"
    assert run["status"]["certifiesSilicon"] is False
    # The grace was waited out (counted from the client's finishedAt, a whole second).
    assert took >= SERVER_REPORT_GRACE_SECONDS - 1
    await assert_nothing_left(kube, namespace, nodes.names)


async def _unsimulate(kube: ApiServerClient, node: str) -> None:
    """The node no longer carries the simulated kubelet's labels (as a real node would
    not); the simulator still runs its pods, found by the pool label instead."""
    labels = dict.fromkeys(("sim.glimmer.dev/simulated-gpu", "sim.glimmer.dev/instance"))
    await kube.patch(NODES, node, {"metadata": {"labels": labels}})


def _pooled_nodes(sim_nodes: Any, pool: str) -> Any:
    """Two simulated nodes whose kubelet runs the pods of every node labelled ``pool``."""
    return sim_nodes(
        count=2,
        extra_args=[f"--image-map={RUNNER_IMAGES}", f"--schedule-selector={POOL}={pool}"],
    )


def _declaring_pair(mark: Path) -> dict[str, Any]:
    """Both sides declare silicon; the server reports after the client has ended."""
    return _pair(mark, "sleep 1; echo provenance=silicon; echo SERVER_OK").copy()


async def test_a_pair_whose_server_node_is_simulated_reads_sim_though_both_sides_say_silicon(
    operator: Operator, kube: ApiServerClient, namespace: str, sim_nodes: Any, tmp_path: Path
) -> None:
    """The server's node carries the simulator's labels and is still running when the
    client ends; the client's node does not. Both sides print provenance=silicon: the
    link is as weak as its weakest side, and certifies neither node."""
    pool = uuid.uuid4().hex[:10]
    nodes = _pooled_nodes(sim_nodes, pool)
    server, client = nodes.names
    for node in nodes.names:
        await kube.patch(NODES, node, {"metadata": {"labels": {POOL: pool}}})
    await _unsimulate(kube, client)
    spec = _declaring_pair(tmp_path / "client-ended")
    spec["runner"]["command"][-1] = spec["runner"]["command"][-1].replace(
        "echo bw=12;", "echo provenance=silicon; echo bw=12;"
    )
    await apply_profile(kube, namespace, {"mixed": spec})
    await create_run(kube, namespace, "mixed", nodes.names)
    run = await terminal_run(kube, namespace, "mixed", timeout=120)
    result = only_result(run)
    assert result["phase"] == "Passed", result["message"]
    assert result["provenance"] == "sim", result
    assert run["status"]["certifiesSilicon"] is False
    # The control: with neither node simulated, the same declarations read silicon.
    await _unsimulate(kube, server)
    await create_run(kube, namespace, "real", nodes.names)
    run = await terminal_run(kube, namespace, "real", timeout=120)
    assert only_result(run)["provenance"] == "silicon", only_result(run)


async def test_a_server_on_a_simulated_node_still_running_past_the_grace_makes_the_pair_sim(
    operator: Operator, kube: ApiServerClient, namespace: str, sim_nodes: Any, tmp_path: Path
) -> None:
    """The server never reports (it outlives the grace) and runs on a simulated node; the
    client's node is not simulated and declares silicon. The link reads sim, the weakest
    side, decided over every member whether it terminated or not."""
    pool = uuid.uuid4().hex[:10]
    nodes = _pooled_nodes(sim_nodes, pool)
    _, client = nodes.names
    for node in nodes.names:
        await kube.patch(NODES, node, {"metadata": {"labels": {POOL: pool}}})
    await _unsimulate(kube, client)
    spec = _pair(tmp_path / "client-ended", "sleep 600; echo late")
    spec["runner"]["command"][-1] = spec["runner"]["command"][-1].replace(
        "echo bw=12;", "echo provenance=silicon; echo bw=12;"
    )
    await apply_profile(kube, namespace, {"deaf": spec})
    await create_run(kube, namespace, "deaf", nodes.names)
    run = await terminal_run(kube, namespace, "deaf", timeout=150)
    result = only_result(run)
    assert "did not report" in result["message"], result["message"]
    assert result["provenance"] == "sim", result
    assert run["status"]["certifiesSilicon"] is False
