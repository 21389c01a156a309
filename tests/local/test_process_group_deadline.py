"""I27: the local deadline bounds the runner's whole process group.

A runner still running at the deadline, with background children holding stdout open,
must be stopped there (SIGTERM to the group, SIGKILL after the grace), its attempt
Error by A14, never a verdict; reading output never blocks past that; output is
streamed in bounded memory. (A runner whose first process exits before the deadline
ends its attempt then: ``test_main_process_exit_ends_the_attempt.py``.)
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from glimmer.local import attempts, process
from glimmer.local.dispatcher import LocalOptions, run_plan
from glimmer.local.process import ProcessResult, run_runner
from glimmer.local.results import exit_status
from glimmer.plan import PinnedPlan, build_plan
from glimmer.verdict import Phase, apply_termination, judge_attempt
from glimmer.verdict.termination import DEADLINE_MESSAGE

ENV = {"PATH": "/usr/bin:/bin"}


def run(script: str, *, deadline: float = 2.0, grace: float = 2.0, **kw: Any) -> ProcessResult:
    return run_runner(
        command=["sh", "-c", script],
        env=ENV,
        kind="custom",
        deadline_seconds=deadline,
        raw_log=None,
        kill_grace_seconds=grace,
        **kw,
    )


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state not in ("Z", "X")


def _dies(pid: int, *, within: float = 3.0) -> bool:
    """SIGKILL is delivered asynchronously: give the kernel a moment to finish the kill."""
    until = time.monotonic() + within
    while _alive(pid):
        if time.monotonic() > until:
            return False
        time.sleep(0.02)
    return True


@pytest.mark.parametrize(
    ("script", "bound"),
    [
        ("sleep 1000 & echo bw=99; wait", 2.0 + 1.5),
        ("(while :; do echo tick; sleep 0.05; done) & echo bw=99; wait", 2.0 + 1.5),
        # the runner and its child ignore SIGTERM: only SIGKILL after the grace stops them
        ("trap '' TERM; sleep 1000 & echo bw=99; wait", 2.0 + 2.0 + 1.5),
    ],
    ids=["sleep-in-background", "child-keeps-printing", "child-ignores-sigterm"],
)
def test_I27_deadline_bounds_the_process_group(
    script: str, bound: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A long drain makes the SIGKILL after the grace the only way to end in the bound.
    monkeypatch.setattr(process, "DRAIN_AFTER_KILL_SECONDS", 30.0)
    started = time.monotonic()
    outcome = run(script)
    elapsed = time.monotonic() - started
    assert elapsed < bound, f"a 2 s deadline took {elapsed:.1f} s"
    assert elapsed >= 2.0  # the deadline ended it
    assert outcome.termination.deadline_exceeded
    assert outcome.termination.reason == "DeadlineExceeded"
    verdict = judge_attempt(
        outcome.report, kind="custom", thresholds=[], dispatcher_provenance=None
    )
    verdict = apply_termination(verdict, outcome.termination, runner_line=outcome.report.message)
    assert verdict.phase is Phase.ERROR and verdict.message == DEADLINE_MESSAGE


def test_I27_a_child_that_left_the_group_cannot_hold_reading_open(tmp_path: Path) -> None:
    # setsid puts the child beyond killpg; reading still stops a moment after SIGKILL.
    pid_file = tmp_path / "escaped"
    script = f"setsid sh -c 'echo $$ > {pid_file}; exec sleep 30' & echo bw=1; sleep 30"
    started = time.monotonic()
    try:
        outcome = run(script, deadline=1.0, grace=1.0)
        assert time.monotonic() - started < 1.0 + 1.0 + 2.5
        assert outcome.termination.deadline_exceeded
    finally:
        with contextlib.suppress(FileNotFoundError, ValueError, ProcessLookupError):
            os.kill(int(pid_file.read_text()), signal.SIGKILL)


def test_I27_what_is_left_of_the_group_is_killed_when_the_runner_ends(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    outcome = run(f"sleep 1000 >/dev/null 2>&1 & echo $! > {pid_file}; echo bw=1", deadline=30)
    assert not outcome.termination.deadline_exceeded
    assert outcome.report.metrics == {"bw": "1"}
    assert _dies(int(pid_file.read_text()))


def test_I27_a_runner_that_finishes_in_time_is_not_cut() -> None:
    started = time.monotonic()
    outcome = run("echo bw=1; exec >&-; sleep 0.3; exit 0", deadline=10)
    assert time.monotonic() - started < 5
    assert not outcome.termination.deadline_exceeded
    assert outcome.termination.exit_code == 0 and outcome.report.metrics == {"bw": "1"}


def test_I27_output_is_streamed_while_the_runner_runs() -> None:
    seen: list[float] = []
    started = time.monotonic()
    outcome = run(
        "echo a=1; sleep 1; echo b=2",
        deadline=10,
        on_output=lambda _: seen.append(1.0 * time.monotonic()),
    )
    assert seen and seen[0] - started < 0.8, "the first line reached the reader only at exit"
    assert outcome.report.metrics == {"a": "1", "b": "2"}


def test_I27_unbounded_output_is_read_in_bounded_memory(tmp_path: Path) -> None:
    # 64 MiB on one line, then a metric: the reader keeps at most one line's limit.
    script = "head -c 67108864 /dev/zero | tr '\\0' x; echo; echo bw=7"
    tracemalloc.start()
    try:
        outcome = run(script, deadline=60)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16 * 1024 * 1024, f"peak {peak} bytes while streaming 64 MiB"
    assert outcome.report.metrics.get("bw") == "7"


def test_I27_dispatcher_records_the_group_deadline_as_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(attempts, "_deadline", lambda test: 2)
    outcome = build_plan(
        profile={
            "tests": [
                {
                    "inline": {
                        "kind": "custom",
                        "runner": {"command": ["sh", "-c", "sleep 1000 & echo bw=99; wait"]},
                        "thresholds": [{"metric": "bw", "comparison": "Equal", "value": "99"}],
                    }
                }
            ]
        },
        tests={},
        targets=["n"],
    )
    assert isinstance(outcome, PinnedPlan)

    class Quiet:
        def attempt_started(self, **_: Any) -> None: ...
        def attempt_finished(self, **_: Any) -> None: ...
        def test_finished(self, **_: Any) -> None: ...

    started = time.monotonic()
    local = run_plan(outcome, options=LocalOptions(node="n", report_dir=tmp_path), reporter=Quiet())
    assert time.monotonic() - started < 15
    (result,) = local.results
    assert result.state.phase is Phase.ERROR and result.state.message == DEADLINE_MESSAGE
    assert exit_status(local.results) == 3  # never 0
