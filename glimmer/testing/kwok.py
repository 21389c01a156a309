"""KWOK fake nodes, for tests that need many nodes rather than real processes.

KWOK (built by ``hack/envtest``) plays kubelet for nodes annotated
``kwok.x-k8s.io/node: fake``, moving their pods through the stages in ``kwok_stages/``:
Pending -> Running at once, then - only if the pod is annotated
``glimmer.dev/exit-code: "<n>"`` - terminated with exit code n (Succeeded for 0, Failed
otherwise) after the optional ``glimmer.dev/run-duration``. A pod without the annotation
runs until deleted, so nothing here produces a pass unless a test asked for one.

Logs are served kubelet-style by KWOK from a per-pod ``Logs`` resource pointing at a
CRI-format file, so ``GET pods/{name}/log`` works through the apiserver; write them with
:meth:`Kwok.set_pod_log`. Pods are bound to KWOK nodes by the simulator's scheduler
(``python -m glimmer.sim --nodes 0 --schedule-selector type=kwok``), since the control
plane has no kube-scheduler.
"""

from __future__ import annotations

import datetime
import json
import subprocess
import sys
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import yaml

from glimmer.testing import _process
from glimmer.testing.assets import require_kwok
from glimmer.testing.control_plane import ControlPlane

STAGES_DIR = Path(__file__).parent / "kwok_stages"
EXIT_CODE_ANNOTATION = "glimmer.dev/exit-code"
RUN_DURATION_ANNOTATION = "glimmer.dev/run-duration"
NODE_ANNOTATION = "kwok.x-k8s.io/node"
_CRDS = ("kwok.x-k8s.io_logs.yaml", "kwok.x-k8s.io_clusterlogs.yaml")


