"""Rule H for link blame's re-pairs (F10): a manager SIGKILLed at random instants of a
blamed run reaches the same blame, creates no pod twice, and leaves nothing behind.

Four simulated nodes, one ``tcp-baseline`` Pair test over all four ((n0, n1), (n2, n3)),
``slow-link`` on n0 (its traffic paced to 0.1 Gbit/s, under the gate), ``spec.linkBlame``
on. Undisturbed, (n0, n1) Fails, (n2, n3) Passes, the re-pairs (n0, n2) Fails and (n1, n3)
Passes: ``node/n0``. The same run is then repeated with the manager killed after a random
0.2-2.5 s (seeded, printed; replay with GLIMMER_CHAOS_SEED) and restarted, until
GLIMMER_CHAOS_BLAME_KILLS kills (default 12) have landed."""

from __future__ import annotations

import asyncio
import os
from typing import Any

import pytest

from glimmer.controllers.kit.names import PROFILES, RUNS, TESTS
from glimmer.engine import ApiServerClient
from glimmer.testing import ManagerProcess
from glimmer.testing.pod_audit import PodAudit
from tests.e2e import conftest as harness
from tests.e2e.test_chaos_links import no_services
from tests.integration.run.conftest import create_run, terminal_run, wait_for
from tests.integration.run.test_links_cluster import RUNNER_IMAGES, tcp_pair

pytestmark = [pytest.mark.controlplane, pytest.mark.timeout(900)]

KILLS = int(os.environ.get("GLIMMER_CHAOS_BLAME_KILLS", "12"))
GATE = [{"metric": "tcpThroughputGbps", "comparison": "GreaterThanOrEqual", "value": "0.5"}]
PREFIX = "chaos-blame-"
#: Two planned links and two re-pairs, two pods each, each attempt once.
PODS_PER_RUN = 8


async def apply_profile(kube: ApiServerClient, namespace: str) -> None:
    meta = {"apiVersion": "burnin.glimmer.ai/v1alpha1"}
    await kube.create(
        TESTS, {**meta, "kind": "BurnInTest", "metadata": {"name": "link"},
                "spec": tcp_pair(thresholds=GATE)}, namespace=namespace,
    )  # fmt: skip
    await kube.create(
        PROFILES, {**meta, "kind": "BurnInProfile", "metadata": {"name": "blame"},
                   "spec": {"tests": [{"testRef": "link"}]}}, namespace=namespace,
    )  # fmt: skip


def blame_of(run: dict[str, Any]) -> tuple[str, list[tuple[str, str, str]]]:
    [entry] = run["status"]["linkBlame"]
    return str(entry["blame"]), [
        (r["node"], r["partner"], r["result"]["phase"]) for r in entry["repairs"]
    ]


async def check_run(
    kube: ApiServerClient, audit: PodAudit, namespace: str, name: str, nodes: list[str]
) -> None:
    run = await kube.get(RUNS, name, namespace=namespace)
    assert not run["metadata"].get("finalizers"), run["metadata"]
    status = run["status"]
    assert status["phase"] == "Failed" and status["failed"] == 1 and status["passed"] == 1
    assert blame_of(run) == (
        f"node/{nodes[0]}",
        [(nodes[0], nodes[2], "Failed"), (nodes[1], nodes[3], "Passed")],
    ), status["linkBlame"]
    await harness.assert_nodes_restored(kube, nodes)
    await wait_for(lambda: no_services(kube, namespace), timeout=15, what="Services deleted")
    prefix = f"{name}-t0-"

    async def all_seen() -> bool:
        audit.check_alive()
        return len(audit.names_with_prefix(prefix)) >= PODS_PER_RUN

    await wait_for(all_seen, timeout=15, what=f"the audit to see {name}'s pods")
    assert len(audit.names_with_prefix(prefix)) == PODS_PER_RUN, audit.names_with_prefix(prefix)


async def test_H_F10_link_blame_survives_a_manager_sigkilled_at_random_instants(
    run_crds: None,
    kube: ApiServerClient,
    namespace: str,
    sim_nodes: Any,
    pod_audit: PodAudit,
    manager_process: Any,
) -> None:
    rng = harness.chaos_rng("chaos-link-blame", kills=KILLS)
    args = [f"--image-map={RUNNER_IMAGES}", f"--node-sim-gpu={PREFIX}0=h200x8:slow-link"]
    nodes = sim_nodes(count=4, name_prefix=PREFIX, extra_args=args).names
    await apply_profile(kube, namespace)
    spec = {"profileRef": "blame", "maxConcurrentNodes": 4, "linkBlame": {"maxExtraPairs": 2}}
    manager: ManagerProcess = manager_process()
    try:
        await create_run(kube, namespace, "reference", nodes, **spec)
        await terminal_run(kube, namespace, "reference", timeout=240)
        await check_run(kube, pod_audit, namespace, "reference", nodes)
        manager.stop()
        kills, runs = 0, 0
        while kills < KILLS:
            runs += 1
            name = f"chaos-{runs}"
            await create_run(kube, namespace, name, nodes, **spec)
            while True:
                manager.start()
                if kills >= KILLS:
                    await terminal_run(kube, namespace, name, timeout=240)
                    manager.stop()
                    break
                await asyncio.sleep(rng.uniform(0.2, 2.5))
                harness.kill_manager(manager, pod_audit)
                kills += 1
                if await harness.is_terminal(kube, namespace, name):
                    break
            await check_run(kube, pod_audit, namespace, name, nodes)
        manager.stop()
        await harness.audit_caught_up(pod_audit, PODS_PER_RUN * (runs + 1))
        print(f"chaos-link-blame: kills={kills} runs={runs} starts={manager.starts}")
        assert pod_audit.duplicate_names == {}
    finally:
        manager.stop()
