"""Running fio bounded in time and output: a hung or flooding fio, or one whose job
processes outlive it, is ended with its whole process group (runners/disk_io/tool.py)."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

import pytest

from runners.disk_io.tool import find_fio, run_fio
from runners.sdk.outcome import RunnerError
from runners.sdk.protocols import ToolMissingError


def _script(tmp_path: Path, body: str) -> str:
    path = tmp_path / "fio"
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead for our purpose: it holds nothing and runs nothing.
    status = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    return status != "Z"


def _dies(pid: int, *, within_s: float = 5.0) -> bool:
    """Whether ``pid`` is dead within ``within_s``: a SIGKILLed process finishes exiting
    a moment after the signal (a job left alone sleeps 300 s)."""
    deadline = time.monotonic() + within_s
    while _alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_hung_fio_is_killed_with_its_job_processes(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    fio = _script(tmp_path, f"sleep 300 &\necho $! > {pid_file}\nsleep 300\n")
    with pytest.raises(RunnerError, match="did not finish in 1 s"):
        run_fio(fio, [], timeout_s=1)
    assert _dies(int(pid_file.read_text()))


def test_job_process_holding_the_pipe_after_fio_exits_is_ended(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    fio = _script(tmp_path, f"sleep 300 &\necho $! > {pid_file}\necho '{{}}'\nexit 0\n")
    done = run_fio(fio, [], timeout_s=60)
    assert done.exit_code == 0 and done.stdout.strip() == "{}"
    assert _dies(int(pid_file.read_text()))


def test_output_flood_is_refused_and_killed(tmp_path: Path) -> None:
    fio = _script(tmp_path, "yes glimmer\n")
    with pytest.raises(RunnerError, match="more than 1024 bytes"):
        run_fio(fio, [], timeout_s=60, limit_bytes=1024)


def test_stderr_keeps_only_its_tail(tmp_path: Path) -> None:
    noise = "i=0; while [ $i -lt 3000 ]; do echo noise $i >&2; i=$((i+1)); done\n"
    fio = _script(tmp_path, noise + "echo 'fio: the last word' >&2\n")
    done = run_fio(fio, [], timeout_s=60)
    assert done.last_stderr_line() == "fio: the last word"
    assert len(done.stderr_tail) <= 8192


def test_explicit_fio_path_never_falls_back_to_path(tmp_path: Path) -> None:
    with pytest.raises(ToolMissingError, match="BURNIN_FIO_PATH"):
        find_fio(str(tmp_path / "no-fio"))
    not_executable = tmp_path / "fio"
    not_executable.write_text("#!/bin/sh\n")
    with pytest.raises(ToolMissingError):
        find_fio(str(not_executable))
