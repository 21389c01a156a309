"""On a bare host an attempt ends when the runner's main process exits.

A container ends with its main process, whatever its background children hold open,
so the cluster judges such a runner on what it printed and its exit code. ``glimmer
run`` must reach the same verdict, not wait out the deadline for a child holding
stdout: the output already in the pipe is read in full, the rest of the group is
killed, and reading after the exit is bounded in time.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from glimmer.local import process
from glimmer.local.process import ProcessResult, run_runner
from glimmer.verdict import Phase, apply_termination, judge_attempt

ENV = {"PATH": "/usr/bin:/bin"}
#: Far beyond anything these runners need: reaching it means the exit was missed.
DEADLINE = 150.0


def run(script: str, *, deadline: float = DEADLINE, **kw: Any) -> tuple[ProcessResult, float]:
    started = time.monotonic()
    outcome = run_runner(
        command=["sh", "-c", script],
        env=ENV,
        kind="custom",
        deadline_seconds=deadline,
        raw_log=None,
        **kw,
    )
    return outcome, time.monotonic() - started


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state not in ("Z", "X")


def _dies(pid: int, *, within: float = 3.0) -> bool:
    until = time.monotonic() + within
    while _alive(pid):
        if time.monotonic() > until:
            return False
        time.sleep(0.02)
    return True


def test_main_process_exit_ends_the_attempt_though_a_child_holds_stdout(tmp_path: Path) -> None:
    pid_file = tmp_path / "child"
    outcome, elapsed = run(f"echo bandwidthGbps=150; (sleep 300 & echo $! > {pid_file}); echo DONE")
    assert elapsed < 5.0, f"the attempt waited {elapsed:.1f} s for a child holding stdout"
    assert not outcome.termination.deadline_exceeded
    assert outcome.termination.reason == "Completed" and outcome.termination.exit_code == 0
    assert outcome.report.metrics == {"bandwidthGbps": "150"}
    assert outcome.report.message == "DONE"
    assert _dies(int(pid_file.read_text())), "the child outlived its runner"
    verdict = judge_attempt(
        outcome.report, kind="custom", thresholds=[], dispatcher_provenance=None
    )
    verdict = apply_termination(verdict, outcome.termination, runner_line=outcome.report.message)
    assert verdict.phase is Phase.PASSED


def test_main_process_exit_keeps_its_exit_code(tmp_path: Path) -> None:
    outcome, elapsed = run("echo bw=1; (sleep 300 &); echo BAD; exit 1")
    assert elapsed < 5.0
    assert outcome.termination.exit_code == 1 and outcome.termination.reason == "Error"
    assert not outcome.termination.deadline_exceeded


def test_main_process_exit_ends_the_attempt_without_a_pidfd(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Where the kernel has no pidfd, the exit is still looked for while the output is open.
    monkeypatch.setattr(process, "_exit_notice", lambda pid: None)
    outcome, elapsed = run("echo bw=1; (sleep 300 &); echo DONE")
    assert elapsed < 5.0 and not outcome.termination.deadline_exceeded
    assert outcome.report.metrics == {"bw": "1"}


def test_output_already_in_the_pipe_is_read_in_full_after_the_main_exit() -> None:
    # The reader lags on its first chunk, so the runner has written everything and
    # exited (a child still holding the pipe) before most of it was read.
    lines = "".join(f"line{i}=1\\n" for i in range(2000))
    script = f"(sleep 300 &); printf '{lines}'; echo last=1; echo DONE"
    lagged: list[bool] = []

    def lag(_: bytes) -> None:
        if not lagged:
            lagged.append(True)
            time.sleep(0.5)

    outcome, elapsed = run(script, on_output=lag)
    assert elapsed < 5.0
    assert outcome.report.metrics.get("last") == "1"
    assert len(outcome.report.metrics) == 2001
    assert outcome.report.message == "DONE"


def test_what_a_child_prints_after_the_main_exit_is_not_the_runners(tmp_path: Path) -> None:
    # In a container the child dies with the main process, so its later line never
    # reaches the log; here the group is killed once the pipe is drained.
    pid_file = tmp_path / "child"
    outcome, elapsed = run(
        f"echo bw=1; (sleep 0.5; echo late=1; sleep 300) & echo $! > {pid_file}; echo DONE"
    )
    assert outcome.report.metrics == {"bw": "1"}, "a line printed after the exit was read"
    assert elapsed < 1.0
    assert _dies(int(pid_file.read_text()), within=0.5)


def test_a_child_that_keeps_printing_cannot_hold_the_attempt_after_the_main_exit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(process, "DRAIN_AFTER_EXIT_SECONDS", 0.5)
    outcome, elapsed = run("echo bw=1; (yes tick &); sleep 0.2; echo DONE")
    assert elapsed < 0.2 + 0.5 + process.DRAIN_AFTER_KILL_SECONDS + 2.0
    assert not outcome.termination.deadline_exceeded
    assert outcome.report.metrics == {"bw": "1"}


def test_a_child_that_left_the_group_cannot_hold_reading_open_after_the_main_exit(
    tmp_path: Path,
) -> None:
    # setsid puts the child beyond killpg: reading stops a bounded moment after the kill.
    pid_file = tmp_path / "escaped"
    script = f"setsid sh -c 'echo $$ > {pid_file}; exec sleep 30' & sleep 0.3; echo bw=1"
    try:
        outcome, elapsed = run(script)
        assert elapsed < 0.3 + process.DRAIN_AFTER_KILL_SECONDS + 2.5
        assert not outcome.termination.deadline_exceeded
        assert outcome.report.metrics == {"bw": "1"}
    finally:
        with contextlib.suppress(FileNotFoundError, ValueError, ProcessLookupError):
            os.kill(int(pid_file.read_text()), signal.SIGKILL)


def test_a_main_process_that_exits_in_the_grace_takes_its_group_with_it() -> None:
    # The main process dies at the deadline's SIGTERM; its child ignores SIGTERM. As in
    # a container, the child goes with the main process, not after the whole grace.
    outcome, elapsed = run(
        "(trap '' TERM; exec sleep 1000) & echo bw=1; wait", deadline=1.0, kill_grace_seconds=20
    )
    assert elapsed < 1.0 + 5.0, f"the grace was waited out ({elapsed:.1f} s)"
    assert outcome.termination.deadline_exceeded  # the main process still ran at the deadline
