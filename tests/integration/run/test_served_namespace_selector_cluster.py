"""Serving namespaces by label through the real apiserver: the operator watches the
Namespaces carrying the selector (the apiserver filters the watch, so a namespace
entering or leaving it is an addition or a deletion) and serves runs only there."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from glimmer.controllers.kit import names
from glimmer.controllers.kit.names import RUNS
from glimmer.engine import NAMESPACES, NODES, PODS, ApiError, ApiServerClient, is_not_found
from glimmer.testing import EmbeddedOperator, ManagerProcess
from tests.integration.run.conftest import (
    FAST_RUN_OPTIONS,
    apply_profile,
    create_run,
    custom,
    terminal_run,
    wait_for,
)

pytestmark = [pytest.mark.controlplane, pytest.mark.timeout(240)]

SERVED = {"burnin.glimmer.ai/served": "true"}
SELECTOR = "burnin.glimmer.ai/served=true"
GATE = [{"metric": "bw", "comparison": "GreaterThanOrEqual", "value": "10"}]


@pytest_asyncio.fixture(loop_scope="function")
async def by_label(control_plane: Any, run_crds: None) -> AsyncIterator[EmbeddedOperator]:
    """The operator serving by label. Its idle backstop is long (5 min), so a run that
    ends within seconds of its namespace's relabelling was reconciled by that event."""
    op = EmbeddedOperator(
        kubeconfig=control_plane.kubeconfig_path,
        served_namespaces=None,
        run_options=dataclasses.replace(
            FAST_RUN_OPTIONS, served_namespace_selector=SERVED, requeue_idle_seconds=300
        ),
    )
    await op.start()
    try:
        yield op
    finally:
        await op.stop()


async def in_served_cache(op: EmbeddedOperator, namespace: str, *, served: bool) -> None:
    async def check() -> bool:
        try:
            await op.readers.cached.get(NAMESPACES, namespace, label_selector=SELECTOR)
        except ApiError as err:
            if not is_not_found(err):
                raise
            return not served
        return served

    await wait_for(check, timeout=20, what=f"namespace {namespace} served={served} in the cache")


async def label(kube: ApiServerClient, namespace: str, value: str | None) -> None:
    await kube.patch(
        NAMESPACES, namespace, {"metadata": {"labels": {"burnin.glimmer.ai/served": value}}}
    )


class SelectorManager(ManagerProcess):
    """``glimmer manager`` as the chart runs it in the selector shape: the selector flag
    instead of ``--serve-namespaces`` (which ManagerProcess always passes)."""

    def argv(self) -> list[str]:
        return [a for a in super().argv() if not a.startswith("--serve-namespaces=")]


@pytest.fixture
def manager_by_label(
    control_plane: Any, run_crds: None, tmp_path: Path
) -> Iterator[SelectorManager]:
    manager = SelectorManager(
        kubeconfig=control_plane.kubeconfig_path,
        log_path=tmp_path / "manager.log",
        extra_args=[f"--serve-namespace-selector={SELECTOR}", "--runner-service-account="],
    )
    manager.start()
    try:
        manager.wait_ready()
        yield manager
    finally:
        manager.stop()


def admitted(run: dict[str, Any]) -> dict[str, Any]:
    conditions: dict[str, dict[str, Any]] = {
        c["type"]: c for c in run["status"].get("conditions") or []
    }
    return conditions["Admitted"]


async def test_a_namespace_labelled_after_a_refusal_has_its_next_run_admitted(
    by_label: EmbeddedOperator, kube: ApiServerClient, namespace: str, sim_nodes: Any
) -> None:
    nodes = sim_nodes(count=1).names
    await apply_profile(kube, namespace, {"t": custom("echo bw=12", thresholds=GATE)})
    await create_run(kube, namespace, "before", nodes)
    refused = await terminal_run(kube, namespace, "before")
    assert refused["status"]["phase"] == "Error"
    assert admitted(refused)["reason"] == "NamespaceNotServed"
    assert f"kubectl label namespace {namespace} {SELECTOR}" in admitted(refused)["message"]
    await label(kube, namespace, "true")
    await in_served_cache(by_label, namespace, served=True)
    await create_run(kube, namespace, "after", nodes)
    run = await terminal_run(kube, namespace, "after")
    assert run["status"]["phase"] == "Passed", run["status"]
    assert admitted(run)["status"] == "True"


async def test_a_namespace_losing_its_label_unloads_its_running_run_at_once(
    by_label: EmbeddedOperator, kube: ApiServerClient, namespace: str, sim_nodes: Any
) -> None:
    nodes = sim_nodes(count=1).names
    await label(kube, namespace, "true")
    await in_served_cache(by_label, namespace, served=True)
    await apply_profile(kube, namespace, {"t": custom("sleep 600", durationSeconds=600)})
    await create_run(kube, namespace, "r", nodes)

    async def pinned() -> bool:
        # The attempt records its running pod's UID: the run is quiet from here on (no
        # pod event and no requeue due for minutes), so only the namespace's own event
        # can reconcile it in the next seconds.
        run = await kube.get(RUNS, "r", namespace=namespace)
        results = (run.get("status") or {}).get("results") or []
        attempts = results[0].get("attempts") or [] if results else []
        return bool(attempts) and bool(attempts[-1].get("podUID"))

    await wait_for(pinned, what="the attempt to pin its running pod")
    await asyncio.sleep(3)
    assert (await kube.get(RUNS, "r", namespace=namespace))["status"]["phase"] == "Running"
    await label(kube, namespace, None)
    run = await terminal_run(kube, namespace, "r", timeout=30)
    assert run["status"]["phase"] == "Error"
    assert admitted(run)["reason"] == "NamespaceNotServed"
    assert SELECTOR in admitted(run)["message"]
    for name in nodes:
        node = await kube.get(NODES, name)
        assert not node["spec"].get("unschedulable"), name
        assert names.CORDON_OWNER not in (node["metadata"].get("annotations") or {}), name
    pods = (await kube.list(PODS, namespace=namespace))["items"]
    assert not [p for p in pods if (p.get("status") or {}).get("phase") == "Running"]
    assert (await kube.get(RUNS, "r", namespace=namespace))["status"]["phase"] == "Error"


async def test_the_manager_binary_serves_by_label_as_the_chart_runs_it(
    manager_by_label: SelectorManager, kube: ApiServerClient, namespace: str, sim_nodes: Any
) -> None:
    nodes = sim_nodes(count=1).names
    await apply_profile(kube, namespace, {"t": custom("echo bw=12", thresholds=GATE)})
    await create_run(kube, namespace, "unlabelled", nodes)
    refused = await terminal_run(kube, namespace, "unlabelled")
    assert admitted(refused)["reason"] == "NamespaceNotServed"
    await label(kube, namespace, "true")
    await create_run(kube, namespace, "labelled", nodes)
    run = await terminal_run(kube, namespace, "labelled")
    assert run["status"]["phase"] == "Passed", run["status"]
    assert manager_by_label.exited() is None
    [serving] = [e for e in manager_by_label.log_lines() if e["event"] == "serving BurnInRuns"]
    assert serving["namespace_selector"] == SELECTOR
