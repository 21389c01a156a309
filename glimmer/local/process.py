"""Running one runner as a local process, as the kubelet would run its container.

The output is streamed into the contract reader (bounded memory) and copied to a
raw log. The deadline mirrors ``activeDeadlineSeconds``: SIGTERM, then SIGKILL
after a grace period, and the attempt is Error whatever the runner exits with
(A14), because a SIGTERM-trapping entrypoint exiting 0 must not pass.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from glimmer.contract import ReportReader, RunnerReport
from glimmer.verdict import Termination

KILL_GRACE_SECONDS: Final = 10.0
_CHUNK: Final = 65_536


@dataclass(frozen=True, slots=True)
class ProcessResult:
    report: RunnerReport
    termination: Termination
    started_at: float
    finished_at: float


def run_runner(
    *,
    command: Sequence[str],
    env: Mapping[str, str],
    kind: str,
    deadline_seconds: float,
    raw_log: Path | None,
    on_output: Callable[[bytes], None] | None = None,
) -> ProcessResult:
    """Run ``command`` to completion (or its deadline) and read what it declared."""
    reader = ReportReader(kind=kind)
    started = time.time()
    try:
        proc = subprocess.Popen(
            list(command),
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    except OSError as exc:
        # Like a container that cannot start: no runner terminated, no verdict.
        return ProcessResult(
            report=reader.finish(exit_code=-1),
            termination=Termination(exit_code=-1, reason="StartError", detail=str(exc)),
            started_at=started,
            finished_at=time.time(),
        )
    expired = threading.Event()
    timer = threading.Timer(deadline_seconds, _expire, args=(proc, expired))
    timer.daemon = True
    timer.start()
    assert proc.stdout is not None
    with proc.stdout, raw_log.open("wb") if raw_log else open(os.devnull, "wb") as log:
        while chunk := os.read(proc.stdout.fileno(), _CHUNK):
            reader.feed(chunk)
            log.write(chunk)
            if on_output is not None:
                on_output(chunk)
    code = proc.wait()
    timer.cancel()
    finished = time.time()
    if code < 0:
        reason, exit_code = signal.Signals(-code).name, 128 - code
    else:
        reason, exit_code = ("Completed" if code == 0 else "Error"), code
    if expired.is_set():
        reason = "DeadlineExceeded"
    return ProcessResult(
        report=reader.finish(exit_code=exit_code),
        termination=Termination(
            exit_code=exit_code, reason=reason, deadline_exceeded=expired.is_set()
        ),
        started_at=started,
        finished_at=finished,
    )


def _expire(proc: subprocess.Popen[bytes], expired: threading.Event) -> None:
    if proc.poll() is not None:
        return
    expired.set()
    _signal_group(proc, signal.SIGTERM)
    try:
        proc.wait(timeout=KILL_GRACE_SECONDS)
    except subprocess.TimeoutExpired:
        _signal_group(proc, signal.SIGKILL)


def _signal_group(proc: subprocess.Popen[bytes], sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, sig)
