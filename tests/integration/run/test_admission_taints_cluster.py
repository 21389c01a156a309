"""E24/E28 on the real apiserver: a target with a taint the runner pods do not tolerate
gets ``Admitted=False/NodeTaintNotTolerated`` naming the taint and the fix, with a
Warning Event, in its first reconcile (2 s after creation), and nothing is created for
it; once ``kubectl taint node N key-`` lifts the taint the run is admitted at the next
re-check and its pod runs on that node. A NotReady target, which the node lifecycle
controller also taints ``not-ready``, is said ``NodeNotReady``, not tainted."""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest

from glimmer.controllers.kit.names import RUNS
from glimmer.engine import NODES, PODS, ApiServerClient
from tests.integration.run.conftest import (
    FAST_RUN_OPTIONS,
    Operator,
    apply_profile,
    create_run,
    custom,
    terminal_run,
    wait_for,
)
from tests.integration.run.test_admission_refusals_cluster import BOUND_SECONDS, refusal_seen

pytestmark = [pytest.mark.controlplane, pytest.mark.timeout(120)]

TAINT_KEY = "glimmer.test/dedicated"


async def admitted_true(kube: ApiServerClient, namespace: str, name: str) -> bool:
    run = await kube.get(RUNS, name, namespace=namespace)
    conditions = {c["type"]: c for c in (run.get("status") or {}).get("conditions", [])}
    return conditions.get("Admitted", {}).get("status") == "True"


async def test_E28_a_tainted_target_is_refused_at_once_and_admitted_once_untainted(
    operator: Operator,
    kube: ApiServerClient,
    namespace: str,
    control_plane: Any,
    sim_nodes: Any,
) -> None:
    [node] = sim_nodes(count=1, extra_args=["--taint", f"{TAINT_KEY}=burnin:NoSchedule"]).names
    await apply_profile(kube, namespace, {"t": custom("echo ok=1", durationSeconds=5)})
    started = time.monotonic()
    await create_run(kube, namespace, "r", [node])
    reason, message = await wait_for(
        lambda: refusal_seen(kube, namespace, "r", "Admitted"), timeout=30, what="refusal"
    )
    elapsed = time.monotonic() - started
    print(f"NodeTaintNotTolerated + Event after {elapsed:.3f}s")
    assert reason == "NodeTaintNotTolerated"
    assert f"node {node} ({TAINT_KEY}=burnin:NoSchedule)" in message
    assert "spec.target.tolerations" in message
    assert f"kubectl taint node {node} {TAINT_KEY}-" in message
    assert elapsed < BOUND_SECONDS, f"{reason} took {elapsed:.2f}s"
    assert (await kube.list(PODS, namespace=namespace))["items"] == []
    assert not (await kube.get(NODES, node))["spec"].get("unschedulable")

    # The fix the message gives, as an admin would type it.
    control_plane.kubectl("taint", "node", node, f"{TAINT_KEY}-")
    lifted = time.monotonic()
    await wait_for(lambda: admitted_true(kube, namespace, "r"), timeout=40, what="admission")
    waited = time.monotonic() - lifted
    print(f"admitted {waited:.3f}s after the taint was lifted")
    assert waited < FAST_RUN_OPTIONS.resolve_retry_seconds + BOUND_SECONDS
    run = await terminal_run(kube, namespace, "r")
    assert run["status"]["phase"] == "Passed", run["status"]


async def test_E24_E28_a_not_ready_target_is_said_not_ready_not_tainted(
    operator: Operator, kube: ApiServerClient, namespace: str
) -> None:
    await apply_profile(kube, namespace, {"t": custom("echo ok=1")})
    name = f"not-ready-{uuid.uuid4().hex[:4]}"
    # A Node with no kubelet behind it, as the node lifecycle controller leaves one whose
    # kubelet reported NotReady: Ready=False and the not-ready taints.
    not_ready = [
        {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"},
        {"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"},
    ]
    created = await kube.create(NODES, {"metadata": {"name": name}, "spec": {"taints": not_ready}})
    try:
        created["status"] = {
            "conditions": [
                {
                    "type": "Ready",
                    "status": "False",
                    "reason": "KubeletNotReady",
                    "message": "container runtime is down",
                    "lastHeartbeatTime": "2026-01-01T00:00:00Z",
                    "lastTransitionTime": "2026-01-01T00:00:00Z",
                }
            ]
        }
        await kube.replace(NODES, created, subresource="status")
        current = await kube.get(NODES, name)
        assert {t["effect"] for t in current["spec"]["taints"]} == {"NoSchedule", "NoExecute"}
        started = time.monotonic()
        await create_run(kube, namespace, "r", [name])
        reason, message = await wait_for(
            lambda: refusal_seen(kube, namespace, "r", "Admitted"), timeout=30, what="refusal"
        )
        elapsed = time.monotonic() - started
        print(f"NodeNotReady + Event after {elapsed:.3f}s")
        assert reason == "NodeNotReady"
        assert f"node {name} (Ready=False) is not Ready" in message
        assert "taint" not in message
        assert elapsed < BOUND_SECONDS, f"{reason} took {elapsed:.2f}s"
        assert (await kube.list(PODS, namespace=namespace))["items"] == []
    finally:
        await kube.delete(NODES, name)
