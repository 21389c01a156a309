"""`glimmer manager` as a separate process: signals, exit status, probes, logs.

Started through `glimmer.testing.ManagerProcess` (the plugin's `manager_process`
fixture), so the session's process-leak check covers it like every other child.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import pytest

from glimmer.testing import ManagerProcess, _process

pytestmark = [pytest.mark.controlplane, pytest.mark.timeout(180)]


def lease_holder(control_plane: Any, namespace: str, name: str) -> str | None:
    result = control_plane.kubectl("get", "lease", name, "-n", namespace, "-o", "json", check=False)
    if result.returncode != 0:
        return None
    return str(json.loads(result.stdout)["spec"].get("holderIdentity") or "")


def wait_until(predicate: Any, *, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"not reached within {seconds}s")
        time.sleep(0.1)


def elected(factory: Callable[..., ManagerProcess], namespace: str) -> ManagerProcess:
    return factory(
        ready=False,
        leader_elect=True,
        leader_election_namespace=namespace,
        leader_election_id="proc",
    )


def test_sigterm_drains_releases_the_lease_and_exits_0_within_30s(
    control_plane: Any, namespace: str, manager_process: Callable[..., ManagerProcess]
) -> None:
    manager = elected(manager_process, namespace)
    manager.wait_ready()
    wait_until(lambda: bool(lease_holder(control_plane, namespace, "proc")), seconds=30)
    assert manager.get("/healthz") == (200, "ok")
    _, body = manager.get("/readyz")
    assert json.loads(body)["leader"] is True
    status, text = manager.get("/metrics")
    assert status == 200
    assert 'glimmer_leader_election_status{name="proc"} 1.0' in text
    assert "glimmer_build_info{" in text
    began = time.monotonic()
    code = manager.stop()
    took = time.monotonic() - began
    assert code == 0
    assert took < 30.0
    print(f"SIGTERM to exit: {took:.2f} s")
    assert lease_holder(control_plane, namespace, "proc") == "", "lease released on the way out"
    lines = manager.log_lines()  # every line is JSON: this raises otherwise
    assert any(line["event"] == "released leader lease" for line in lines)


def test_a_stolen_lease_makes_the_manager_exit_non_zero(
    control_plane: Any, namespace: str, manager_process: Callable[..., ManagerProcess]
) -> None:
    manager = elected(manager_process, namespace)
    wait_until(lambda: bool(lease_holder(control_plane, namespace, "proc")), seconds=60)
    control_plane.kubectl(
        "patch",
        "lease",
        "proc",
        "-n",
        namespace,
        "--type=merge",
        "-p",
        json.dumps({"spec": {"holderIdentity": "thief", "leaseDurationSeconds": 3600}}),
    )
    code = manager.wait(timeout=40)
    assert code == 1
    assert any("renew" in line["event"] for line in manager.log_lines())


def test_the_manager_process_counts_for_the_plugins_leak_check(
    manager_process: Callable[..., ManagerProcess],
) -> None:
    manager = manager_process(ready=False)
    assert manager.pid in _process.SPAWNED
    manager.kill()
    assert manager.exited() is None and manager.pid is None
