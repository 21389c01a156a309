"""The session's leak check names only our own children, never a later process that was
given a dead child's pid (CI: a 24-minute run on a busy machine wrapped pid_max=32768,
and an unrelated process holding a reused pid failed a suite whose every test passed)."""

from __future__ import annotations

import subprocess
import sys

from glimmer.testing import _process


def test_a_live_child_with_its_own_start_time_survives() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        spawned = {child.pid: _process.start_time(child.pid)}
        assert spawned[child.pid] is not None
        assert _process.surviving(spawned) == [child.pid]
    finally:
        child.kill()
        child.wait()


def test_a_pid_now_held_by_a_process_started_at_another_time_is_not_our_child() -> None:
    stranger = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        # What SPAWNED holds for a child of ours that died, its pid since given to another.
        reused = {stranger.pid: "1"}
        assert _process.surviving(reused) == []
        assert _process.surviving({stranger.pid}) == [stranger.pid]  # pids alone: alive
    finally:
        stranger.kill()
        stranger.wait()


def test_a_reaped_child_is_gone() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    started = _process.start_time(child.pid)
    child.wait()
    assert _process.surviving({child.pid: started}) == []
