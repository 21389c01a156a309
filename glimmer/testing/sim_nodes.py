"""Simulated nodes (``python -m glimmer.sim``) as a child process of a test.

The simulator runs in its own process, as a kubelet would, so a test's event loop,
blocking calls or crash cannot stall the nodes it is testing against, and its pods are
stopped with it (``_process`` ties them to the test process).
"""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Self

import attrs

from glimmer.testing import _process


@attrs.frozen
class KubeletTLS:
    """How a simulated kubelet serves its endpoint: the certificate it presents (issued
    by the CA the apiserver verifies kubelets with) and the CA of the clients it lets in
    (the one that issued the apiserver's kubelet-client certificate).
    :attr:`glimmer.testing.ControlPlane.kubelet_tls` is the harness's."""

    cert: Path
    key: Path
    client_ca: Path

    def args(self) -> list[str]:
        """``python -m glimmer.sim`` flags that say it."""
        return [
            f"--tls-cert-file={self.cert}",
            f"--tls-private-key-file={self.key}",
            f"--client-ca-file={self.client_ca}",
        ]


class SimNodes:
    """``count`` simulated GPU nodes registered against ``kubeconfig`` while started."""

    def __init__(
        self,
        *,
        kubeconfig: Path,
        work_dir: Path,
        count: int = 1,
        name_prefix: str | None = None,
        gpus_per_node: int = 8,
        extra_args: Sequence[str] = (),
        start_timeout: float = 60.0,
        tls: KubeletTLS | None = None,
    ) -> None:
        """``name_prefix`` defaults to a fresh ``sim-<4 hex>-`` so tests never share nodes;
        ``extra_args`` go to ``python -m glimmer.sim`` (``--label``, ``--taint``,
        ``--image-map`` ...). ``tls``: the kubelet endpoint's certificates, normally
        ``control_plane.kubelet_tls``; None: a self-signed serving certificate (an
        apiserver that verifies kubelets, as :class:`ControlPlane`'s does, then cannot
        read pod logs) and the kubeconfig's CA as the client CA."""
        self.kubeconfig = kubeconfig
        self.count = count
        self.name_prefix = name_prefix or f"sim-{uuid.uuid4().hex[:4]}-"
        self.names = [f"{self.name_prefix}{i}" for i in range(count)]
        self.work_dir = work_dir / self.name_prefix.rstrip("-")
        self.log_path = self.work_dir / "sim.log"
        self._argv = [
            sys.executable,
            "-m",
            "glimmer.sim",
            f"--kubeconfig={kubeconfig}",
            f"--nodes={count}",
            f"--name-prefix={self.name_prefix}",
            f"--gpus-per-node={gpus_per_node}",
            f"--state-dir={self.work_dir / 'state'}",
            f"--ready-file={self.work_dir / 'ready.json'}",
            *(tls.args() if tls is not None else ()),
            *extra_args,
        ]
        self._start_timeout = start_timeout
        self._process: subprocess.Popen[bytes] | None = None
        #: The simulator's kubelet port (what the nodes advertise), once started.
        self.port = 0

    def start(self) -> Self:
        self.work_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        ready = self.work_dir / "ready.json"
        ready.unlink(missing_ok=True)
        self._process = _process.spawn(self._argv, log_path=self.log_path)
        _process.wait_for(
            "simulated nodes",
            ready.exists,
            timeout=self._start_timeout,
            process=self._process,
            log_path=self.log_path,
        )
        self.port = int(json.loads(ready.read_text())["port"])
        return self

    def stop(self) -> None:
        """SIGTERM: pods are stopped (failed as on node shutdown) and the nodes deleted."""
        if self._process is not None:
            _process.stop(self._process, grace=30)
            self._process = None

    @property
    def pid(self) -> int | None:
        return None if self._process is None else self._process.pid

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
