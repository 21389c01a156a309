"""Link blame end to end (F10-F13): real apiserver, simulated kubelets, the simulated fabric.

Four H200 nodes, one ``ib-write-bw`` Pair test over all four (paired in order: (n0, n1),
(n2, n3)), ``spec.linkBlame`` on. A fault on the first link makes it Fail against the
runner's 90 % floor while (n2, n3) Passes; the operator then re-pairs each end of the
failed link with a node of the passing one, (n0, n2) and (n1, n3), and the two settled
re-pairs say whose fault it is:

- ``bad-nic`` on n0 (every link from it is short): (n0, n2) Fails, (n1, n3) Passes ->
  ``node/n0``;
- ``bad-cable=n1`` on n0 (only the n0-n1 link is short): both re-pairs Pass -> ``link``.

Either way the re-pairs stay out of ``status.results`` (the run's verdict, counters and
the partners' node verdicts are those of the planned units alone), every node is
released and no Service is left behind.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from glimmer.controllers.kit import names
from glimmer.engine import NODES, ApiServerClient
from glimmer.plan import PinnedPlan
from glimmer.plan.units import verdict_units
from glimmer.verdict.nodes import NodeState, node_verdict
from tests.integration.run.conftest import Operator, apply_profile, create_run, terminal_run
from tests.integration.run.test_fabric_cluster_runs import (
    BANDWIDTH_GATE,
    HEALTHY,
    OWN_RUNNER_IMAGES,
    pair_test,
)
from tests.integration.run.test_links_cluster import RING_IMAGE, RUNNER_IMAGES, assert_nothing_left

pytestmark = [pytest.mark.controlplane, pytest.mark.timeout(600)]


def blame_nodes(sim_nodes: Any, prefix: str, fault: str) -> Any:
    """Four simulated H200x8 nodes; ``fault`` on node 0 only."""
    args = [
        f"--image-map={OWN_RUNNER_IMAGES}",
        f"--sim-gpu={HEALTHY}",
        f"--node-sim-gpu={prefix}0={HEALTHY}:{fault}",
    ]
    return sim_nodes(count=4, name_prefix=prefix, extra_args=args)


async def blamed_run(
    kube: ApiServerClient, namespace: str, name: str, nodes: list[str]
) -> dict[str, Any]:
    test = pair_test("ib-write-bw", "IB_WRITE_BW", thresholds=BANDWIDTH_GATE)
    await apply_profile(kube, namespace, {name: test})
    await create_run(
        kube, namespace, name, nodes, maxConcurrentNodes=4, linkBlame={"maxExtraPairs": 2}
    )
    run = await terminal_run(kube, namespace, name, timeout=420)
    keep = os.environ.get("GLIMMER_LINK_BLAME_DUMP")
    if keep:  # the worked example in docs/link-blame.md is pasted from this
        Path(keep).mkdir(parents=True, exist_ok=True)
        (Path(keep) / f"{name}.json").write_text(json.dumps(run["status"], indent=2))
    return run


def assert_diagnostic_only(run: dict[str, Any], nodes: list[str]) -> None:
    """The re-pairs are never results: the planned units' own two, one Failed."""
    status = run["status"]
    results = status["results"]
    assert sorted(tuple(r["nodes"]) for r in results) == [tuple(nodes[:2]), tuple(nodes[2:])]
    assert status["phase"] == "Failed" and status["failed"] == 1 and status["passed"] == 1
    assert all(not r["name"].endswith("_repair") for r in results)
    plan = PinnedPlan.from_annotation(run["metadata"]["annotations"][names.PLAN_ANNOTATION])
    units = verdict_units(plan)
    # A partner that re-paired a bad node is judged by its own planned unit only.
    for partner in nodes[2:]:
        verdict = node_verdict(partner, planned=units, results=results)
        assert verdict.state is not NodeState.FAILED, verdict
    assert node_verdict(nodes[0], planned=units, results=results).state is NodeState.FAILED


def repairs_of(entry: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(r["node"], r["partner"], r["result"]["phase"]) for r in entry["repairs"]]


