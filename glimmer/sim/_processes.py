"""Container processes that die with the simulated kubelet.

Each container runs in its own process group (so a shell's children are signalled with
it) with ``PR_SET_PDEATHSIG``: if the simulator is killed outright, the kernel kills its
containers too and no runner outlives the test that started it.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import signal
from collections.abc import Mapping, Sequence
from pathlib import Path

_PR_SET_PDEATHSIG = 1


# Resolved once in the parent: the child between fork and exec should only make syscalls,
# not dlopen (whose loader lock another parent thread may have held at fork time).
_PRCTL = ctypes.CDLL(None, use_errno=True).prctl


def _die_with_parent(parent_pid: int) -> None:
    os.setpgid(0, 0)
    _PRCTL(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent_pid:
        os._exit(1)


async def start(
    argv: Sequence[str], *, env: Mapping[str, str], cwd: Path, log_path: Path
) -> asyncio.subprocess.Process:
    """Start ``argv`` with stdout and stderr merged into ``log_path`` (appended)."""
    parent = os.getpid()
    with log_path.open("ab") as log:
        return await asyncio.create_subprocess_exec(
            *argv,
            env=dict(env),
            cwd=cwd,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=log,
            stderr=asyncio.subprocess.STDOUT,
            preexec_fn=lambda: _die_with_parent(parent),
        )


def signal_group(process: asyncio.subprocess.Process, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signum)


async def terminate(process: asyncio.subprocess.Process, *, grace: float) -> None:
    """SIGTERM the group, SIGKILL it after ``grace`` seconds, as the kubelet does."""
    if process.returncode is None:
        signal_group(process, signal.SIGTERM)
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(grace):
                await process.wait()
    signal_group(process, signal.SIGKILL)
    await process.wait()


def exit_code(returncode: int) -> int:
    """A process killed by signal N reports 128+N, as container runtimes do."""
    return 128 - returncode if returncode < 0 else returncode
