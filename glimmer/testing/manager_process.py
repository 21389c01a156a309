"""``glimmer manager`` as a real child process, so a test can SIGTERM or SIGKILL it.

An in-process operator cancelled by a test still runs ``finally`` blocks and flushes
what it buffered; a SIGKILLed process does neither, which is the crash the operator must
survive. The child is started like every other child of ``glimmer.testing``: in its own
process group, killed with the test process (``PR_SET_PDEATHSIG``), and counted by the
pytest plugin's end-of-session check for leaked processes.

Its metrics and health servers bind free loopback ports (``metrics_url`` and
``health_url``); stdout and stderr (one JSON object per line) go to ``log_path``.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from glimmer.testing import _process

# Through the interpreter, so nothing depends on where the virtualenv put the script.
_ENTRY = "import sys; from glimmer.cli import main; sys.exit(main())"


class ManagerProcess:
    """One ``glimmer manager`` process at a time; :meth:`start` again after a stop."""

    def __init__(
        self,
        *,
        kubeconfig: str | os.PathLike[str],
        log_path: str | os.PathLike[str],
        serve_namespaces: str = "*",
        leader_elect: bool = False,
        leader_election_namespace: str | None = None,
        leader_election_id: str | None = None,
        extra_args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
    ) -> None:
        """Configure; start nothing.

        ``serve_namespaces`` is ``--serve-namespaces`` (default ``*``: tests use
        throwaway namespaces). Leader election is off by default: a SIGKILLed leader
        never releases its Lease, so each restart would wait out the lease instead of
        exercising recovery. ``extra_args`` are appended to the command line; ``env``
        replaces the environment (default: inherited).
        """
        self.kubeconfig = Path(kubeconfig)
        self.log_path = Path(log_path)
        self.serve_namespaces = serve_namespaces
        self.leader_elect = leader_elect
        self.leader_election_namespace = leader_election_namespace
        self.leader_election_id = leader_election_id
        self.extra_args = tuple(extra_args)
        self.env = env
        self.process: subprocess.Popen[bytes] | None = None
        self.metrics_port = 0
        self.health_port = 0
        #: How many times the process was started.
        self.starts = 0

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    @property
    def metrics_url(self) -> str:
        return f"http://127.0.0.1:{self.metrics_port}/metrics"

    @property
    def health_url(self) -> str:
        """Base URL of ``/healthz`` and ``/readyz``."""
        return f"http://127.0.0.1:{self.health_port}"

    def argv(self) -> list[str]:
        args = [
            sys.executable,
            "-c",
            _ENTRY,
            "manager",
            f"--kubeconfig={self.kubeconfig}",
            f"--serve-namespaces={self.serve_namespaces}",
            f"--metrics-bind-address=127.0.0.1:{self.metrics_port}",
            f"--health-probe-bind-address=127.0.0.1:{self.health_port}",
            "--leader-elect" if self.leader_elect else "--no-leader-elect",
        ]
        if self.leader_election_namespace is not None:
            args.append(f"--leader-election-namespace={self.leader_election_namespace}")
        if self.leader_election_id is not None:
            args.append(f"--leader-election-id={self.leader_election_id}")
        return [*args, *self.extra_args]

    def start(self) -> Self:
        if self.process is not None:
            raise RuntimeError("the manager is already running")
        self.metrics_port, self.health_port = _process.free_port(), _process.free_port()
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self.process = _process.spawn(self.argv(), log_path=self.log_path, env=self.env)
        self.starts += 1
        return self

    def wait_ready(self, *, timeout: float = 60.0) -> None:
        """Until ``/readyz`` answers 200 (caches synced); fails fast if the process exits."""
        _process.wait_for(
            "glimmer manager /readyz",
            lambda: self.get("/readyz")[0] == 200,
            timeout=timeout,
            process=self.process,
            log_path=self.log_path,
        )

    def get(self, path: str) -> tuple[int, str]:
        """GET ``path`` from the health server (``/metrics`` from the metrics server);
        (0, "") while nothing answers."""
        url = self.metrics_url if path == "/metrics" else f"{self.health_url}{path}"
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                return int(response.status), response.read().decode()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode()
        except OSError:
            return 0, ""

    def kill(self) -> None:
        """SIGKILL: no drain, no cleanup, in-flight requests cut wherever they are."""
        if self.process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)
        self.process = None

    def stop(self, *, grace: float = 35.0) -> int | None:
        """SIGTERM, wait for the graceful drain (SIGKILL after ``grace`` s); the exit status."""
        if self.process is None:
            return None
        process, self.process = self.process, None
        _process.stop(process, grace=grace)
        return process.returncode

    def wait(self, *, timeout: float) -> int:
        """Wait for the process to exit by itself; its exit status."""
        if self.process is None:
            raise RuntimeError("the manager is not running")
        code = self.process.wait(timeout=timeout)
        self.process = None
        return code

    def exited(self) -> int | None:
        """The exit status if the manager died on its own (a crash the test must report)."""
        return self.process.poll() if self.process is not None else None

    def log_lines(self) -> list[dict[str, Any]]:
        """Every log line, parsed: raises if one is not JSON (the log contract)."""
        if not self.log_path.exists():
            return []
        text = self.log_path.read_text(errors="replace")
        return [json.loads(line) for line in text.splitlines() if line.strip()]

    def log_tail(self, lines: int = 30) -> str:
        return _process.log_tail(self.log_path, lines=lines)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
