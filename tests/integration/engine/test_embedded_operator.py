"""`glimmer.testing.EmbeddedOperator` and `ManagerProcess` against the bundled control plane.

Both run what `glimmer manager` ships (`operator_registrations`); the docs/testing.md
example is run here exactly as a user would run it.
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from glimmer.controllers.kit.names import RUNS
from glimmer.engine import LEASES, NODES, ApiError, ManagerOptions, NotCachedError
from glimmer.testing import EmbeddedOperator, ManagerProcess, OperatorFailedError

pytestmark = [pytest.mark.controlplane, pytest.mark.timeout(240)]

REPO = Path(__file__).resolve().parents[3]
EXAMPLE_MARKER = "<!-- example: embedded-operator -->"


def controllers_of(metrics_text: str) -> set[str]:
    return {
        sample.labels["controller"]
        for family in text_string_to_metric_families(metrics_text)
        if family.name == "controller_runtime_max_concurrent_reconciles"
        for sample in family.samples
    }


async def eventually(check: Callable[[], Any], *, seconds: float = 30.0) -> Any:
    deadline = asyncio.get_running_loop().time() + seconds
    while True:
        try:
            result = await check()
        except (ApiError, NotCachedError):
            result = None
        if result:
            return result
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("not reached in time")
        await asyncio.sleep(0.2)


async def test_entering_waits_for_synced_caches_and_running_controllers(
    control_plane: Any, glimmer_crds: None
) -> None:
    operator = EmbeddedOperator(kubeconfig=control_plane.kubeconfig_path)
    async with operator:
        assert operator.running
        assert operator.manager.caches_synced()
        assert operator.manager.controllers_running
        assert [c.name for c in operator.manager.controllers] == [
            "burninrun",
            "nodefingerprint",
            "burninschedule",
        ]
        assert all(c.running for c in operator.manager.controllers)
    assert not operator.running
    with pytest.raises(RuntimeError, match="not running"):
        _ = operator.client
    await operator.start()  # a restart is a stop then a start
    assert operator.starts == 2
    await operator.stop()


async def test_the_operators_cache_holds_nodes_with_only_the_cordons_field_owners(
    control_plane: Any, glimmer_crds: None
) -> None:
    name = f"reader-{uuid.uuid4().hex[:6]}"
    async with EmbeddedOperator(kubeconfig=control_plane.kubeconfig_path) as operator:
        # Server-side apply always records managedFields on the stored object.
        await operator.client.apply(
            NODES,
            {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"a": "b"}}},
        )
        try:
            cached = await eventually(lambda: operator.readers.cached.get(NODES, name))
            live = await operator.readers.live.get(NODES, name)
            assert "managedFields" in live["metadata"]
            # The ingest transform keeps of managedFields only who owns spec.unschedulable
            # (the release reads it, E12): nobody here.
            assert cached["metadata"].get("managedFields", []) == []
            assert cached["metadata"]["uid"] == live["metadata"]["uid"]
            # The rest is kept (the fingerprint controller may already have added its
            # verdict label: the node's own labels must be there, unchanged).
            assert cached["metadata"]["labels"]["a"] == "b"
        finally:
            await operator.client.delete(NODES, name)


async def test_an_operator_that_died_fails_the_test_at_stop(
    control_plane: Any, glimmer_crds: None, namespace: str
) -> None:
    """A lost lease stops the manager; the harness must not let the test pass over it."""
    operator = EmbeddedOperator(
        kubeconfig=control_plane.kubeconfig_path,
        manager_options=ManagerOptions(
            leader_elect=True,
            leader_election_namespace=namespace,
            leader_election_id="embedded",
            lease_duration=3.0,
            renew_deadline=2.0,
            retry_period=0.25,
            metrics_bind_address="0",
            health_probe_bind_address="0",
        ),
    )
    await operator.start()
    await operator.client.patch(
        LEASES,
        "embedded",
        {"spec": {"holderIdentity": "thief", "leaseDurationSeconds": 3600}},
        namespace=namespace,
    )

    async def died() -> bool:
        return not operator.running

    await eventually(died, seconds=20)
    with pytest.raises(OperatorFailedError, match="LeadershipLost"):
        await operator.stop()


async def test_the_binary_and_the_embedded_operator_run_the_same_controllers_and_log_the_run(
    control_plane: Any,
    namespace: str,
    engine_client: Any,
    manager_process: Callable[..., ManagerProcess],
) -> None:
    async with EmbeddedOperator(kubeconfig=control_plane.kubeconfig_path) as operator:
        embedded = {c.name for c in operator.manager.controllers}
    manager = manager_process(extra_args=["--log-level=debug"])
    status, text = manager.get("/metrics")
    assert status == 200
    assert controllers_of(text) == embedded == {"burninrun", "nodefingerprint", "burninschedule"}
    # A run whose profile does not exist yet waits (E2), reconciled again meanwhile.
    await engine_client.create(
        RUNS,
        {
            "apiVersion": "burnin.glimmer.ai/v1alpha1",
            "kind": "BurnInRun",
            "metadata": {"name": "logged"},
            "spec": {"profileRef": "absent", "target": {"nodeNames": ["n"]}},
        },
        namespace=namespace,
    )

    def run_lines() -> list[dict[str, Any]]:
        return [
            line
            for line in manager.log_lines()
            if line.get("controller") == "burninrun" and line.get("key") == f"{namespace}/logged"
        ]

    await eventually(lambda: asyncio.sleep(0, result=run_lines()))
    for line in run_lines():
        assert (line["namespace"], line["run"]) == (namespace, "logged")


def test_the_docs_testing_example_runs_as_written(tmp_path: Path) -> None:
    """docs/testing.md's example, extracted and run by pytest as a user's test file."""
    text = (REPO / "docs" / "testing.md").read_text()
    after = text.split(EXAMPLE_MARKER, 1)[1]
    block = re.search(r"```python\n(.*?)```", after, re.S)
    assert block is not None, "the marked example has no python block"
    example = tmp_path / "test_example.py"
    example.write_text(block.group(1))
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "glimmer.testing.pytest_plugin", "-q", str(example)],
        check=False,
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=200,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "1 passed" in result.stdout
