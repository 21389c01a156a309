"""Rule H for a segmented soak (G2, G5): a ``glimmer manager`` SIGKILLed once in every
segment still reaches the undisturbed aggregate, never folding a segment twice and
never losing one.

A six-segment soak on one simulated node: each segment's runner prints that window's
metrics (``BURNIN_ATTEMPT`` picks them), sleeps a little, and exits. The undisturbed
reference comes first; then a fresh run, and for every segment the manager is killed
at a random instant (seeded, printed; replay with GLIMMER_CHAOS_SEED) after that
segment's pod is seen running (before, during or after its harvest), then restarted.
The soak must match the reference result, fold and attempt for attempt, and no pod
name may ever be created twice (a pod watch audits that)."""

from __future__ import annotations

import asyncio
import functools
from typing import Any

import pytest

from glimmer.engine import PODS, ApiError, ApiServerClient, is_not_found
from glimmer.plan import pod_name
from glimmer.testing import ManagerProcess
from glimmer.testing.pod_audit import PodAudit
from tests.e2e import conftest as harness
from tests.integration.run.conftest import apply_profile, create_run, terminal_run, wait_for
from tests.integration.run.test_soak_cluster import GATES, soak_test

pytestmark = [pytest.mark.controlplane, pytest.mark.timeout(300)]

SEGMENTS = 6
#: Sums that double-count or drop a window show at once: elapsedS 300 per window,
#: xidEvents 0, and a Max/Min that moves every window.
WINDOW = (
    "sleep 1.5; echo xidEvents=0; echo gpuTempC=$((60 + BURNIN_ATTEMPT)); "
    "echo sustainedClockPct=$((100 - BURNIN_ATTEMPT)); echo elapsedS=300; "
    "echo iterationsCompleted=$((10 * BURNIN_ATTEMPT)); echo CUSTOM_PASS: window $BURNIN_ATTEMPT"
)


def soak_view(run: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [
        (
            r["phase"],
            r.get("segmentsRequired"),
            r.get("segmentsCompleted"),
            r.get("aggregatedMetrics"),
            r.get("metrics"),
            r.get("truncatedAttempts"),
            r.get("errorRetries"),
        )
        for r in run["status"]["results"]
    ]


async def pod_running(kube: ApiServerClient, namespace: str, name: str) -> bool:
    try:
        pod = await kube.get(PODS, name, namespace=namespace)
    except ApiError as err:
        if is_not_found(err):
            return False
        raise
    return bool(pod["status"].get("phase") in ("Running", "Succeeded", "Failed"))


async def test_G2_H_a_soak_with_the_manager_sigkilled_in_every_segment_keeps_the_aggregate(
    run_crds: None,
    kube: ApiServerClient,
    namespace: str,
    sim_nodes: Any,
    pod_audit: PodAudit,
    manager_process: Any,
) -> None:
    rng = harness.chaos_rng("chaos-soak")
    nodes = sim_nodes(count=1).names
    await apply_profile(
        kube, namespace, {"soak": soak_test(WINDOW, segments=SEGMENTS, thresholds=GATES)}
    )
    manager: ManagerProcess = manager_process()
    try:
        await create_run(kube, namespace, "reference", nodes)
        reference = await terminal_run(kube, namespace, "reference", timeout=120)
        [result] = reference["status"]["results"]
        assert result["phase"] == "Passed", result
        assert result["aggregatedMetrics"]["elapsedS"] == "1800"
        assert result["aggregatedMetrics"]["iterationsCompleted"] == "210"
        chaos = await create_run(kube, namespace, "chaos", nodes)
        kills = 0
        for segment in range(1, SEGMENTS + 1):
            victim = pod_name(
                run_name="chaos", run_uid=chaos["metadata"]["uid"], test_index=0,
                node=nodes[0], attempt=segment,
            )  # fmt: skip
            await wait_for(
                functools.partial(pod_running, kube, namespace, victim),
                timeout=60,
                what=f"segment {segment}'s pod",
            )
            await asyncio.sleep(rng.uniform(0.0, 2.5))
            harness.kill_manager(manager, pod_audit)
            kills += 1
            manager.start()
        run = await terminal_run(kube, namespace, "chaos", timeout=120)
        manager.stop()
        assert harness.summary(run) == harness.summary(reference), run["status"]
        assert soak_view(run) == soak_view(reference), run["status"]["results"]
        assert harness.outcome(run) == harness.outcome(reference), run["status"]["results"]
        await harness.assert_nodes_restored(kube, nodes)
        # One pod per segment, each created once, in both runs.
        for name in ("reference", "chaos"):
            created = pod_audit.names_with_prefix(f"{name}-t0-")
            assert len(created) == SEGMENTS, created
        assert pod_audit.duplicate_names == {}
        print(f"chaos-soak: kills={kills} manager_starts={manager.starts}")
        assert kills == SEGMENTS
    finally:
        manager.stop()
