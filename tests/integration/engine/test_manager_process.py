"""`glimmer manager` as a separate process: signals, exit status, probes, logs."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.controlplane, pytest.mark.timeout(180)]

GLIMMER = [str(Path(sys.executable).parent / "glimmer")]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def http_get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()
    except OSError:
        return 0, ""


def lease_holder(control_plane: Any, namespace: str, name: str) -> str | None:
    result = control_plane.kubectl("get", "lease", name, "-n", namespace, "-o", "json", check=False)
    if result.returncode != 0:
        return None
    return str(json.loads(result.stdout)["spec"].get("holderIdentity") or "")


def start_manager(
    control_plane: Any, namespace: str, tmp_path: Path
) -> tuple[subprocess.Popen[bytes], int, int, Path]:
    metrics, health = free_port(), free_port()
    log_path = tmp_path / "manager.log"
    process = subprocess.Popen(
        [
            *GLIMMER,
            "manager",
            f"--kubeconfig={control_plane.kubeconfig_path}",
            f"--metrics-bind-address=127.0.0.1:{metrics}",
            f"--health-probe-bind-address=127.0.0.1:{health}",
            "--leader-elect",
            f"--leader-election-namespace={namespace}",
            "--leader-election-id=proc",
        ],
        stdout=subprocess.DEVNULL,
        stderr=log_path.open("wb"),
        env={**os.environ, "KUBECONFIG": ""},
    )
    return process, metrics, health, log_path


def wait_until(predicate: Any, *, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"not reached within {seconds}s")
        time.sleep(0.1)


def json_lines(log_path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log_path.read_text().splitlines() if line.strip()]


def test_sigterm_drains_releases_the_lease_and_exits_0_within_30s(
    control_plane: Any, namespace: str, tmp_path: Path
) -> None:
    process, metrics, health, log_path = start_manager(control_plane, namespace, tmp_path)
    try:
        wait_until(lambda: http_get(f"http://127.0.0.1:{health}/readyz")[0] == 200, seconds=60)
        wait_until(lambda: bool(lease_holder(control_plane, namespace, "proc")), seconds=30)
        assert http_get(f"http://127.0.0.1:{health}/healthz") == (200, "ok")
        status, body = http_get(f"http://127.0.0.1:{health}/readyz")
        assert json.loads(body)["leader"] is True
        status, text = http_get(f"http://127.0.0.1:{metrics}/metrics")
        assert status == 200
        assert 'glimmer_leader_election_status{name="proc"} 1.0' in text
        assert "glimmer_build_info{" in text
        began = time.monotonic()
        process.send_signal(signal.SIGTERM)
        code = process.wait(timeout=35)
        took = time.monotonic() - began
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert code == 0
    assert took < 30.0
    print(f"SIGTERM to exit: {took:.2f} s")
    assert lease_holder(control_plane, namespace, "proc") == "", "lease released on the way out"
    lines = json_lines(log_path)  # every line is JSON: this raises otherwise
    assert any(line["event"] == "released leader lease" for line in lines)


def test_a_stolen_lease_makes_the_manager_exit_non_zero(
    control_plane: Any, namespace: str, tmp_path: Path
) -> None:
    process, _, _, log_path = start_manager(control_plane, namespace, tmp_path)
    try:
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
        code = process.wait(timeout=40)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert code == 1
    lines = json_lines(log_path)
    assert any("renew" in line["event"] for line in lines)
