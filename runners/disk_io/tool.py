"""Running the host's ``fio`` with a bounded appetite for its output and its time.

Why bounded: fio's report is a few kilobytes; an fio (or an impostor at its path) that
prints without end must not fill the runner's memory, and one that hangs must not outlive
the pod's budget. Output past ``limit_bytes`` or a run past ``timeout_s`` kills fio's whole
process group (fio forks a process per job) and is an Error, never a partial read.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import IO

from runners.sdk.outcome import RunnerError
from runners.sdk.protocols import ToolMissingError

FIO_PATH_ENV = "BURNIN_FIO_PATH"
#: fio's JSON for three jobs is ~10 KiB; far more is not a report.
OUTPUT_LIMIT_BYTES = 4 * 2**20
_STDERR_TAIL_BYTES = 8192
_PIPE_GRACE_S = 5.0


@dataclass(frozen=True)
class FioRun:
    exit_code: int
    stdout: str
    stderr_tail: str

    def last_stderr_line(self) -> str:
        lines = [line.strip() for line in self.stderr_tail.splitlines() if line.strip()]
        return lines[-1] if lines else ""


def find_fio(explicit: str | None) -> str:
    """``BURNIN_FIO_PATH`` if set (never a fallback to ``PATH``), else ``fio`` on ``PATH``."""
    found = explicit or shutil.which("fio")
    if found is None or not os.path.isfile(found) or not os.access(found, os.X_OK):
        where = f"{FIO_PATH_ENV}={explicit!r}" if explicit else "fio on PATH"
        raise ToolMissingError(
            f"{where} not found: install fio (Debian package fio) or set {FIO_PATH_ENV}"
        )
    return found


class _Drain(threading.Thread):
    """Reads one pipe to its end; keeps the head up to a limit, or only the tail."""

    def __init__(
        self,
        pipe: IO[bytes],
        *,
        limit: int,
        keep_tail: bool,
        on_overflow: Callable[[], None] | None,
    ) -> None:
        super().__init__(daemon=True)
        self._pipe = pipe
        self._limit = limit
        self._keep_tail = keep_tail
        self._on_overflow = on_overflow
        self.data = bytearray()
        self.overflowed = False

    def run(self) -> None:
        while chunk := self._pipe.read(65536):
            self.data += chunk
            if len(self.data) <= self._limit:
                continue
            if self._keep_tail:
                del self.data[: len(self.data) - self._limit]
            elif not self.overflowed:
                self.overflowed = True
                del self.data[self._limit :]
                if self._on_overflow is not None:
                    self._on_overflow()
            else:
                del self.data[self._limit :]


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


def run_fio(
    fio: str,
    argv: Sequence[str],
    *,
    timeout_s: float,
    limit_bytes: int = OUTPUT_LIMIT_BYTES,
) -> FioRun:
    """Run fio to its end; raises RunnerError on a timeout or an output flood."""
    try:
        process = subprocess.Popen(
            [fio, *argv],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as error:
        raise ToolMissingError(f"fio at {fio} could not be started: {error}") from error
    assert process.stdout is not None and process.stderr is not None
    out = _Drain(
        process.stdout, limit=limit_bytes, keep_tail=False, on_overflow=lambda: _kill_group(process)
    )
    err = _Drain(process.stderr, limit=_STDERR_TAIL_BYTES, keep_tail=True, on_overflow=None)
    out.start()
    err.start()
    try:
        code = process.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        _kill_group(process)
        process.wait()
        raise RunnerError(f"fio did not finish in {timeout_s:.0f} s (killed)") from None
    except BaseException:
        _kill_group(process)
        process.wait()
        raise
    finally:
        for drain in (out, err):
            drain.join(timeout=_PIPE_GRACE_S)
            if drain.is_alive():
                # A job process still holds the pipe, so fio's group still exists (its id
                # cannot have been reused): end it, then the pipe closes.
                _kill_group(process)
                drain.join()
        process.stdout.close()
        process.stderr.close()
    if out.overflowed:
        raise RunnerError(f"fio printed more than {limit_bytes} bytes: not a report (killed)")
    return FioRun(
        exit_code=code,
        stdout=out.data.decode("utf-8", errors="replace"),
        stderr_tail=err.data.decode("utf-8", errors="replace"),
    )
