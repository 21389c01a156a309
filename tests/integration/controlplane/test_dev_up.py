"""``glimmer dev up`` gives a usable cluster and leaves nothing behind when stopped."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from glimmer.testing import find_assets
from glimmer.testing._process import surviving

from ._waiting import eventually

pytestmark = pytest.mark.controlplane


def _children(pid: int) -> set[int]:
    found: set[int] = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[1]) == pid:
            found.add(int(stat.parent.name))
    return found


def test_dev_up_serves_three_ready_sim_nodes_and_stops_cleanly_on_sigterm(
    tmp_path: Path,
) -> None:
    kubectl = find_assets().kubectl
    kubeconfig = tmp_path / "dev.kubeconfig"
    command = [sys.executable, "-c", "from glimmer.cli import main; main()", "dev", "up"]
    up = subprocess.Popen(
        [*command, "--sim-nodes=3", f"--kubeconfig={kubeconfig}"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:

        def ready_nodes() -> list[str]:
            listing = subprocess.run(
                [str(kubectl), f"--kubeconfig={kubeconfig}", "get", "nodes", "-o", "json"],
                capture_output=True,
                text=True,
                check=False,
            )
            if listing.returncode != 0:
                return []
            return [
                n["metadata"]["name"]
                for n in json.loads(listing.stdout)["items"]
                if any(
                    c["type"] == "Ready" and c["status"] == "True"
                    for c in n["status"]["conditions"]
                )
            ]

        nodes = eventually(
            lambda: sorted(ready_nodes()) if kubeconfig.exists() else None,
            timeout=90,
            what="dev up to serve Ready nodes",
        )
        assert nodes == ["sim-0", "sim-1", "sim-2"]
        children = _children(up.pid)
        assert len(children) >= 3  # etcd, kube-apiserver, simulator
    finally:
        up.send_signal(signal.SIGTERM)
        output, _ = up.communicate(timeout=60)
    assert up.returncode == 0, output
    assert "export KUBECONFIG=" in output
    assert surviving(children) == []
