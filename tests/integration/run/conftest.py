"""Run-controller tests: real apiserver, simulated kubelets, the operator in-process.

The operator is :class:`glimmer.testing.EmbeddedOperator`, wired as ``glimmer manager``
wires it, with short timings so error paths settle in seconds; it serves every
namespace because each test makes its own.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
import pytest_asyncio

from glimmer.controllers.kit.names import PROFILES, RUNS, TESTS
from glimmer.controllers.run.context import RunOptions
from glimmer.engine import ApiServerClient
from glimmer.testing import EmbeddedOperator, wait_for_verdict

#: What the run tests' operator is: the public embedded operator (restart = stop + start).
Operator = EmbeddedOperator

FAST_RUN_OPTIONS = RunOptions(
    operator_namespace="glimmer-system",
    image_pull_grace_seconds=3,
    requeue_unstarted_seconds=2,
    requeue_idle_seconds=5,
)


@pytest.fixture(scope="session")
def run_crds(glimmer_crds: None) -> None:
    """The BurnIn CRDs, installed once per session (the plugin's ``glimmer_crds``)."""


@pytest_asyncio.fixture(loop_scope="function")
async def operator(control_plane: Any, run_crds: None) -> AsyncIterator[EmbeddedOperator]:
    op = EmbeddedOperator(
        kubeconfig=control_plane.kubeconfig_path,
        served_namespaces=None,
        run_options=FAST_RUN_OPTIONS,
    )
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
    """The run once terminal with its finalizer gone (``glimmer.testing.wait_for_verdict``)."""
    return await wait_for_verdict(client, namespace=namespace, name=name, timeout=timeout)
