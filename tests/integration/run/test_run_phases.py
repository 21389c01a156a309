"""A Node-scope run end to end on simulated kubelets: every phase path, cordons, restart."""

from __future__ import annotations

from typing import Any

import pytest

from glimmer.controllers.kit import names
from glimmer.engine import NODES, PODS, ApiServerClient
from tests.integration.run.conftest import (
    Operator,
    apply_profile,
    create_run,
    custom,
    terminal_run,
)

pytestmark = [pytest.mark.controlplane, pytest.mark.timeout(240)]

GATE = [{"metric": "bw", "comparison": "GreaterThanOrEqual", "value": "10"}]


def by_test(run: dict[str, Any]) -> dict[str, str]:
    return {r["name"]: r["phase"] for r in run["status"]["results"]}


async def test_D1_A14_every_attempt_outcome_maps_to_its_phase(
    operator: Operator, kube: ApiServerClient, namespace: str, sim_nodes: Any
) -> None:
    nodes = sim_nodes(count=1)
    await apply_profile(
        kube,
        namespace,
        {
            "passes": custom("echo bw=12", thresholds=GATE),
            "fails-exit": custom("echo broken; exit 1"),
            "fails-gate": custom("echo bw=3", thresholds=GATE),
            "skips": custom("echo CUSTOM_SKIP: no device here; exit 2"),
            "errors-exit2": custom("echo confused; exit 2"),
            "no-image": {
                "kind": "custom",
                "scope": "Node",
                "durationSeconds": 5,
                "runner": {"image": "example.com/never-pulled:1"},
            },
        },
    )
    await create_run(kube, namespace, "phases", nodes.names)
    run = await terminal_run(kube, namespace, "phases", timeout=120)
    assert by_test(run) == {
        "passes": "Passed",
        "fails-exit": "Failed",
        "fails-gate": "Failed",
        "skips": "Skipped",
        "errors-exit2": "Error",
        "no-image": "Error",
    }, run["status"]["results"]
    assert run["status"]["phase"] == "Failed"
    status = run["status"]
    assert (status["passed"], status["failed"], status["skipped"], status["errored"]) == (
        1,
        2,
        1,
        2,
    )
    node = await kube.get(NODES, nodes.names[0])
    assert not node["spec"].get("unschedulable")
    assert names.CORDON_OWNER not in (node["metadata"].get("annotations") or {})


async def test_D3_an_error_retried_then_passed_records_the_retry_trigger(
    operator: Operator, kube: ApiServerClient, namespace: str, sim_nodes: Any
) -> None:
    nodes = sim_nodes(count=1)
    # Attempt 1 errors (exit 3), attempt 2 passes: BURNIN_ATTEMPT tells them apart.
    script = 'if [ "$BURNIN_ATTEMPT" = 1 ]; then echo flaky; exit 3; fi; echo bw=12'
    await apply_profile(kube, namespace, {"t": custom(script, thresholds=GATE)})
    await create_run(kube, namespace, "retry", nodes.names, retryOnErrorLimit=1)
    run = await terminal_run(kube, namespace, "retry")
    [result] = run["status"]["results"]
    assert result["phase"] == "Passed"
    assert [a["trigger"] for a in result["attempts"]] == ["Initial", "ErrorRetry"]


async def test_E16_a_run_past_its_deadline_is_error_not_pass(
    operator: Operator, kube: ApiServerClient, namespace: str, sim_nodes: Any
) -> None:
    nodes = sim_nodes(count=1)
    # durationSeconds 1 -> activeDeadlineSeconds 121; the run deadline is the fast path.
    await apply_profile(kube, namespace, {"t": custom("sleep 60; echo bw=12", durationSeconds=1)})
    await create_run(kube, namespace, "late", nodes.names, deadlineSeconds=3)
    run = await terminal_run(kube, namespace, "late")
    assert run["status"]["phase"] == "Error"
    assert "deadline" in run["status"]["results"][0]["message"]
    pods = (await kube.list(PODS, namespace=namespace))["items"]
    assert all(
        p["status"].get("phase") in ("Succeeded", "Failed")
        or p["metadata"].get("deletionTimestamp")
        for p in pods
    )


async def test_H_a_pod_deleted_from_outside_is_error(
    operator: Operator, kube: ApiServerClient, namespace: str, sim_nodes: Any
) -> None:
    import asyncio

    nodes = sim_nodes(count=1)
    await apply_profile(kube, namespace, {"t": custom("sleep 30; echo bw=12")})
    await create_run(kube, namespace, "victim", nodes.names)
    for _ in range(100):
        pods = (await kube.list(PODS, namespace=namespace))["items"]
        if pods and pods[0]["status"].get("phase") == "Running":
            break
        await asyncio.sleep(0.3)
    await kube.delete(PODS, pods[0]["metadata"]["name"], namespace=namespace)
    run = await terminal_run(kube, namespace, "victim")
    assert run["status"]["phase"] == "Error"
