"""Rule H under chaos: a manager SIGKILLed at random instants reaches the same verdict.

The manager runs as a real `glimmer manager` process against three simulated nodes. One
undisturbed run fixes the reference; then the manager is started, SIGKILLed after a random
0.2-3 s (seeded; the seed is printed so a failure can be replayed with
GLIMMER_CHAOS_SEED) and restarted, over fresh runs, until GLIMMER_CHAOS_KILLS kills have
landed and the last run is terminal. Every run must match the reference result for result
and attempt for attempt, leave no node cordoned or stamped, drop its finalizer, and no
pod name may ever be created twice (a pod watch audits that from before the first start).
"""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any

import pytest

from glimmer.controllers.kit.names import RUNS
from glimmer.engine import ApiServerClient
from glimmer.testing import ManagerProcess
from glimmer.testing.pod_audit import PodAudit
from tests.e2e import conftest as harness
from tests.integration.run.conftest import apply_profile, create_run, custom, terminal_run

pytestmark = [pytest.mark.controlplane, pytest.mark.timeout(900)]

KILLS = int(os.environ.get("GLIMMER_CHAOS_KILLS", "8"))
GATE = [{"metric": "bw", "comparison": "GreaterThanOrEqual", "value": "10"}]

# Plan order: the flaky test errors on its first attempt only (BURNIN_ATTEMPT), so with
# retryOnErrorLimit 1 and repeatCount 2 it needs Initial(Error), ErrorRetry, Repeat.
TESTS = {
    "flaky": custom(
        'if [ "$BURNIN_ATTEMPT" = 1 ]; then echo flaky; exit 3; fi; echo bw=12',
        thresholds=GATE,
        repeatCount=2,
    ),
    "steady": custom("echo bw=12", thresholds=GATE, repeatCount=2),
    "weak": custom("echo bw=3", thresholds=GATE, repeatCount=2),
}
# Derived from rules D2/D3 (repeats are an AND, the first Failed attempt settles; a retry
# only after an Error), per node: (phase, [(attempt, trigger, attempt phase), ...]).
EXPECTED_PER_NODE = {
    "flaky": (
        "Passed",
        [(1, "Initial", "Error"), (2, "ErrorRetry", "Passed"), (3, "Repeat", "Passed")],
    ),
    "steady": ("Passed", [(1, "Initial", "Passed"), (2, "Repeat", "Passed")]),
    "weak": ("Failed", [(1, "Initial", "Failed")]),
}
EXPECTED_PODS_PER_NODE = sum(len(a) for _, a in EXPECTED_PER_NODE.values())


async def check_run(
    kube: ApiServerClient,
    *,
    namespace: str,
    name: str,
    nodes: list[str],
    reference: dict[str, Any],
) -> int:
    """Assert the run matches the reference; returns how many pods it created."""
    run = await kube.get(RUNS, name, namespace=namespace)
    assert not run["metadata"].get("finalizers"), run["metadata"]
    assert harness.summary(run) == harness.summary(reference), run["status"]
    assert harness.outcome(run) == harness.outcome(reference), run["status"]["results"]
    await harness.assert_nodes_restored(kube, nodes)
    pods = await harness.run_pods(kube, namespace, name)
    # One pod per recorded attempt: no attempt launched twice or launched unrecorded.
    assert len(pods) == EXPECTED_PODS_PER_NODE * len(nodes), pods
    return len(pods)


async def test_H_a_manager_sigkilled_at_random_instants_reaches_the_undisturbed_verdict(
    run_crds: None,
    kube: ApiServerClient,
    namespace: str,
    sim_nodes: Any,
    pod_audit: PodAudit,
    manager_process: Any,
) -> None:
    rng = harness.chaos_rng("chaos", kills=KILLS)
    nodes = sim_nodes(count=3).names
    await apply_profile(kube, namespace, TESTS)
    manager: ManagerProcess = manager_process()
    try:
        # The reference: an undisturbed run, which must itself match rules D2/D3.
        await create_run(kube, namespace, "reference", nodes, retryOnErrorLimit=1)
        reference = await terminal_run(kube, namespace, "reference", timeout=180)
        manager.stop()
        expected = {
            (test, node): (phase, attempts)
            for test, (phase, attempts) in EXPECTED_PER_NODE.items()
            for node in nodes
        }
        assert harness.outcome(reference) == expected, reference["status"]["results"]
        assert harness.summary(reference) == ("Failed", 6, 3, 0, 0)
        await check_run(
            kube, namespace=namespace, name="reference", nodes=nodes, reference=reference
        )

        kills = 0
        runs = 0
        started = time.monotonic()
        while True:
            runs += 1
            name = f"chaos-{runs}"
            await create_run(kube, namespace, name, nodes, retryOnErrorLimit=1)
            while True:
                manager.start()
                if kills >= KILLS:
                    await terminal_run(kube, namespace, name, timeout=180)
                    break
                await asyncio.sleep(rng.uniform(0.2, 3.0))
                harness.kill_manager(manager, pod_audit)
                kills += 1
                if await harness.is_terminal(kube, namespace, name):
                    break
            await check_run(kube, namespace=namespace, name=name, nodes=nodes, reference=reference)
            if kills >= KILLS:
                break
        manager.stop()
        pods_expected = EXPECTED_PODS_PER_NODE * len(nodes) * (runs + 1)
        await harness.audit_caught_up(pod_audit, pods_expected)
        print(
            f"chaos: kills={kills} runs={runs} manager_starts={manager.starts} "
            f"pods_created={pod_audit.pods_created} (expected {pods_expected}) "
            f"added_events={pod_audit.added_events} relists={pod_audit.relists} "
            f"duplicate_names={len(pod_audit.duplicate_names)} "
            f"chaos_wall_s={time.monotonic() - started:.1f}"
        )
        assert pod_audit.duplicate_names == {}
        assert pod_audit.pods_created == pods_expected
        assert kills == KILLS
    finally:
        manager.stop()
