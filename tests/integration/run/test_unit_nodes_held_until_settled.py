"""E8/E10/F4 on the real apiserver: every node of a Group unit stays cordoned, stamped by
the run and in ``status.cordonedNodes`` from before its first pod exists until the
group has settled and none of its pods is live.

The nodes are polled throughout a Group run driven by the simulated kubelet. Rank 0 is
held unscheduled for a few seconds first (every GPU of its node is held by a pod of
another namespace, and each rank asks for one), so the window that used to release the
workers' nodes, rank 0 created but not started and no result open yet, lasts long enough
to be seen on every pass the run makes over it. (A taint the ranks do not tolerate would
hold it too, but admission refuses such a target, E28.)"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import pytest

from glimmer.controllers.kit import names
from glimmer.controllers.kit.names import RUNS
from glimmer.controllers.run import podstate
from glimmer.engine import NODES, PODS, ApiError, ApiServerClient
from tests.integration.run.conftest import Operator, apply_profile, create_run, terminal_run
from tests.integration.run.test_links_cluster import assert_nothing_left, link_nodes, shell

pytestmark = [pytest.mark.controlplane, pytest.mark.timeout(300)]

SCRIPT = 'if [ "$BURNIN_RANK" = 0 ]; then sleep 6; else sleep 3; fi; echo bw=20'
GPU = "nvidia.com/gpu"
#: Where the pod that holds rank 0's GPUs lives: not the run's namespace, which is polled.
HOLDER_NAMESPACE = "default"


class Poll:
    """What a poller saw: each violation, and how often rank 0 was seen unstarted."""

    def __init__(self) -> None:
        self.violations: list[str] = []
        self.unstarted_lead = 0
        self.live_samples = 0


async def live_pods(kube: ApiServerClient, namespace: str) -> dict[str, str]:
    """uid -> name of every live pod in ``namespace``."""
    pods = (await kube.list(PODS, namespace=namespace))["items"]
    return {str(p["metadata"]["uid"]): str(p["metadata"]["name"]) for p in pods
            if podstate.live(p)}  # fmt: skip


async def poll(kube: ApiServerClient, namespace: str, nodes: list[str], seen: Poll) -> None:
    while True:
        before = await live_pods(kube, namespace)
        run = await kube.get(RUNS, "g", namespace=namespace)
        current = {n: await kube.get(NODES, n) for n in nodes}
        pods = (await kube.list(PODS, namespace=namespace))["items"]
        after = {str(p["metadata"]["uid"]) for p in pods if podstate.live(p)}
        # A pod live at both ends was live while the nodes were read.
        throughout = set(before) & after
        status = run.get("status") or {}
        if throughout:
            seen.live_samples += 1
            stamp = f"{namespace}/g/{run['metadata']['uid']}"
            for name, node in current.items():
                owner = (node["metadata"].get("annotations") or {}).get(names.CORDON_OWNER)
                if owner != stamp:
                    seen.violations.append(f"{name} not stamped ({owner}) with {before}")
                if not node["spec"].get("unschedulable"):
                    seen.violations.append(f"{name} schedulable with {before}")
                if status.get("phase") == "Running" and name not in (
                    status.get("cordonedNodes") or []
                ):
                    seen.violations.append(
                        f"{name} not in cordonedNodes {status.get('cordonedNodes')}"
                    )
            lead = [p for p in pods if (p["spec"].get("hostname") == "rank-0")]
            if lead and not podstate.started_at(lead[0]) and not status.get("results"):
                seen.unstarted_lead += 1
        await asyncio.sleep(0.1)


async def test_E8_F4_a_group_holds_every_node_throughout_its_run(
    operator: Operator, kube: ApiServerClient, namespace: str, sim_nodes: Any
) -> None:
    nodes = link_nodes(sim_nodes, 3).names
    gpus = (await kube.get(NODES, nodes[0]))["status"]["allocatable"][GPU]
    holder = await kube.create(
        PODS,
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"generateName": "gpu-holder-"},
            "spec": {
                "nodeName": nodes[0],
                "restartPolicy": "Never",
                "terminationGracePeriodSeconds": 0,
                "containers": [
                    {
                        "name": "hold",
                        "image": "busybox",
                        "command": ["sleep", "120"],
                        "resources": {"limits": {GPU: gpus}},
                    }
                ],
            },
        },
        namespace=HOLDER_NAMESPACE,
    )
    one_gpu = {"limits": {GPU: "1"}}
    await apply_profile(kube, namespace, {"g": shell("Group", SCRIPT, resources=one_gpu)})
    seen = Poll()
    task = asyncio.create_task(poll(kube, namespace, nodes, seen))
    try:
        await create_run(kube, namespace, "g", nodes)
        for _ in range(100):  # until rank 0 exists, unscheduled
            if await live_pods(kube, namespace):
                break
            await asyncio.sleep(0.1)
        await asyncio.sleep(4.0)  # several passes over an unstarted rank 0
        await kube.delete(PODS, holder["metadata"]["name"], namespace=HOLDER_NAMESPACE)
        run = await terminal_run(kube, namespace, "g", timeout=120)
        for _ in range(50):  # until the last pods have gone
            if not await live_pods(kube, namespace):
                break
            await asyncio.sleep(0.1)
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        with contextlib.suppress(ApiError):  # deleted above, unless the test failed first
            await kube.delete(PODS, holder["metadata"]["name"], namespace=HOLDER_NAMESPACE)
    [result] = run["status"]["results"]
    assert result["phase"] == "Passed", result
    assert seen.unstarted_lead >= 5, "the unstarted-rank-0 window was never observed"
    assert seen.live_samples > seen.unstarted_lead  # the ranks' run was polled too
    assert seen.violations == [], seen.violations[:10]
    await assert_nothing_left(kube, namespace, nodes)
