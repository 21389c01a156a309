"""I3: live progress for long work, and only a terminal gets redrawn output.

The reporter is driven by hand (a fake clock, no ticker thread), so nothing here
depends on how fast the machine is.
"""

from __future__ import annotations

import re
from io import StringIO
from typing import Any

import pytest
from rich.console import Console

from glimmer.local.dispatcher import progress_window
from glimmer.local.progress import RunProgress, clock_text
from glimmer.plan import PinnedPlan, PlannedTest, build_plan
from glimmer.verdict import AttemptVerdict, Phase, Provenance

SGR = re.compile(r"\x1b\[[0-9;]*m")  # a colour or weight escape


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def verdict(phase: Phase = Phase.PASSED) -> AttemptVerdict:
    return AttemptVerdict(
        phase=phase,
        message="",
        exit_code=0,
        metrics={},
        unmeasurable=(),
        provenance=Provenance.SILICON,
    )


def reporter(*, terminal: bool, colour: bool = True) -> tuple[RunProgress, StringIO, Clock]:
    out = StringIO()
    console = Console(
        file=out,
        force_terminal=terminal,
        color_system="standard" if colour else None,
        width=120,
    )
    clock = Clock()
    return RunProgress(sim=False, console=console, clock=clock, ticking=False), out, clock


def test_I3_a_soak_on_a_terminal_shows_a_bar_with_time_left() -> None:
    progress, out, clock = reporter(terminal=True)
    progress.attempt_started(test="soak", attempt=1, index=0, total=2, window_seconds=600)
    clock.now += 150
    progress.tick()
    drawn = out.getvalue()
    assert "[1/2] soak" in drawn and "25%" in drawn and "7m30s left" in drawn
    assert "━" in drawn  # the bar itself
    progress.attempt_finished(test="soak", verdict=verdict(), seconds=612.0)
    assert "[1/2] soak: PASSED in 612.0s" in SGR.sub("", out.getvalue())


def test_I3_past_its_window_the_bar_says_the_runner_is_finishing() -> None:
    progress, out, clock = reporter(terminal=True)
    progress.attempt_started(test="soak", attempt=2, index=0, total=1, window_seconds=60)
    clock.now += 75
    progress.tick()
    drawn = out.getvalue()
    assert "100%" in drawn and "window over 15s ago, finishing" in drawn
    assert "(attempt 2)" in drawn


def test_I3_off_a_terminal_there_are_no_escape_codes_and_no_redraws() -> None:
    progress, out, clock = reporter(terminal=False)
    progress.attempt_started(test="soak", attempt=1, index=0, total=1, window_seconds=600)
    clock.now += 300
    progress.tick()
    progress.attempt_finished(test="soak", verdict=verdict(Phase.FAILED), seconds=601.0)
    text = out.getvalue()
    assert "\x1b" not in text and "\r" not in text
    assert text.splitlines() == [
        "[1/1] soak: running (window 10m00s)",
        "[1/1] soak: FAILED in 601.0s",
    ]


def test_I3_work_without_a_window_keeps_the_ticker() -> None:
    progress, out, clock = reporter(terminal=True)
    progress.attempt_started(test="smoke", attempt=1, index=0, total=1, window_seconds=None)
    clock.now += 2.5
    progress.tick()
    drawn = out.getvalue()
    assert "\r[1/1] smoke: running   2.5s" in drawn
    assert "left" not in drawn and "━" not in drawn


def test_I3_colour_only_where_the_terminal_supports_it() -> None:
    coloured, out, _ = reporter(terminal=True)
    coloured.attempt_started(test="t", attempt=1, index=0, total=1)
    coloured.attempt_finished(test="t", verdict=verdict(Phase.ERROR), seconds=1.0)
    assert SGR.search(out.getvalue())
    plain, out, _ = reporter(terminal=True, colour=False)  # e.g. NO_COLOR, TERM=dumb
    plain.attempt_started(test="t", attempt=1, index=0, total=1, window_seconds=30)
    plain.tick()
    plain.attempt_finished(test="t", verdict=verdict(Phase.ERROR), seconds=1.0)
    assert not SGR.search(out.getvalue())
    assert "t: ERROR in 1.0s" in out.getvalue()


def test_I3_an_interrupted_attempt_takes_its_bar_down() -> None:
    progress, out, _ = reporter(terminal=True)
    progress.attempt_started(test="soak", attempt=1, index=0, total=1, window_seconds=600)
    progress.close()
    assert progress._bar is None  # the live display is stopped, the terminal restored
    assert "\x1b[?25h" in out.getvalue()  # the cursor is shown again


def _planned(test: dict[str, Any]) -> PlannedTest:
    outcome = build_plan(profile={"tests": [{"inline": test}]}, tests={}, targets=["n"])
    assert isinstance(outcome, PinnedPlan), outcome
    return outcome.tests[0]


@pytest.mark.parametrize(
    ("test", "window"),
    [
        ({"kind": "memory-stress", "durationSeconds": 90}, 90.0),
        ({"kind": "thermal-soak", "durationSeconds": 1200}, 1200.0),
        ({"kind": "gpu-burn"}, 600.0),  # the default window the runner is given
        (
            {"kind": "gpu-burn", "durationSeconds": 1200, "soak": {"segmentSeconds": 600}},
            1200.0,  # N2: one process for the whole soak
        ),
        ({"kind": "custom", "durationSeconds": 900, "soak": {"segmentSeconds": 300}}, 900.0),
        ({"kind": "compute-smoke"}, None),  # burst: no window to count down
        ({"kind": "custom", "durationSeconds": 900}, None),  # unknown length of work
    ],
)
def test_I3_soaks_and_stress_have_a_known_window(
    test: dict[str, Any], window: float | None
) -> None:
    assert progress_window(_planned(test)) == window


def test_I3_clock_text_is_short() -> None:
    assert [clock_text(s) for s in (0, 7, 65, 3723)] == ["0s", "7s", "1m05s", "1h02m03s"]
