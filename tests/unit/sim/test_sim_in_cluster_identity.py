"""I37: what the simulated kubelet gives a pod so an installed manager runs as itself.

The ServiceAccount volume is written where the pod's process can read it (token from a
TokenRequest bound to the pod, the CA from ``kube-root-ca.crt``, the namespace from the
downward API), every container is told where its mounts landed, the ``kubernetes``
Service's variables name the apiserver, the manager image runs ``glimmer`` through the
in-cluster shim, and ``:PORT`` binds the pod's own address.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from kubernetes_asyncio.config import incluster_config

from glimmer.cli import manager as manager_command
from glimmer.sim.environment import ContainerConfigError
from glimmer.sim.images import ImageMap
from glimmer.sim.incluster import bind_to_pod, point_at_mounts
from glimmer.sim.kubelet import service_env
from glimmer.sim.volumes import MOUNTS_ENV, SERVICE_ACCOUNT_MOUNT, materialize, mounts_env

JSON = dict[str, Any]

#: The volume the ServiceAccount admission plugin adds to every pod.
KUBE_API_ACCESS: JSON = {
    "name": "kube-api-access-x1y2z",
    "projected": {
        "defaultMode": 420,
        "sources": [
            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
            {
                "configMap": {
                    "name": "kube-root-ca.crt",
                    "items": [{"key": "ca.crt", "path": "ca.crt"}],
                }
            },
            {
                "downwardAPI": {
                    "items": [
                        {
                            "path": "namespace",
                            "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"},
                        }
                    ]
                }
            },
        ],
    },
}


def _pod(*volumes: JSON, account: str = "glimmer-manager") -> JSON:
    return {
        "metadata": {"name": "glimmer-manager-abc", "namespace": "glimmer-system", "uid": "u1"},
        "spec": {
            "serviceAccountName": account,
            "volumes": list(volumes),
            "containers": [
                {
                    "name": "manager",
                    "image": "ghcr.io/glimmer-ai/glimmer:0.1.0",
                    "volumeMounts": [
                        {"name": "tmp", "mountPath": "/tmp"},
                        {
                            "name": "kube-api-access-x1y2z",
                            "mountPath": SERVICE_ACCOUNT_MOUNT,
                            "readOnly": True,
                        },
                    ],
                }
            ],
        },
    }


class _Cluster:
    def __init__(self, objects: dict[tuple[str, str], JSON]) -> None:
        self.objects = objects
        self.tokens: list[tuple[str, list[str], int]] = []

    async def fetch(self, kind: str, name: str) -> JSON | None:
        return self.objects.get((kind, name))

    async def request_token(self, account: str, audiences: list[str], seconds: int) -> str:
        self.tokens.append((account, audiences, seconds))
        return f"token-for-{account}"


def test_the_service_account_volume_holds_token_ca_and_namespace(tmp_path: Path) -> None:
    cluster = _Cluster({("configmaps", "kube-root-ca.crt"): {"data": {"ca.crt": "PEM"}}})
    pod = _pod(KUBE_API_ACCESS, {"name": "tmp", "emptyDir": {}})
    volumes = asyncio.run(
        materialize(pod, tmp_path, fetch=cluster.fetch, request_token=cluster.request_token)
    )
    account = volumes["kube-api-access-x1y2z"]
    assert (account / "token").read_text() == "token-for-glimmer-manager"
    assert (account / "ca.crt").read_text() == "PEM"
    assert (account / "namespace").read_text() == "glimmer-system"
    assert cluster.tokens == [("glimmer-manager", [], 3607)]
    assert (account / "token").stat().st_mode & 0o077 == 0
    env = mounts_env(pod["spec"]["containers"][0], volumes)
    assert json.loads(env[MOUNTS_ENV]) == {
        "/tmp": str(volumes["tmp"]),
        SERVICE_ACCOUNT_MOUNT: str(account),
    }


def test_a_missing_root_ca_stops_the_pod_like_a_failed_mount(tmp_path: Path) -> None:
    cluster = _Cluster({})
    with pytest.raises(ContainerConfigError, match=r"kube-root-ca\.crt"):
        asyncio.run(
            materialize(
                _pod(KUBE_API_ACCESS),
                tmp_path,
                fetch=cluster.fetch,
                request_token=cluster.request_token,
            )
        )


def test_a_volume_path_cannot_leave_its_directory(tmp_path: Path) -> None:
    volume = {
        "name": "config",
        "configMap": {"name": "c", "items": [{"key": "k", "path": "../../escape"}]},
    }
    cluster = _Cluster({("configmaps", "c"): {"data": {"k": "v"}}})
    with pytest.raises(ContainerConfigError, match="leaves the volume"):
        asyncio.run(
            materialize(
                _pod(volume),
                tmp_path / "v",
                fetch=cluster.fetch,
                request_token=cluster.request_token,
            )
        )
    assert not (tmp_path / "escape").exists()


def test_the_kubernetes_service_variables_name_the_apiserver() -> None:
    env = service_env("https://127.0.0.1:36443")
    assert env["KUBERNETES_SERVICE_HOST"] == "127.0.0.1"
    assert env["KUBERNETES_SERVICE_PORT"] == "36443"
    assert env["KUBERNETES_PORT"] == "tcp://127.0.0.1:36443"


def test_the_manager_image_runs_glimmer_through_the_in_cluster_shim() -> None:
    images = ImageMap.default()
    container = {"image": "ghcr.io/glimmer-ai/glimmer:0.1.0", "args": ["manager", "--leader-elect"]}
    assert images.argv(container) == [
        sys.executable,
        "-m",
        "glimmer.sim.incluster",
        "manager",
        "--leader-elect",
    ]
    # A runner image is still a runner, not the manager.
    runner = images.argv({"image": "ghcr.io/glimmer-ai/glimmer-runner-clockprobe:v0.1.0"})
    assert runner[-1] == "runners.clockprobe"


def test_binding_every_address_binds_the_pods_own() -> None:
    argv = [
        "manager",
        "--metrics-bind-address=:8080",
        "--health-probe-bind-address",
        "0.0.0.0:8081",
        "--serve-namespaces=glimmer-runs",
        "--metrics-bind-address=127.0.0.1:9090",
    ]
    assert bind_to_pod(argv, "127.1.0.7") == [
        "manager",
        "--metrics-bind-address=127.1.0.7:8080",
        "--health-probe-bind-address",
        "127.1.0.7:8081",
        "--serve-namespaces=glimmer-runs",
        "--metrics-bind-address=127.0.0.1:9090",
    ]


def test_the_in_cluster_client_reads_the_mounted_credentials(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(incluster_config, "SERVICE_TOKEN_FILENAME", "/unset")
    monkeypatch.setattr(incluster_config, "SERVICE_CERT_FILENAME", "/unset")
    monkeypatch.setattr(manager_command, "_SERVICE_ACCOUNT_NAMESPACE", Path("/unset"))
    point_at_mounts({SERVICE_ACCOUNT_MOUNT: str(tmp_path)})
    assert str(tmp_path / "token") == incluster_config.SERVICE_TOKEN_FILENAME
    assert str(tmp_path / "ca.crt") == incluster_config.SERVICE_CERT_FILENAME
    (tmp_path / "namespace").write_text("helm-system\n")
    monkeypatch.delenv("POD_NAMESPACE", raising=False)
    assert manager_command.operator_namespace() == "helm-system"
