"""End-to-end tests share the run-controller fixtures (CRDs, an admin client) and the
chaos harness: a seeded random source whose seed is printed for replay, a pod audit
watching from before the first manager, the kill step, and the views of a run that a
crash may not change.

Why one harness: every chaos test (``test_chaos*.py``) proves rule H the same way (kill
the manager at seeded random instants, restart it, compare with an undisturbed reference
and the audit); a rule about what a kill may not change is written once, here.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest_asyncio

from glimmer.controllers.kit import names as labels
from glimmer.controllers.kit.names import RUNS
from glimmer.engine import NODES, PODS, ApiServerClient
from glimmer.plan.names import label_value
from glimmer.testing import ManagerProcess
from glimmer.testing.pod_audit import PodAudit
from tests.integration.run.conftest import kube, run_crds, wait_for

__all__ = [
    "TERMINAL",
    "Outcome",
    "assert_nodes_restored",
    "audit_caught_up",
    "chaos_rng",
    "is_terminal",
    "kill_manager",
    "kube",
    "outcome",
    "pod_audit",
    "run_crds",
    "run_pods",
    "summary",
]

TERMINAL = ("Passed", "Failed", "Error", "Cancelled")

Outcome = dict[tuple[str, str], tuple[str, list[tuple[int, str, str]]]]


def outcome(run: dict[str, Any]) -> Outcome:
    """Per (test, node): the result phase and its attempt history, the parts a crash may
    not change."""
    results: Outcome = {}
    for result in run["status"]["results"]:
        key = (result["name"], ",".join(result.get("nodes") or []))
        assert key not in results, f"two results for {key}"
        attempts = [(a["attempt"], a["trigger"], a["phase"]) for a in result.get("attempts", [])]
        results[key] = (result["phase"], attempts)
    return results


def summary(run: dict[str, Any]) -> tuple[str, int, int, int, int]:
    status = run["status"]
    return (
        status["phase"],
        status.get("passed", 0),
        status.get("failed", 0),
        status.get("errored", 0),
        status.get("skipped", 0),
    )


async def assert_nodes_restored(kube: ApiServerClient, names: list[str]) -> None:
    for name in names:
        node = await kube.get(NODES, name)
        notes = node["metadata"].get("annotations") or {}
        assert not node["spec"].get("unschedulable"), f"{name} left cordoned"
        assert labels.CORDON_OWNER not in notes, f"{name} keeps {notes[labels.CORDON_OWNER]}"
        assert labels.HEAT_EXPECTED not in notes, f"{name} keeps heat-expected"


async def run_pods(kube: ApiServerClient, namespace: str, run: str) -> list[str]:
    pods = await kube.list(
        PODS, namespace=namespace, label_selector=f"{labels.RUN_LABEL}={label_value(run)}"
    )
    return sorted(p["metadata"]["name"] for p in pods["items"])


async def is_terminal(kube: ApiServerClient, namespace: str, name: str) -> bool:
    run = await kube.get(RUNS, name, namespace=namespace)
    phase = (run.get("status") or {}).get("phase")
    return phase in TERMINAL and not run["metadata"].get("finalizers")


def chaos_rng(label: str, **shown: object) -> random.Random:
    """The kill schedule's random source, seeded from GLIMMER_CHAOS_SEED or the clock;
    the seed (and ``shown``) is printed so a failure can be replayed."""
    seed = int(os.environ.get("GLIMMER_CHAOS_SEED", str(time.time_ns() % 2**32)))
    details = "".join(f" {name}={value}" for name, value in shown.items())
    print(f"\n{label}: seed={seed}{details} (replay with GLIMMER_CHAOS_SEED={seed})")
    return random.Random(seed)


@pytest_asyncio.fixture(loop_scope="function")
async def pod_audit(control_plane: Any, namespace: str) -> AsyncIterator[PodAudit]:
    """A pod watch on the test's namespace, started before the test starts any manager;
    stopped after it (a watch that crashed fails the test: it proves nothing)."""
    audit = PodAudit(kubeconfig=str(control_plane.kubeconfig_path), namespace=namespace)
    await audit.start()
    try:
        yield audit
    finally:
        await audit.stop()


def kill_manager(manager: ManagerProcess, audit: PodAudit) -> None:
    """One chaos kill: the manager must still be running (one that exited by itself is a
    failure, not a kill), then SIGKILL; the audit must still be watching."""
    crashed = manager.exited()
    assert crashed is None, f"manager exited by itself ({crashed})" + manager.log_tail()
    manager.kill()
    audit.check_alive()


async def audit_caught_up(audit: PodAudit, pods_expected: int) -> None:
    """Wait until the audit has seen ``pods_expected`` pods (its watch may lag the last
    creations by a moment)."""

    async def caught_up() -> bool:
        audit.check_alive()
        return audit.pods_created >= pods_expected

    await wait_for(caught_up, timeout=15, what="the pod audit to see every pod")
