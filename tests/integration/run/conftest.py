"""Run-controller tests: real apiserver, simulated kubelets, the manager in-process."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from glimmer.controllers.interlock import Interlock
from glimmer.controllers.run.kube import PROFILES, RUNS, TESTS
from glimmer.controllers.run.reconciler import RunOptions
from glimmer.controllers.run.setup import reaper_controller, run_controller
from glimmer.engine import ApiServerClient, ClientOptions, EngineMetrics, Manager, ManagerOptions
from glimmer.engine.metrics import RunMetrics

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="session")
def run_crds(control_plane: Any) -> None:
    control_plane.kubectl(
        "apply",
        "--server-side",
        "--force-conflicts",
        "-f",
        str(REPO / "manifests" / "crd" / "burnin.glimmer.ai_burninruns.yaml"),
        "-f",
        str(REPO / "manifests" / "crd" / "burnin.glimmer.ai_burninprofiles.yaml"),
        "-f",
        str(REPO / "manifests" / "crd" / "burnin.glimmer.ai_burnintests.yaml"),
        "-f",
        str(REPO / "manifests" / "crd" / "burnin.glimmer.ai_nodefingerprints.yaml"),
    )
    control_plane.kubectl(
        "wait",
        "--for=condition=Established",
        "--timeout=60s",
        "crd/burninruns.burnin.glimmer.ai",
        "crd/burninprofiles.burnin.glimmer.ai",
        "crd/burnintests.burnin.glimmer.ai",
    )


class Operator:
    """The manager as a task that a test can stop and start again (a restart)."""

    def __init__(self, kubeconfig: str) -> None:
        self.kubeconfig = kubeconfig
        self.client: ApiServerClient | None = None
        self._task: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None
        self.metrics = EngineMetrics()

    async def start(self) -> None:
        self.client = await ApiServerClient.connect(
            self.kubeconfig, options=ClientOptions(qps=200, burst=400)
        )
        self.metrics = EngineMetrics()
        manager = Manager(
            self.client,
            metrics=self.metrics,
            options=ManagerOptions(
                leader_elect=False, metrics_bind_address="0", health_probe_bind_address="0"
            ),
            controllers=[
                run_controller(
                    client=self.client,
                    namespace=None,
                    operator_namespace="glimmer-system",
                    interlock=Interlock(),
                    metrics=RunMetrics(self.metrics.registry),
                    options=RunOptions(
                        operator_namespace="glimmer-system",
                        image_pull_grace_seconds=3,
                        requeue_unstarted_seconds=2,
                        requeue_idle_seconds=5,
                    ),
                ),
                reaper_controller(client=self.client),
            ],
        )
        self._stop = asyncio.Event()
        self._task = asyncio.create_task(manager.run(self._stop))

    async def stop(self, *, crash: bool = False) -> None:
        if self._task is not None:
            if crash:
                self._task.cancel()
            elif self._stop is not None:
                self._stop.set()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
            self._task = None
        if self.client is not None:
            await self.client.close()
            self.client = None


@pytest_asyncio.fixture(loop_scope="function")
async def operator(control_plane: Any, run_crds: None) -> AsyncIterator[Operator]:
    op = Operator(str(control_plane.kubeconfig_path))
    await op.start()
    try:
        yield op
    finally:
        await op.stop()


@pytest_asyncio.fixture(loop_scope="function")
async def kube(control_plane: Any, run_crds: None) -> AsyncIterator[ApiServerClient]:
    client = await ApiServerClient.connect(str(control_plane.kubeconfig_path))
    try:
        yield client
    finally:
        await client.close()


def custom(command: str, **extra: Any) -> dict[str, Any]:
    return {
        "kind": "custom",
        "scope": "Node",
        "durationSeconds": 20,
        "runner": {"image": "example.com/custom:1", "command": ["sh", "-c", command]},
        **extra,
    }


async def apply_profile(
    client: ApiServerClient, namespace: str, tests: dict[str, dict[str, Any]], **profile: Any
) -> None:
    for name, spec in tests.items():
        await client.create(
            TESTS,
            {
                "apiVersion": "burnin.glimmer.ai/v1alpha1",
                "kind": "BurnInTest",
                "metadata": {"name": name},
                "spec": spec,
            },
            namespace=namespace,
        )
    await client.create(
        PROFILES,
        {
            "apiVersion": "burnin.glimmer.ai/v1alpha1",
            "kind": "BurnInProfile",
            "metadata": {"name": "prof"},
            "spec": {"tests": [{"testRef": n} for n in tests], **profile},
        },
        namespace=namespace,
    )


async def create_run(
    client: ApiServerClient, namespace: str, name: str, nodes: list[str], **spec: Any
) -> dict[str, Any]:
    return await client.create(
        RUNS,
        {
            "apiVersion": "burnin.glimmer.ai/v1alpha1",
            "kind": "BurnInRun",
            "metadata": {"name": name},
            "spec": {
                "profileRef": "prof",
                "target": {"nodeNames": nodes},
                "maxConcurrentNodes": 3,
                **spec,
            },
        },
        namespace=namespace,
    )


async def wait_for(
    check: Callable[[], Awaitable[Any]], *, timeout: float = 60.0, what: str = "condition"
) -> Any:
    deadline = asyncio.get_running_loop().time() + timeout
    last: Any = None
    while asyncio.get_running_loop().time() < deadline:
        last = await check()
        if last:
            return last
        await asyncio.sleep(0.3)
    raise AssertionError(f"timed out waiting for {what}; last={last!r}")


async def terminal_run(
    client: ApiServerClient, namespace: str, name: str, timeout: float = 90.0
) -> dict[str, Any]:
    async def check() -> dict[str, Any] | None:
        run = await client.get(RUNS, name, namespace=namespace)
        phase = (run.get("status") or {}).get("phase")
        done = phase in ("Passed", "Failed", "Error", "Cancelled") and not (
            run["metadata"].get("finalizers")
        )
        return run if done else None

    result: dict[str, Any] = await wait_for(check, timeout=timeout, what=f"run {name} terminal")
    return result
