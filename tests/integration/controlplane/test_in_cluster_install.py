"""The shipped install runs in the cluster, not beside it (rule I37).

A control plane with kube-controller-manager (Deployments get pods, namespaces their
``default`` ServiceAccount and ``kube-root-ca.crt``, pods the projected token volume) and
two simulated GPU nodes. The chart, then ``kubectl apply -k manifests/default``, is
installed as a user would; the simulated kubelet runs the manager image as ``glimmer
manager`` with that pod's ServiceAccount token and the install's flags and probes
(``glimmer.sim.incluster``); no kubeconfig reaches it. The test waits for the Deployment
to be Available and for a BurnInRun to end Passed through that manager. A permission the
install's RBAC lacks fails the run or the Deployment here, as in production.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from glimmer.testing import ControlPlane, SimNodes
from tests.unit.test_chart_render import CHART, helm_binary

pytestmark = pytest.mark.controlplane

REPO = Path(__file__).resolve().parents[3]
EXAMPLE = REPO / "glimmer" / "examples" / "acceptance.yaml"
RUNS_NAMESPACE = "glimmer-runs"
_TERMINAL = frozenset({"Passed", "Failed", "Error", "Cancelled"})


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[tuple[ControlPlane, SimNodes]]:
    with (
        ControlPlane(controller_manager=True, work_dir=tmp_path / "plane") as plane,
        SimNodes(
            kubeconfig=plane.kubeconfig_path,
            work_dir=tmp_path,
            count=2,
            tls=plane.kubelet_tls,
        ) as nodes,
    ):
        yield plane, nodes


def _helm(plane: ControlPlane, *args: str) -> None:
    env = {**os.environ, "KUBECONFIG": str(plane.kubeconfig_path)}
    result = subprocess.run(
        [helm_binary(), *args], capture_output=True, text=True, env=env, timeout=300, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr


def _wait_available(plane: ControlPlane, namespace: str, deployment: str) -> None:
    result = plane.kubectl(
        "-n",
        namespace,
        "wait",
        f"deployment/{deployment}",
        "--for=condition=Available",
        "--timeout=100s",
        check=False,
    )
    if result.returncode != 0:
        pods = plane.kubectl("-n", namespace, "get", "pods", "-o", "yaml", check=False).stdout
        pytest.fail(f"{deployment} never became Available: {result.stderr}\npods:\n{pods}")


def _manager_pod(plane: ControlPlane, namespace: str) -> dict[str, Any]:
    pods = json.loads(plane.kubectl("-n", namespace, "get", "pods", "-o", "json").stdout)["items"]
    # The manager's namespace holds nothing else (runner pods go to the served namespace).
    assert len(pods) == 1, [p["metadata"]["name"] for p in pods]
    return dict(pods[0])


def _run_to_verdict(plane: ControlPlane, nodes: SimNodes, manager_namespace: str) -> None:
    """The acceptance example on both nodes reaches Passed through the in-cluster manager."""
    plane.kubectl("-n", RUNS_NAMESPACE, "apply", "-f", str(EXAMPLE))
    run = {
        "apiVersion": "burnin.glimmer.ai/v1alpha1",
        "kind": "BurnInRun",
        "metadata": {"name": "in-cluster", "namespace": RUNS_NAMESPACE},
        "spec": {
            "profileRef": "node-acceptance",
            "target": {"nodeNames": nodes.names},
            "maxConcurrentNodes": len(nodes.names),
        },
    }
    plane.kubectl("apply", "-f", "-", input=yaml.safe_dump(run))
    deadline = time.monotonic() + 240
    status: dict[str, Any] = {}
    while time.monotonic() < deadline:
        found = json.loads(
            plane.kubectl(
                "-n", RUNS_NAMESPACE, "get", "burninrun", "in-cluster", "-o", "json"
            ).stdout
        )
        status = found.get("status") or {}
        if status.get("phase") in _TERMINAL and not found["metadata"].get("finalizers"):
            break
        time.sleep(1)
    pod = _manager_pod(plane, manager_namespace)
    logs = plane.kubectl(
        "-n", manager_namespace, "logs", pod["metadata"]["name"], "--tail=60", check=False
    ).stdout
    assert status.get("phase") == "Passed", f"status: {status}\nmanager log tail:\n{logs}"
    assert status.get("provenance") == "sim"
    # It was this pod, as its ServiceAccount: the token the kubelet mounted is the only
    # credential it had (no kubeconfig, no admin certificate).
    volumes = [v["name"] for v in pod["spec"].get("volumes") or []]
    assert any(name.startswith("kube-api-access-") for name in volumes), volumes


def test_the_chart_installs_a_manager_that_runs_in_the_cluster(
    cluster: tuple[ControlPlane, SimNodes],
) -> None:
    plane, nodes = cluster
    _helm(plane, "install", "glimmer", str(CHART), "-n", "glimmer-system", "--create-namespace")
    _wait_available(plane, "glimmer-system", "glimmer-manager")
    _run_to_verdict(plane, nodes, "glimmer-system")
    lease = json.loads(plane.kubectl("-n", "glimmer-system", "get", "leases", "-o", "json").stdout)[
        "items"
    ]
    # Leader election ran through the install's Role (leases in its own namespace).
    assert [
        item["spec"].get("holderIdentity") for item in lease if item["spec"].get("holderIdentity")
    ]


def test_kustomize_default_installs_a_manager_that_runs_in_the_cluster(
    cluster: tuple[ControlPlane, SimNodes],
) -> None:
    plane, nodes = cluster
    plane.kubectl("apply", "-k", str(REPO / "manifests" / "default"))
    _wait_available(plane, "glimmer-system", "glimmer-manager")
    _run_to_verdict(plane, nodes, "glimmer-system")
