"""The node verdict end to end: a failFast run stops after one node Fails its first test;
the other node, which Passed that test and never ran the rest, is never labelled Passed
(real apiserver, simulated kubelets, the run and fingerprint controllers embedded)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from glimmer.controllers.fingerprint import VERDICT_LABEL
from glimmer.controllers.kit.names import FINGERPRINTS
from glimmer.engine import NAMESPACES, NODES, ApiError, ApiServerClient, is_already_exists
from tests.integration.run.conftest import (
    Operator,
    apply_profile,
    create_run,
    custom,
    terminal_run,
    wait_for,
)

pytestmark = [pytest.mark.controlplane, pytest.mark.timeout(300)]

GATE = [{"metric": "bw", "comparison": "GreaterThanOrEqual", "value": "10"}]
OPS = "glimmer-system"


async def test_node_verdict_a_fail_fast_run_leaves_the_untested_node_unlabelled_passed(
    operator: Operator, kube: ApiServerClient, namespace: str, sim_nodes: Any
) -> None:
    try:
        await kube.create(NAMESPACES, {"metadata": {"name": OPS}})
    except ApiError as err:
        if not is_already_exists(err):
            raise
    nodes = sim_nodes(count=2).names
    # The first of the two smoke pods to start fails its gate, after the other passed.
    marker = f"/tmp/glimmer-first-{uuid.uuid4().hex}"
    smoke = f"if mkdir {marker} 2>/dev/null; then sleep 3; echo bw=1; else echo bw=12; fi"
    await apply_profile(
        kube,
        namespace,
        {"smoke": custom(smoke, thresholds=GATE), "burn": custom("echo bw=12", thresholds=GATE)},
        failFast=True,
    )
    await create_run(kube, namespace, "ff", nodes, maxConcurrentNodes=2)
    run = await terminal_run(kube, namespace, "ff")
    assert run["status"]["phase"] == "Failed", run["status"]
    phases = {(r["name"], r["nodes"][0]): r["phase"] for r in run["status"]["results"]}
    failed = next(n for n in nodes if phases.get(("smoke", n)) == "Failed")
    untested = next(n for n in nodes if n != failed)
    assert phases[("smoke", untested)] == "Passed"
    assert ("burn", untested) not in phases or phases[("burn", untested)] != "Passed"

    async def judged(node: str) -> dict[str, Any] | None:
        fp = await kube.get(FINGERPRINTS, node, namespace=OPS)
        conditions = (fp.get("status") or {}).get("conditions") or []
        current = next((c for c in conditions if c["type"] == "VerdictCurrent"), None)
        seen = current is not None and "ff" in str(current.get("message")) + str(
            (fp["status"].get("verdict") or {}).get("runName")
        )
        return fp if seen else None

    fp = await wait_for(lambda: judged(untested), what="the untested node's fingerprint")
    assert "verdict" not in fp["status"], fp["status"]
    current = next(c for c in fp["status"]["conditions"] if c["type"] == "VerdictCurrent")
    assert current["reason"] == "NewestRunDidNotJudge" and "burn" in current["message"]
    label = (await kube.get(NODES, untested))["metadata"]["labels"].get(VERDICT_LABEL)
    assert label == "Missing", label
    fp = await wait_for(lambda: judged(failed), what="the failed node's verdict")
    assert fp["status"]["verdict"]["phase"] == "Failed", fp["status"]
    # (Its label may read Expired: a node created in the same second the run began is
    # bound to no digest. It never reads Passed.)
    label = (await kube.get(NODES, failed))["metadata"]["labels"].get(VERDICT_LABEL)
    assert label != "Passed", label
