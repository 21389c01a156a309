"""Rule H for Pair and Group under chaos: a manager SIGKILLed at random instants reaches
the undisturbed verdicts.

A real ``glimmer manager`` process drives alternating Pair runs (``tcp-baseline``: the
server waits for its client, real TCP bytes between the pods) and Group runs
(``ring-allreduce``: every rank waits for the others at rank 0) on three simulated
nodes. The undisturbed reference of each comes first; then the manager is SIGKILLed
after a random 0.2-2.5 s (seeded, printed; replay with GLIMMER_CHAOS_SEED) and restarted,
over fresh runs, until GLIMMER_CHAOS_LINK_KILLS kills (default 30) have landed. Each run
must match its reference result for result and attempt for attempt, leave no node
cordoned or stamped and no rendezvous Service behind, and no pod name may ever be
created twice (a pod watch audits that from before the first start)."""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any

import pytest

from glimmer.controllers.kit.names import PROFILES, RUNS, TESTS
from glimmer.controllers.run import kube as kube_
from glimmer.engine import ApiServerClient
from glimmer.testing import ManagerProcess
from glimmer.testing.pod_audit import PodAudit
from tests.e2e import conftest as harness
from tests.integration.run.conftest import create_run, terminal_run, wait_for
from tests.integration.run.test_links_cluster import link_nodes, ring_group, tcp_pair

pytestmark = [pytest.mark.controlplane, pytest.mark.timeout(900)]

KILLS = int(os.environ.get("GLIMMER_CHAOS_LINK_KILLS", "30"))
#: At most this many kills land on one run (so both scopes take several).
KILLS_PER_RUN = 6
TCP_GATE = [{"metric": "tcpThroughputGbps", "comparison": "GreaterThanOrEqual", "value": "0.001"}]
RING_GATE = [{"metric": "miscompares", "comparison": "Equal", "value": "0"}]
#: (profile, its one test, target count, pods per attempt)
KINDS = {
    "pair": (tcp_pair(thresholds=TCP_GATE, repeatCount=2), 2, 2),
    "group": (ring_group(thresholds=RING_GATE, repeatCount=2), 3, 3),
}
#: Both: Passed, Initial then Repeat (D2), each attempt one execution over every node.
EXPECTED_ATTEMPTS = [(1, "Initial", "Passed"), (2, "Repeat", "Passed")]


async def apply_profiles(kube: ApiServerClient, namespace: str) -> None:
    for name, (spec, _, _) in KINDS.items():
        meta = {"apiVersion": "burnin.glimmer.ai/v1alpha1"}
        await kube.create(
            TESTS, {**meta, "kind": "BurnInTest", "metadata": {"name": name}, "spec": spec},
            namespace=namespace,
        )  # fmt: skip
        await kube.create(
            PROFILES,
            {**meta, "kind": "BurnInProfile", "metadata": {"name": name},
             "spec": {"tests": [{"testRef": name}]}},
            namespace=namespace,
        )  # fmt: skip


async def no_services(kube: ApiServerClient, namespace: str) -> bool:
    return not (await kube.list(kube_.SERVICES, namespace=namespace))["items"]


async def check_run(
    kube: ApiServerClient, *, audit: PodAudit, namespace: str, name: str, kind: str,
    nodes: list[str], reference: dict[str, Any],
) -> int:  # fmt: skip
    run = await kube.get(RUNS, name, namespace=namespace)
    assert not run["metadata"].get("finalizers"), run["metadata"]
    assert harness.summary(run) == harness.summary(reference), run["status"]
    assert harness.outcome(run) == harness.outcome(reference), run["status"]["results"]
    await harness.assert_nodes_restored(kube, nodes)
    await wait_for(lambda: no_services(kube, namespace), timeout=15, what="Services deleted")
    _, count, per_attempt = KINDS[kind]
    assert count == len(nodes)
    expected = per_attempt * len(EXPECTED_ATTEMPTS)
    # From the audit, not a list: a server still running when its client settled the
    # pair did not report and was deleted (F2), so it is gone from the namespace.
    prefix = f"{name}-t0-"

    async def all_seen() -> bool:
        audit.check_alive()
        return len(audit.names_with_prefix(prefix)) >= expected

    await wait_for(all_seen, timeout=15, what=f"the audit to see {name}'s pods")
    created = audit.names_with_prefix(prefix)
    # One pod per member per recorded attempt: nothing launched twice or unrecorded.
    assert len(created) == expected, created
    assert set(await harness.run_pods(kube, namespace, name)) <= set(created)
    return len(created)


async def test_H_F_pair_and_group_runs_survive_a_manager_sigkilled_at_random_instants(
    run_crds: None,
    kube: ApiServerClient,
    namespace: str,
    sim_nodes: Any,
    pod_audit: PodAudit,
    manager_process: Any,
) -> None:
    rng = harness.chaos_rng("chaos-links", kills=KILLS)
    every = link_nodes(sim_nodes, 3).names
    targets = {kind: every[:count] for kind, (_, count, _) in KINDS.items()}
    await apply_profiles(kube, namespace)
    manager: ManagerProcess = manager_process()
    pods_expected = 0
    try:
        references: dict[str, dict[str, Any]] = {}
        for kind in KINDS:
            name = f"reference-{kind}"
            await create_run(kube, namespace, name, targets[kind], profileRef=kind)
            references[kind] = await terminal_run(kube, namespace, name, timeout=180)
            [(key, (phase, attempts))] = harness.outcome(references[kind]).items()
            assert key == (kind, ",".join(targets[kind]))
            assert (phase, attempts) == ("Passed", EXPECTED_ATTEMPTS), references[kind]["status"]
            pods_expected += await check_run(
                kube, audit=pod_audit, namespace=namespace, name=name, kind=kind,
                nodes=targets[kind], reference=references[kind],
            )  # fmt: skip
        manager.stop()
        kills = 0
        runs = 0
        started = time.monotonic()
        while kills < KILLS:
            runs += 1
            kind = "pair" if runs % 2 else "group"
            name = f"chaos-{kind}-{runs}"
            await create_run(kube, namespace, name, targets[kind], profileRef=kind)
            landed = 0
            while True:
                manager.start()
                # Spread the kills over Pair and Group runs alike: a run that took its
                # share is left to finish under a live manager.
                if kills >= KILLS or landed >= KILLS_PER_RUN:
                    await terminal_run(kube, namespace, name, timeout=180)
                    manager.stop()
                    break
                await asyncio.sleep(rng.uniform(0.2, 2.5))
                harness.kill_manager(manager, pod_audit)
                kills += 1
                landed += 1
                if await harness.is_terminal(kube, namespace, name):
                    break
            pods_expected += await check_run(
                kube, audit=pod_audit, namespace=namespace, name=name, kind=kind,
                nodes=targets[kind], reference=references[kind],
            )  # fmt: skip
        manager.stop()
        await harness.audit_caught_up(pod_audit, pods_expected)
        print(
            f"chaos-links: kills={kills} runs={runs} manager_starts={manager.starts} "
            f"pods_created={pod_audit.pods_created} (expected {pods_expected}) "
            f"duplicate_names={len(pod_audit.duplicate_names)} "
            f"chaos_wall_s={time.monotonic() - started:.1f}"
        )
        assert pod_audit.duplicate_names == {}
        assert pod_audit.pods_created == pods_expected
        assert kills == KILLS
        assert runs >= 4  # kills landed on Pair and Group runs alike
    finally:
        manager.stop()
