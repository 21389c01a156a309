"""I2 against a real apiserver: a manager whose Lease namespace is missing."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import pytest

from glimmer.testing import ManagerProcess

pytestmark = [pytest.mark.controlplane, pytest.mark.timeout(180)]


def wait_for(probe: Callable[[], Any], *, seconds: float) -> Any:
    deadline = time.monotonic() + seconds
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"not reached within {seconds}s")
        time.sleep(0.2)


def test_I2_a_missing_lease_namespace_is_explained_then_readiness_follows_once_created(
    control_plane: Any, namespace: str, manager_process: Callable[..., ManagerProcess]
) -> None:
    lease_ns = f"{namespace}-lease"[:63]
    manager = manager_process(
        ready=False,
        leader_elect=True,
        leader_election_namespace=lease_ns,
        leader_election_id="guidance",
    )
    try:

        def blocked() -> dict[str, Any] | None:
            status, body = manager.get("/readyz")
            if status != 503:
                return None
            state: dict[str, Any] = json.loads(body)
            return state if any("leader election" in r for r in state["not_ready"]) else None

        state = wait_for(blocked, seconds=60)
        reason = next(r for r in state["not_ready"] if r.startswith("leader election"))
        assert f'lease namespace "{lease_ns}" not found' in reason
        assert f"kubectl create namespace {lease_ns}" in reason
        assert "--leader-election-namespace" in reason
        errors = [
            line for line in manager.log_lines()
            if line["level"] == "error" and line["event"] == "leader election cannot proceed"
        ]  # fmt: skip
        assert errors and f"kubectl create namespace {lease_ns}" in errors[0]["reason"]

        control_plane.kubectl("create", "namespace", lease_ns)
        manager.wait_ready(timeout=60)
        _, body = manager.get("/readyz")
        ready = json.loads(body)
        assert ready["leader"] is True and ready["not_ready"] == []
        lines = manager.log_lines()
        assert any(
            line["event"] == "leader election unblocked" and line["level"] == "info"
            for line in lines
        )
        # Retries were many, the error line few (bounded, not one per retry).
        assert len([ln for ln in lines if ln["level"] == "error"]) <= 2
    finally:
        manager.stop()
        control_plane.kubectl("delete", "namespace", lease_ns, "--wait=false", check=False)
