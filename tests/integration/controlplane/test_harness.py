"""The harness itself: binaries are found or the failure says how to build them, and no
process it starts can outlive the test run, even one killed with SIGKILL."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from glimmer.testing import ControlPlane, _process, find_assets
from glimmer.testing._process import surviving

from ._waiting import eventually


@pytest.mark.controlplane
def test_control_plane_children_die_when_the_test_process_is_sigkilled(tmp_path: Path) -> None:
    find_assets()  # fails (not skips) with instructions when the binaries are missing
    report = tmp_path / "pids.json"
    script = textwrap.dedent(
        f"""
        import json, time
        from glimmer.testing import ControlPlane
        from glimmer.testing.sim_nodes import SimNodes
        plane = ControlPlane()
        plane.start()
        sim = SimNodes(kubeconfig=plane.kubeconfig_path, work_dir=plane.work_dir, count=1)
        sim.start()
        open({str(report)!r}, "w").write(json.dumps(plane.pids + [sim.pid]))
        time.sleep(600)
        """
    )
    parent = subprocess.Popen([sys.executable, "-c", script])
    try:
        pids = eventually(
            lambda: json.loads(report.read_text()) if report.exists() else None,
            timeout=90,
            what="the child test process to start its control plane",
        )
        assert len(pids) == 3
        assert surviving(set(pids)) == pids
    finally:
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait()
    deadline = time.monotonic() + 10
    while surviving(set(pids)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert surviving(set(pids)) == []


@pytest.mark.controlplane
def test_deleting_a_namespace_deletes_its_objects_though_no_controller_runs(
    control_plane: ControlPlane,
) -> None:
    control_plane.kubectl("create", "namespace", "doomed-ns")
    control_plane.kubectl("create", "configmap", "leftover", "--namespace=doomed-ns")
    control_plane.kubectl("run", "leftover", "--image=example.invalid/x", "--namespace=doomed-ns")
    control_plane.delete_namespace("doomed-ns")
    everywhere = control_plane.kubectl("get", "configmaps,pods", "--all-namespaces", "-o", "name")
    assert "leftover" not in everywhere.stdout


@pytest.mark.controlplane
def test_a_port_taken_between_choosing_and_binding_is_retried_with_another(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    find_assets()
    with socket.create_server(("127.0.0.1", 0)) as taken:
        busy = taken.getsockname()[1]
        real = _process.free_port
        handed_out: list[int] = []

        def racy() -> int:
            port = busy if not handed_out else real()
            handed_out.append(port)
            return port

        monkeypatch.setattr(_process, "free_port", racy)
        with ControlPlane() as plane:
            assert plane.kubectl("get", "namespace", "default").returncode == 0
            assert str(busy) not in plane.etcd_url
        assert handed_out[0] == busy
