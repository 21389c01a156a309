"""I18's adoption proof survives the real apiserver: ``podUID`` on an attempt entry.

The sweep pins the started runner pod's UID on the in-flight attempt, and from then on
that UID, not the predictable name, says the pod is ours. A field the CRD does not
declare is pruned by the apiserver on every status write, silently: the proof would be
gone by the next pass, and a same-name twin judged on its spec alone.
"""

from __future__ import annotations

from typing import Any

import pytest

from glimmer.controllers.kit.names import RUNS
from glimmer.engine import PODS, ApiServerClient
from tests.integration.run.conftest import (
    Operator,
    apply_profile,
    create_run,
    custom,
    terminal_run,
    wait_for,
)

pytestmark = [pytest.mark.controlplane, pytest.mark.timeout(240)]

UID = "0b6f3c1e-5a2d-4c4e-9f0a-3d2b1c0e9f8a"


async def test_I18_the_attempt_pod_uid_survives_a_status_write(
    kube: ApiServerClient, namespace: str
) -> None:
    run = await create_run(kube, namespace, "pinned-uid", ["n1"])
    run["status"] = {
        "phase": "Running",
        "results": [
            {
                "name": "t",
                "kind": "custom",
                "phase": "Running",
                "attempts": [
                    {
                        "attempt": 1,
                        "trigger": "Initial",
                        "phase": "Running",
                        "podName": "pinned-uid-t0-n1-a1",
                        "podUID": UID,
                    }
                ],
            }
        ],
    }
    written = await kube.replace(RUNS, run, namespace=namespace, subresource="status")
    assert written["status"]["results"][0]["attempts"][0]["podUID"] == UID
    read = await kube.get(RUNS, "pinned-uid", namespace=namespace)
    assert read["status"]["results"][0]["attempts"][0]["podUID"] == UID


async def test_I18_the_operator_pins_the_started_pods_uid_on_its_attempt(
    operator: Operator, kube: ApiServerClient, namespace: str, sim_nodes: Any
) -> None:
    nodes = sim_nodes(count=1)
    await apply_profile(kube, namespace, {"t": custom("sleep 6; echo ok=1")})
    await create_run(kube, namespace, "adopts", nodes.names)

    async def pinned() -> tuple[str, str] | None:
        run = await kube.get(RUNS, "adopts", namespace=namespace)
        for result in (run.get("status") or {}).get("results") or []:
            for attempt in result.get("attempts") or []:
                if attempt.get("phase") == "Running" and attempt.get("podUID"):
                    return str(attempt["podName"]), str(attempt["podUID"])
        return None

    name, uid = await wait_for(pinned, what="an in-flight attempt with its podUID")
    pod = await kube.get(PODS, name, namespace=namespace)
    assert pod["metadata"]["uid"] == uid
    run = await terminal_run(kube, namespace, "adopts")
    assert run["status"]["phase"] == "Passed", run["status"]["results"]
    # The audit trail: the settled attempt keeps the UID of the pod it ran in.
    [settled] = run["status"]["results"][0]["attempts"]
    assert (settled["phase"], settled["podName"], settled["podUID"]) == ("Passed", name, uid)