class Kwok:
    """A KWOK controller (and a scheduler for its nodes) against ``control_plane``."""

    def __init__(
        self,
        control_plane: ControlPlane,
        *,
        start_timeout: float = 60.0,
        extra_stages: Sequence[Path] = (),
    ) -> None:
        """Configure; start nothing. ``extra_stages``: KWOK Stage files loaded after the
        shared ones in ``kwok_stages/`` (a bench's own completion stage, say)."""
        self.control_plane = control_plane
        self.extra_stages = tuple(extra_stages)
        self.work_dir = control_plane.work_dir / f"kwok-{uuid.uuid4().hex[:4]}"
        self._start_timeout = start_timeout
        self._kwok: subprocess.Popen[bytes] | None = None
        self._scheduler: subprocess.Popen[bytes] | None = None
        self.port = 0
        self.nodes: list[str] = []

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in (self._kwok, self._scheduler) if p is not None]

    def start(self) -> Self:
        binary = require_kwok(self.control_plane.assets)
        self.work_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        (self.work_dir / "logs").mkdir(exist_ok=True)
        crds = self.control_plane.assets.directory / "kwok-crds"
        for crd in _CRDS:
            self.control_plane.kubectl("apply", "--server-side", "-f", str(crds / crd))
        self.control_plane.wait_established(
            "crd/logs.kwok.x-k8s.io", "crd/clusterlogs.kwok.x-k8s.io"
        )
        files = [*sorted(STAGES_DIR.glob("*.yaml")), *self.extra_stages]
        stages = "\n---\n".join(p.read_text() for p in files)
        config = self.work_dir / "stages.yaml"
        config.write_text(stages)
        self.port = _process.free_port()
        log = self.work_dir / "kwok.log"
        self._kwok = _process.spawn(
            [
                str(binary),
                f"--kubeconfig={self.control_plane.kubeconfig_path}",
                f"--config={config}",
                f"--manage-nodes-with-annotation-selector={NODE_ANNOTATION}=fake",
                "--enable-crds=Logs,ClusterLogs",
                f"--server-address=127.0.0.1:{self.port}",
                "--node-ip=127.0.0.1",
                f"--node-port={self.port}",
                "--node-lease-duration-seconds=40",
                # The apiserver verifies kubelets (--kubelet-certificate-authority): KWOK
                # serves a certificate from the harness CA, as the simulated kubelet does.
                f"--tls-cert-file={self.control_plane.kubelet_tls.cert}",
                f"--tls-private-key-file={self.control_plane.kubelet_tls.key}",
                "--cidr=10.244.0.0/16",
            ],
            log_path=log,
            env={"HOME": str(self.work_dir), "PATH": "/usr/bin:/bin"},
        )
        _process.wait_for(
            "kwok /healthz",
            lambda: _process_http_ok(f"http://127.0.0.1:{self.port}/healthz"),
            timeout=self._start_timeout,
            process=self._kwok,
            log_path=log,
        )
        scheduler_log = self.work_dir / "scheduler.log"
        ready = self.work_dir / "scheduler.ready"
        self._scheduler = _process.spawn(
            [
                sys.executable,
                "-m",
                "glimmer.sim",
                f"--kubeconfig={self.control_plane.kubeconfig_path}",
                "--nodes=0",
                "--schedule-selector=type=kwok",
                f"--ready-file={ready}",
                *self.control_plane.kubelet_tls.args(),
            ],
            log_path=scheduler_log,
        )
        _process.wait_for(
            "kwok scheduler",
            ready.exists,
            timeout=self._start_timeout,
            process=self._scheduler,
            log_path=scheduler_log,
        )
        return self

    def stop(self) -> None:
        for process in (self._scheduler, self._kwok):
            if process is not None:
                _process.stop(process)
        self._kwok = self._scheduler = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def create_nodes(
        self,
        count: int,
        *,
        name_prefix: str | None = None,
        gpus_per_node: int = 8,
        gpu_product: str = "NVIDIA-H100-80GB-HBM3",
        labels: Mapping[str, str] | None = None,
    ) -> list[str]:
        """Register ``count`` fake GPU nodes and wait until all are Ready and schedulable."""
        prefix = name_prefix or f"kwok-{uuid.uuid4().hex[:4]}-"
        names = [f"{prefix}{i}" for i in range(count)]
        documents = [
            _node(
                name,
                gpus=gpus_per_node,
                product=gpu_product,
                labels=labels or {},
            )
            for name in names
        ]
        self.control_plane.kubectl(
            "apply", "-f", "-", input=yaml.safe_dump_all(documents, sort_keys=False)
        )
        # One list per poll: `kubectl wait` on many nodes waits for them one at a time.
        _process.wait_for(
            f"{count} kwok nodes Ready",
            lambda: self._ready_nodes(set(names)) == set(names),
            timeout=self._start_timeout,
            process=self._kwok,
            log_path=self.work_dir / "kwok.log",
        )
        # Admission taints every new node not-ready; the node-lifecycle controller that
        # would lift it once Ready does not run here.
        for start in range(0, len(names), 200):
            chunk = ",".join(names[start : start + 200])
            self.control_plane.kubectl(
                "taint",
                "nodes",
                f"--selector=kubernetes.io/hostname in ({chunk})",
                "node.kubernetes.io/not-ready:NoSchedule-",
            )
        self.nodes.extend(names)
        return names

    def delete_nodes(self, names: Sequence[str]) -> None:
        """Delete fake nodes (their pods stay, as with any node deletion here)."""
        if names:
            self.control_plane.kubectl("delete", "nodes", "--ignore-not-found", *names)
        self.nodes = [n for n in self.nodes if n not in set(names)]

    def _ready_nodes(self, names: set[str]) -> set[str]:
        listing = json.loads(
            self.control_plane.kubectl("get", "nodes", "--selector=type=kwok", "-o", "json").stdout
        )
        return {
            node["metadata"]["name"]
            for node in listing["items"]
            if node["metadata"]["name"] in names
            and any(
                c.get("type") == "Ready" and c.get("status") == "True"
                for c in node.get("status", {}).get("conditions") or []
            )
        }

    def set_pod_log(
        self,
        *,
        namespace: str,
        pod: str,
        text: str,
        containers: Sequence[str] = (),
    ) -> Path:
        """Serve ``text`` as the log of ``pod`` (of ``containers``, default: all of them)."""
        path = self.work_dir / "logs" / f"{namespace}.{pod}.log"
        stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        lines = text.splitlines()
        path.write_text("".join(f"{stamp} stdout F {line}\n" for line in lines))
        entry: dict[str, Any] = {"logsFile": str(path), "follow": False}
        if containers:
            entry["containers"] = list(containers)
        document = {
            "apiVersion": "kwok.x-k8s.io/v1alpha1",
            "kind": "Logs",
            "metadata": {"name": pod, "namespace": namespace},
            "spec": {"logs": [entry]},
        }
        self.control_plane.kubectl("apply", "-f", "-", input=yaml.safe_dump(document))
        return path

    def set_namespace_log(self, *, namespaces: Sequence[str], text: str) -> Path:
        """Serve ``text`` as the log of every container of every pod in ``namespaces``
        (one KWOK ``ClusterLogs``), for fleets too large for a ``Logs`` object per pod."""
        path = self.work_dir / "logs" / f"cluster.{'.'.join(namespaces)}.log"
        stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        path.write_text("".join(f"{stamp} stdout F {line}\n" for line in text.splitlines()))
        document = {
            "apiVersion": "kwok.x-k8s.io/v1alpha1",
            "kind": "ClusterLogs",
            "metadata": {"name": f"glimmer-{'-'.join(namespaces)}"},
            "spec": {
                "selector": {"matchNamespaces": list(namespaces)},
                "logs": [{"logsFile": str(path), "follow": False}],
            },
        }
        self.control_plane.kubectl("apply", "-f", "-", input=yaml.safe_dump(document))
        return path


def _node(name: str, *, gpus: int, product: str, labels: Mapping[str, str]) -> dict[str, Any]:
    resources = {"cpu": "64", "memory": "512Gi", "pods": "110", "nvidia.com/gpu": str(gpus)}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "annotations": {NODE_ANNOTATION: "fake", "node.alpha.kubernetes.io/ttl": "0"},
            "labels": {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                "type": "kwok",
                "nvidia.com/gpu.product": product,
                "nvidia.com/gpu.count": str(gpus),
                **labels,
            },
        },
        "status": {"allocatable": resources, "capacity": resources},
    }


def _process_http_ok(url: str) -> bool:
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False