async def test_link_blame_names_the_node_with_a_bad_nic(
    operator: Operator, kube: ApiServerClient, namespace: str, sim_nodes: Any
) -> None:
    nodes = blame_nodes(sim_nodes, "blame-nic-", "bad-nic").names
    run = await blamed_run(kube, namespace, "blame-nic", nodes)
    assert_diagnostic_only(run, nodes)
    [entry] = run["status"]["linkBlame"]
    assert entry["nodes"] == nodes[:2]
    assert repairs_of(entry) == [(nodes[0], nodes[2], "Failed"), (nodes[1], nodes[3], "Passed")]
    assert entry["blame"] == f"node/{nodes[0]}", entry
    assert entry["provenance"] == "sim"
    for rep in entry["repairs"]:
        assert rep["result"]["nodes"] == [rep["node"], rep["partner"]]
        [attempt] = rep["result"]["attempts"]
        assert "-server-" in attempt["podName"] and attempt["podUID"]
    await assert_nothing_left(kube, namespace, nodes)
    for name in nodes:
        node = await kube.get(NODES, name)
        assert not node["spec"].get("unschedulable"), name


async def test_link_blame_names_the_link_when_only_the_cable_is_bad(
    operator: Operator, kube: ApiServerClient, namespace: str, sim_nodes: Any
) -> None:
    prefix = "blame-cable-"
    nodes = blame_nodes(sim_nodes, prefix, f"bad-cable={prefix}1").names
    run = await blamed_run(kube, namespace, "blame-cable", nodes)
    assert_diagnostic_only(run, nodes)
    [entry] = run["status"]["linkBlame"]
    assert repairs_of(entry) == [(nodes[0], nodes[2], "Passed"), (nodes[1], nodes[3], "Passed")]
    assert entry["blame"] == "link", entry
    await assert_nothing_left(kube, namespace, nodes)


RING_GATE = [{"metric": "busBandwidthGBs", "comparison": "GreaterThanOrEqual", "value": "0.05"}]


def ring_group() -> dict[str, Any]:
    """ring-allreduce over real TCP: a rank whose sends are paced (``slow-link``, 0.1
    Gbit/s) drags every rank of its ring, so the collective's bus bandwidth falls under
    the gate wherever that rank sits."""
    return {
        "kind": "custom",
        "scope": "Group",
        "durationSeconds": 60,
        "runner": {
            "image": RING_IMAGE,
            "env": [
                {"name": "BURNIN_RING_ALLREDUCE_ELEMENTS", "value": "262144"},
                {"name": "BURNIN_RING_ALLREDUCE_ITERATIONS", "value": "2"},
            ],
            "readinessProbe": {"tcpSocket": {"port": 18530}, "periodSeconds": 1},
        },
        "thresholds": RING_GATE,
    }


async def test_group_bisection_names_the_rank_that_drags_the_collective(
    operator: Operator, kube: ApiServerClient, namespace: str, sim_nodes: Any
) -> None:
    prefix = "blame-ring-"
    args = [f"--image-map={RUNNER_IMAGES}", f"--sim-gpu={HEALTHY}",
            f"--node-sim-gpu={prefix}2={HEALTHY}:slow-link"]  # fmt: skip
    nodes = sim_nodes(count=4, name_prefix=prefix, extra_args=args).names
    await apply_profile(kube, namespace, {"blame-ring": ring_group()})
    await create_run(kube, namespace, "blame-ring", nodes, maxConcurrentNodes=4,
                     linkBlame={"maxExtraPairs": 4})  # fmt: skip
    run = await terminal_run(kube, namespace, "blame-ring", timeout=420)
    keep = os.environ.get("GLIMMER_LINK_BLAME_DUMP")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        (Path(keep) / "blame-ring.json").write_text(json.dumps(run["status"], indent=2))
    status = run["status"]
    [result] = status["results"]
    assert result["phase"] == "Failed" and result["nodes"] == nodes, result
    [entry] = status["linkBlame"]
    probes = [(r["nodes"], r["result"]["phase"]) for r in entry["repairs"]]
    assert probes == [
        (nodes[:2], "Passed"),
        (nodes[2:], "Failed"),
        ([nodes[2], nodes[0]], "Failed"),
        ([nodes[3], nodes[0]], "Passed"),
    ], entry
    assert entry["blame"] == f"node/{nodes[2]}", entry
    await assert_nothing_left(kube, namespace, nodes)
