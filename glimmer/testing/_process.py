"""Child processes that cannot outlive the test process that started them.

A test run killed with SIGKILL runs no ``finally`` blocks, so cleanup code alone would
leak etcd and kube-apiserver processes (and their ports) into the next run. Each child is
started in its own process group with ``PR_SET_PDEATHSIG`` set to SIGKILL in
``preexec_fn``: the kernel kills it when the thread that forked it dies, however that
happens. Its own process group lets :func:`stop` signal grandchildren too.

The death signal follows the forking *thread*, so every fork happens on one long-lived
spawner thread: a child started from a short-lived worker thread (``asyncio.to_thread``)
would otherwise be killed when that worker exits.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import IO

_PR_SET_PDEATHSIG = 1

# One worker, never shut down before interpreter exit: the thread every child is forked on.
_SPAWNER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="glimmer-spawner")

#: Every child this process started (pid -> its kernel start time), for the leak check at
#: the end of a test run. The start time tells our child from a later process that was
#: given the same pid (pid_max is often 32768: a long run on a busy machine wraps it).
SPAWNED: dict[int, str | None] = {}


# Resolved once in the parent: the child between fork and exec should only make syscalls,
# not dlopen (whose loader lock another parent thread may have held at fork time).
_PRCTL = ctypes.CDLL(None, use_errno=True).prctl


def _die_with_parent(parent_pid: int) -> None:
    os.setpgid(0, 0)
    _PRCTL(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    # The parent may have died between fork and prctl; then nobody would signal us.
    if os.getppid() != parent_pid:
        os._exit(1)


def spawn(
    argv: Sequence[str],
    *,
    log_path: Path,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> subprocess.Popen[bytes]:
    """Start ``argv`` with stdout+stderr appended to ``log_path``, tied to our lifetime."""
    parent = os.getpid()

    def fork() -> subprocess.Popen[bytes]:
        log: IO[bytes]
        with log_path.open("ab") as log:
            return subprocess.Popen(
                list(argv),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=dict(env) if env is not None else None,
                cwd=cwd,
                preexec_fn=lambda: _die_with_parent(parent),  # noqa: PLW1509 - the point
            )

    process = _SPAWNER.submit(fork).result()
    SPAWNED[process.pid] = start_time(process.pid)
    return process


def stop(process: subprocess.Popen[bytes], *, grace: float = 10.0) -> None:
    """SIGTERM the child's process group, SIGKILL it after ``grace`` seconds."""
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=grace)
    # The leader may be gone while members of its group linger.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=grace)


def free_port() -> int:
    """A loopback TCP port free right now (the caller retries if it is taken meanwhile)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def wait_for(
    what: str,
    check: Callable[[], bool],
    *,
    timeout: float,
    process: subprocess.Popen[bytes] | None = None,
    log_path: Path | None = None,
) -> None:
    """Poll ``check()`` until true; fail fast (with the log tail) if ``process`` exits."""
    deadline = time.monotonic() + timeout
    delay = 0.05
    while True:
        if process is not None and process.poll() is not None:
            raise ChildProcessError(
                f"{what}: process exited with {process.returncode}" + log_tail(log_path)
            )
        with contextlib.suppress(OSError):
            if check():
                return
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: not ready after {timeout:.0f}s{log_tail(log_path)}")
        time.sleep(delay)
        delay = min(delay * 1.5, 0.5)


def log_tail(log_path: Path | None, *, lines: int = 30) -> str:
    if log_path is None or not log_path.exists():
        return ""
    tail = log_path.read_text(errors="replace").splitlines()[-lines:]
    return f"\n--- last {len(tail)} lines of {log_path} ---\n" + "\n".join(tail)


def start_time(pid: int) -> str | None:
    """The process's start time since boot (``/proc/<pid>/stat`` field 22), None if gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (FileNotFoundError, IndexError):
        return None


def surviving(pids: Iterable[int] | Mapping[int, str | None]) -> list[int]:
    """Those of ``pids`` that still run (zombies awaiting a reap count as gone).

    Given a mapping of pid to start time (:data:`SPAWNED`), a pid now held by a process
    that started at another time is a different process, and counts as gone."""
    started = pids if isinstance(pids, Mapping) else {}
    alive = []
    for pid in sorted(pids):
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except (FileNotFoundError, IndexError):
            continue
        if fields[0] in ("Z", "X"):
            continue
        if started.get(pid) is not None and fields[19] != started[pid]:
            continue  # the pid was reused
        alive.append(pid)
    return alive
