"""E25 on the real apiserver: a Graceful cancel of a run whose pod runs a long load ends
within the pod's grace period plus one pass, saying ``Cancelling=True/Draining`` while
the pod drains, and the node is released only after the pod is gone."""

from __future__ import annotations

import time
from typing import Any

import pytest

from glimmer.controllers.kit.names import RUNS
from glimmer.engine import EVENTS, NODES, PODS, ApiServerClient
from tests.integration.run.conftest import (
    Operator,
    apply_profile,
    create_run,
    custom,
    terminal_run,
    wait_for,
)

pytestmark = [pytest.mark.controlplane, pytest.mark.timeout(180)]

#: The apiserver's default terminationGracePeriodSeconds, which runner pods keep.
GRACE_SECONDS = 30
#: One pass and the watch's round trips, on a loaded 2-core dev machine.
ONE_PASS_SECONDS = 10


async def started_pod(kube: ApiServerClient, namespace: str) -> bool:
    pods = (await kube.list(PODS, namespace=namespace))["items"]
    return any((p.get("status") or {}).get("phase") == "Running" for p in pods)


async def test_E25_a_graceful_cancel_of_a_long_load_ends_within_the_grace_plus_one_pass(
    operator: Operator, kube: ApiServerClient, namespace: str, sim_nodes: Any
) -> None:
    [node] = sim_nodes(count=1).names
    await apply_profile(kube, namespace, {"t": custom("sleep 600; echo ok=1", durationSeconds=600)})
    await create_run(kube, namespace, "r", [node])
    await wait_for(lambda: started_pod(kube, namespace), timeout=60, what="the load running")
    started = time.monotonic()
    await kube.patch(RUNS, "r", {"spec": {"cancel": True, "cancelReason": "window closed"}},
                     namespace=namespace)  # fmt: skip
    seen: list[str] = []

    async def cancelled() -> bool:
        run = await kube.get(RUNS, "r", namespace=namespace)
        status = run.get("status") or {}
        for condition in status.get("conditions", []):
            if condition["type"] == "Cancelling" and condition["reason"] == "Draining":
                seen.append(str(condition["message"]))
        return status.get("phase") == "Cancelled"

    await wait_for(cancelled, timeout=GRACE_SECONDS + 60, what="Cancelled")
    elapsed = time.monotonic() - started
    print(f"graceful cancel: Cancelled after {elapsed:.2f}s (grace {GRACE_SECONDS}s)")
    assert elapsed < GRACE_SECONDS + ONE_PASS_SECONDS
    run = await terminal_run(kube, namespace, "r")
    assert [r["phase"] for r in run["status"]["results"]] == ["Cancelled"]
    assert run["status"]["results"][0]["message"] == "run cancelled: window closed"
    # What the drain said (read while it lasted, when a poll caught it) stays readable.
    events = (await kube.list(EVENTS, namespace=namespace))["items"]
    said = [e["message"] for e in events if e["reason"] == "Draining"]
    assert said == [f"draining 1 pod, grace {GRACE_SECONDS}s"]
    assert set(seen) <= set(said)
    conditions = {c["type"]: c for c in run["status"]["conditions"]}
    drained = conditions["Cancelling"]
    assert (drained["status"], drained["reason"]) == ("False", "Drained")
    assert drained["message"] == f"drained 1 pod, grace {GRACE_SECONDS}s"
    # The load ended on its SIGTERM: the pod was deleted, not left to run out its 600 s.
    assert (await kube.list(PODS, namespace=namespace))["items"] == []
    assert not (await kube.get(NODES, node))["spec"].get("unschedulable")
