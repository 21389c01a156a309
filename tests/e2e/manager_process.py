"""`glimmer manager` as a real child process, so a test can SIGKILL it like the kubelet would.

An in-process manager cancelled by a test still runs `finally` blocks and flushes what it
buffered; a SIGKILLed process does neither, which is the crash the operator must survive.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path

from glimmer.testing import _process

# `glimmer` is a console script; starting it through the interpreter avoids depending on
# where the virtualenv put it.
_ENTRY = "import sys; from glimmer.cli import main; sys.exit(main())"


class ManagerProcess:
    """One manager replica at a time, reconciling every namespace, without leader election.

    Leader election is off because a SIGKILLed leader never releases its Lease: each
    restart would wait out the lease instead of exercising recovery.
    """

    def __init__(self, *, kubeconfig: Path, log_path: Path) -> None:
        self.kubeconfig = kubeconfig
        self.log_path = log_path
        self.process: subprocess.Popen[bytes] | None = None
        self.starts = 0

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    def start(self) -> None:
        assert self.process is None, "manager already running"
        argv = [
            sys.executable,
            "-c",
            _ENTRY,
            "manager",
            f"--kubeconfig={self.kubeconfig}",
            "--no-leader-elect",
            f"--metrics-bind-address=127.0.0.1:{_process.free_port()}",
            f"--health-probe-bind-address=127.0.0.1:{_process.free_port()}",
        ]
        self.process = _process.spawn(argv, log_path=self.log_path)
        self.starts += 1

    def kill(self) -> None:
        """SIGKILL: no drain, no cleanup, in-flight requests cut wherever they are."""
        if self.process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)
        self.process = None

    def stop(self) -> None:
        """SIGTERM and wait for the graceful drain (SIGKILL if it overruns)."""
        if self.process is None:
            return
        _process.stop(self.process, grace=35)
        self.process = None

    def exited(self) -> int | None:
        """The exit status if the manager died on its own (a crash the test must report)."""
        return self.process.poll() if self.process is not None else None
