"""A Pair's server report is folded in even when the server ends after its client (F2, F3).

Real apiserver, simulated kubelets: the client ends first, and its settle waits a bounded
grace (``SERVER_REPORT_GRACE_SECONDS``) for the server pod to terminate, then reads and
folds the server's own report through the same ``combine_pair`` the bare host's
``--server-record`` path uses. A server that outlives the grace did not report: the link
is never silicon, and the server pod is deleted after the verdict's write."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from glimmer.engine import ApiServerClient
from glimmer.verdict.links import SERVER_REPORT_GRACE_SECONDS
from tests.integration.run.conftest import Operator, apply_profile, create_run, terminal_run
from tests.integration.run.test_links_cluster import (
    assert_nothing_left,
    link_nodes,
    only_result,
    shell,
)

pytestmark = [pytest.mark.controlplane, pytest.mark.timeout(300)]


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
