"""Through a real apiserver: a tcp-baseline Pair on two simulated nodes finds its peer by
the headless Service's names, gated on the server's readiness, with real bytes."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml

from glimmer.testing import ControlPlane
from glimmer.testing.pytest_plugin import SimNodesFactory
from tests.integration.controlplane._waiting import eventually, get_json, wait_for_phase

pytestmark = pytest.mark.controlplane

REPO = Path(__file__).resolve().parents[3]
IMAGE = "ghcr.io/baldwinspc/glimmer-burnin-tcp-baseline:v0.0.0-test"


def side(role: str, *, node: str, peer: str, peer_node: str, service: str) -> dict[str, Any]:
    env = {
        "BURNIN_ROLE": role,
        "BURNIN_PEER_HOST": peer,
        "BURNIN_PEER_NODE": peer_node,
        "BURNIN_TCP_BASELINE_SECONDS": "0.5",
        "BURNIN_TCP_BASELINE_CONNECT_SECONDS": "10",
        "BURNIN_DURATION_SECONDS": "30",
    }
    container: dict[str, Any] = {
        "name": "runner",
        "image": IMAGE,
        "env": [{"name": k, "value": v} for k, v in env.items()],
    }
    if role == "server":
        container["readinessProbe"] = {"tcpSocket": {"port": 18520}, "periodSeconds": 1}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"tcp-{role}", "labels": {"pair": service}},
        "spec": {
            "hostname": role,
            "subdomain": service,
            "restartPolicy": "Never",
            "nodeSelector": {"kubernetes.io/hostname": node},
            "terminationGracePeriodSeconds": 5,
            "activeDeadlineSeconds": 120,
            "containers": [container],
        },
    }


def test_names_a_pair_on_two_sim_nodes_resolves_its_service_names_and_passes(
    control_plane: ControlPlane, sim_nodes: SimNodesFactory, namespace: str
) -> None:
    # This checkout's runners, whatever the venv's editable install points at.
    nodes = sim_nodes(2, extra_args=["--env", f"PYTHONPATH={REPO}"])
    first, second = nodes.names
    service = f"bp-{uuid.uuid4().hex[:6]}"
    fqdn = f"{{}}.{service}.{namespace}.svc"
    documents = [
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": service},
            "spec": {
                "clusterIP": "None",
                "publishNotReadyAddresses": True,
                "selector": {"pair": service},
            },
        },
        side("server", node=first, peer=fqdn.format("client"), peer_node=second, service=service),
    ]

    def apply(*docs: dict[str, Any]) -> None:
        control_plane.kubectl(
            "apply", f"--namespace={namespace}", "-f", "-", input=yaml.safe_dump_all(docs)
        )

    apply(*documents)

    def server_ready() -> dict[str, Any] | None:
        pod = get_json(control_plane, "pod", "tcp-server", f"--namespace={namespace}")
        conditions = pod.get("status", {}).get("conditions") or []
        ready = any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)
        return pod if ready else None

    try:
        server = eventually(server_ready, timeout=60, what="the tcp-baseline server to turn Ready")
    except AssertionError:
        logs = sorted(nodes.work_dir.glob("state/pods/*/*"))
        raise AssertionError(
            nodes.log()[-3000:] + "".join(f"\n{p}: {p.read_text()[-1500:]}" for p in logs)
        ) from None
    apply(side("client", node=second, peer=fqdn.format("server"), peer_node=first, service=service))
    for name in ("tcp-client", "tcp-server"):
        done = wait_for_phase(control_plane, namespace=namespace, name=name, timeout=90)
        assert done["status"]["phase"] == "Succeeded", done["status"]
    server_log = control_plane.kubectl("logs", "tcp-server", f"--namespace={namespace}").stdout
    client_log = control_plane.kubectl("logs", "tcp-client", f"--namespace={namespace}").stdout
    assert f"listening on {server['status']['podIP']}:18520" in server_log
    assert client_log.rstrip().endswith("TCP_BASELINE_PASS")
    assert "provenance=sim" in client_log and "tcpTestInterface=lo" in client_log
    sent = next(ln for ln in client_log.splitlines() if ln.startswith("tcpBytesSent="))
    received = next(ln for ln in server_log.splitlines() if ln.startswith("tcpBytesReceived="))
    assert sent.split("=")[1] == received.split("=")[1] != "0"
