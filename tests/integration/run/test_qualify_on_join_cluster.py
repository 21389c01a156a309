"""Qualify on join end to end (J6, J7): the manager in-process, the real apiserver and the
simulated kubelet.

Four nodes join carrying ``burnin.glimmer.ai/unqualified:NoSchedule`` (and, to show it is
never touched, a second taint of another key). A BurnInSchedule with
``trigger.nodeJoined`` batches them into one run whose pods tolerate exactly that taint.
Three nodes are made to look like real hosts (the simulator's labels removed, as in the
certification tests), and the custom test declares silicon provenance, so a Pass there is
certified; one of the three has an injected fault (its ``GLIMMER_SIM_GPU`` names one, and
the test measures low bandwidth there). The fourth stays visibly simulated. After the run:
the two healthy hosts are untainted; the faulty one keeps the taint (Failed) and the
simulated one keeps it too (Simulated: never qualified on a simulated result), each with
a Warning Event naming the reason and the schedule's ``Qualified`` condition saying so.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest

from glimmer.controllers.kit.names import (
    FINGERPRINTS,
    RUNS,
    SCHEDULES,
    VERDICT_LABEL,
    fingerprint_name,
)
from glimmer.controllers.schedule.qualify import QUALIFY_REASON, QUALIFY_RUN, TAINTED_BY
from glimmer.engine import EVENTS, NAMESPACES, NODES, ApiError, ApiServerClient, is_conflict
from tests.integration.run.conftest import (
    FAST_RUN_OPTIONS,
    Operator,
    apply_profile,
    custom,
    wait_for,
)

pytestmark = [pytest.mark.controlplane, pytest.mark.timeout(300)]

OPERATOR_NS = FAST_RUN_OPTIONS.operator_namespace

POOL = "glimmer.test/pool"
TAINT_KEY = "burnin.glimmer.ai/unqualified"
OTHER_KEY = "glimmer.test/dedicated"
GATE = [{"metric": "bw", "comparison": "GreaterThanOrEqual", "value": "10"}]
#: Declares silicon; measures low bandwidth on the node whose simulated GPU has a fault.
RUNNER = (
    "echo provenance=silicon; "
    'case "$GLIMMER_SIM_GPU" in *ecc-uncorrectable*) echo bw=3;; *) echo bw=12;; esac'
)


async def _unsimulate(kube: ApiServerClient, node: str) -> None:
    """The node no longer carries the simulated kubelet's labels (as a real host would
    not); the simulator still runs its pods, found by the pool label."""
    labels = dict.fromkeys(("sim.glimmer.dev/simulated-gpu", "sim.glimmer.dev/instance"))
    await kube.patch(NODES, node, {"metadata": {"labels": labels}})


def _keys(node: dict[str, Any]) -> list[str]:
    return sorted(t["key"] for t in node["spec"].get("taints") or [])


async def test_nodes_joining_with_the_taint_are_qualified_and_a_faulty_one_keeps_it(
    operator: Operator, kube: ApiServerClient, namespace: str, sim_nodes: Any
) -> None:
    pool = uuid.uuid4().hex[:10]
    prefix = f"q-{pool[:4]}-"
    healthy, faulty, simulated = [f"{prefix}0", f"{prefix}1"], f"{prefix}2", f"{prefix}3"
    await apply_profile(
        kube, namespace, {"burn": custom(RUNNER, thresholds=GATE, durationSeconds=5)}
    )
    await kube.create(
        SCHEDULES,
        {
            "apiVersion": "burnin.glimmer.ai/v1alpha1",
            "kind": "BurnInSchedule",
            "metadata": {"name": "qualify"},
            "spec": {
                "profileRef": "prof",
                "target": {
                    "nodeSelector": {POOL: pool},
                    "tolerations": [{"key": OTHER_KEY, "operator": "Exists"}],
                },
                "trigger": {
                    "nodeJoined": {
                        "taint": {"key": TAINT_KEY, "effect": "NoSchedule"},
                        "batchWindowSeconds": 12,
                    }
                },
                "runTemplate": {"maxConcurrentNodes": 4},
            },
        },
        namespace=namespace,
    )
    nodes = sim_nodes(
        count=4,
        name_prefix=prefix,
        extra_args=[
            f"--taint={TAINT_KEY}:NoSchedule",
            f"--taint={OTHER_KEY}=burnin:NoSchedule",
            f"--label={POOL}={pool}",
            f"--schedule-selector={POOL}={pool}",
            f"--node-sim-gpu={faulty}=h100x8:ecc-uncorrectable",
        ],
    )
    assert nodes.names == [*healthy, faulty, simulated]
    for node in (*healthy, faulty):
        await _unsimulate(kube, node)

    async def judged() -> dict[str, Any] | None:
        status = (await kube.get(SCHEDULES, "qualify", namespace=namespace)).get("status") or {}
        qualification = status.get("qualification") or {}
        return status if qualification.get("phase") == "Judged" else None

    status = await wait_for(judged, timeout=180, what="the batch judged")
    print("schedule status:", json.dumps(status, indent=2, sort_keys=True))
    qualification = status["qualification"]
    (run,) = (await kube.list(RUNS, namespace=namespace))["items"]
    assert qualification["runName"] == run["metadata"]["name"]
    assert sorted(qualification["nodes"]) == nodes.names  # one batch, one run
    assert {"key": TAINT_KEY, "operator": "Equal", "value": "", "effect": "NoSchedule"} in run[
        "spec"
    ]["target"]["tolerations"]
    outcomes = {o["node"]: (o["outcome"], o["reason"]) for o in qualification["outcomes"]}
    assert outcomes == {
        healthy[0]: ("Untainted", "Qualified"),
        healthy[1]: ("Untainted", "Qualified"),
        faulty: ("Kept", "Failed"),
        simulated: ("Kept", "Simulated"),
    }, qualification

    run_key = f"{namespace}/{run['metadata']['name']}"
    for name in nodes.names:
        node = await kube.get(NODES, name)
        annotations = node["metadata"].get("annotations") or {}
        assert annotations[QUALIFY_RUN] == run_key
        assert annotations[QUALIFY_REASON] == outcomes[name][1]
        kept = outcomes[name][0] == "Kept"
        # The other key's taint is never touched; ours goes only on a certified Pass.
        assert _keys(node) == sorted([OTHER_KEY, *([TAINT_KEY] if kept else [])]), node["spec"]

    [condition] = [c for c in status["conditions"] if c["type"] == "Qualified"]
    assert (condition["status"], condition["reason"]) == ("False", "TaintKept")
    assert f"{faulty} (Failed)" in condition["message"] and "failed: burn" in condition["message"]
    assert f"{simulated} (Simulated)" in condition["message"]

    events = (await kube.list(EVENTS, namespace="default"))["items"]
    seen = {
        (e["involvedObject"]["name"], e["reason"], e["message"].split(":")[0])
        for e in events
        if e["involvedObject"]["name"] in nodes.names and e["reason"].startswith("QualifyTaint")
    }
    assert (faulty, "QualifyTaintKept", "Failed") in seen
    assert (simulated, "QualifyTaintKept", "Simulated") in seen
    assert {n for n, reason, _ in seen if reason == "QualifyTaintRemoved"} == set(healthy)


async def test_a_node_whose_hardware_drifts_is_retainted_and_qualified_again(
    operator: Operator, kube: ApiServerClient, namespace: str, sim_nodes: Any
) -> None:
    """J8 end to end: a qualified node's GPU changes under it (its NodeFingerprint reads
    Expired, hardware changed); with ``retaintOnDrift`` the schedule puts the taint back,
    says it placed it (``qualify-tainted-by``), and qualifies the node again in a second
    batch, which removes the taint and the ownership mark."""
    pool = uuid.uuid4().hex[:10]
    try:  # where the NodeFingerprints live (the run tests' operator namespace)
        await kube.create(NAMESPACES, {"metadata": {"name": OPERATOR_NS}})
    except ApiError as err:
        if not is_conflict(err):
            raise
    await apply_profile(
        kube, namespace, {"burn": custom(RUNNER, thresholds=GATE, durationSeconds=5)}
    )
    await kube.create(
        SCHEDULES,
        {
            "apiVersion": "burnin.glimmer.ai/v1alpha1",
            "kind": "BurnInSchedule",
            "metadata": {"name": "drift"},
            "spec": {
                "profileRef": "prof",
                "target": {"nodeSelector": {POOL: pool}},
                "trigger": {
                    "nodeJoined": {
                        "taint": {"key": TAINT_KEY, "effect": "NoSchedule"},
                        "batchWindowSeconds": 8,
                        "retaintOnDrift": True,
                    }
                },
            },
        },
        namespace=namespace,
    )
    nodes = sim_nodes(
        count=1,
        name_prefix=f"d-{pool[:4]}-",
        extra_args=[
            f"--taint={TAINT_KEY}:NoSchedule",
            f"--label={POOL}={pool}",
            f"--schedule-selector={POOL}={pool}",
        ],
    )
    (name,) = nodes.names
    await _unsimulate(kube, name)

    async def judged(batch: int) -> dict[str, Any] | None:
        status = (await kube.get(SCHEDULES, "drift", namespace=namespace)).get("status") or {}
        qualification = status.get("qualification") or {}
        done = qualification.get("batch") == batch and qualification.get("phase") == "Judged"
        return qualification if done else None

    first = await wait_for(lambda: judged(1), timeout=120, what="the first batch judged")
    assert [(o["outcome"], o["reason"]) for o in first["outcomes"]] == [("Untainted", "Qualified")]

    async def labelled() -> bool:
        node = await kube.get(NODES, name)
        return node["metadata"]["labels"].get(VERDICT_LABEL) == "Passed" and not _keys(node)

    try:
        await wait_for(labelled, timeout=60, what="the verdict label Passed, untainted")
    except AssertionError:
        node = await kube.get(NODES, name)
        fp = await kube.get(FINGERPRINTS, fingerprint_name(name), namespace=OPERATOR_NS)
        raise AssertionError(json.dumps([node["metadata"], fp.get("status")], indent=1)) from None
    await kube.patch(
        NODES, name, {"metadata": {"labels": {"nvidia.com/gpu.product": "NVIDIA-H200"}}}
    )

    async def retainted() -> dict[str, Any] | None:
        node = await kube.get(NODES, name)
        owner = (node["metadata"].get("annotations") or {}).get(TAINTED_BY)
        return node if TAINT_KEY in _keys(node) and owner == f"{namespace}/drift" else None

    await wait_for(retainted, timeout=60, what="the drifted node re-tainted by the schedule")
    second = await wait_for(lambda: judged(2), timeout=120, what="the second batch judged")
    assert second["runName"] != first["runName"]
    assert [(o["outcome"], o["reason"]) for o in second["outcomes"]] == [("Untainted", "Qualified")]
    node = await kube.get(NODES, name)
    assert not _keys(node)
    assert TAINTED_BY not in (node["metadata"].get("annotations") or {})
    events = (await kube.list(EVENTS, namespace="default"))["items"]
    reasons = [e["reason"] for e in events if e["involvedObject"]["name"] == name]
    assert "QualifyRetainted" in reasons and reasons.count("QualifyTaintRemoved") >= 1
