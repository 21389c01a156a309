"""Live progress of ``glimmer run``: what runs now and, for long work, how long is left.

A soak or a stress test runs for a window the plan knows (``BURNIN_DURATION_SECONDS``,
:func:`glimmer.local.attempts.progress_window`), so on a terminal it gets a bar
with the time left; other work gets a ticking elapsed time. Off a terminal (a pipe, a
CI log) nothing is redrawn and no escape code is written: one line when an attempt
starts and one when it ends. Colour only where the terminal supports it (rich
decides, honouring ``NO_COLOR`` and ``TERM=dumb``).

The bar measures the clock, never the runner: it says how much of the window has
passed, not that anything was measured, and it is gone before the verdict's line.

A test with ``checkpointIntervalSeconds`` shows each checkpoint as it is taken (H1,
:mod:`glimmer.local.checkpoints`): one line with the metrics read so far, printed above
the bar on a terminal, marked as evidence: a checkpoint never judges.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import Final

from rich.console import Console
from rich.progress import BarColumn, Progress, ProgressColumn, Task, TaskID, TextColumn
from rich.text import Text

from glimmer.local.dispatcher import LocalResult
from glimmer.verdict import AttemptVerdict, Phase

#: How a phase is coloured where a terminal shows colour.
PHASE_STYLES: Final[dict[Phase, str]] = {
    Phase.PASSED: "green",
    Phase.FAILED: "red",
    Phase.ERROR: "magenta",
    Phase.SKIPPED: "yellow",
    Phase.CANCELLED: "yellow",
}
_TICK_SECONDS: Final = 0.25
#: How many metrics a checkpoint line names before it says how many more there are.
CHECKPOINT_METRICS_SHOWN: Final = 6


def clock_text(seconds: float) -> str:
    """``1h02m03s`` / ``4m05s`` / ``7s``: short enough for a progress line."""
    whole = max(0, int(seconds + 0.5))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m{secs:02d}s"
    if minutes:
        return f"{minutes}m{secs:02d}s"
    return f"{secs}s"


def checkpoint_text(metrics: dict[str, str]) -> str:
    """``bw=12 gpuTempC=71 (+3 more)``: the first names in order, then how many more."""
    names = sorted(metrics)
    shown = " ".join(f"{name}={metrics[name]}" for name in names[:CHECKPOINT_METRICS_SHOWN])
    more = len(names) - CHECKPOINT_METRICS_SHOWN
    return f"{shown} (+{more} more)" if more > 0 else shown


class TimeLeftColumn(ProgressColumn):
    """Time left in the window, from the clock (not rich's speed estimate, which a
    window of known length does not need); past the window, that the runner is
    finishing (it has until its deadline, the window plus 120 s)."""

    def render(self, task: Task) -> Text:
        total = task.total or 0.0
        left = total - task.completed
        if left > 0:
            return Text(f"{clock_text(left)} left", style="cyan")
        over = float(task.fields.get("over", 0.0))
        return Text(f"window over {clock_text(over)} ago, finishing", style="yellow")


class RunProgress:
    """The :class:`glimmer.local.model.Reporter` ``glimmer run`` draws.

    ``console`` is where it draws (stdout, or stderr under ``-o json`` so stdout holds
    only the document); ``clock`` and ``ticking`` let a test drive it without timing.
    """

    def __init__(
        self,
        *,
        sim: bool,
        side: bool = False,
        console: Console | None = None,
        err: bool = False,
        clock: Callable[[], float] = time.monotonic,
        ticking: bool = True,
    ) -> None:
        self._side = side
        self.console = console or Console(
            file=sys.stderr if err else sys.stdout, highlight=False, soft_wrap=True
        )
        self._sim = " SIMULATED" if sim else ""
        self._clock = clock
        self._ticking = ticking
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None
        self._bar: Progress | None = None
        self._task = TaskID(0)
        self._label = ""
        self._start = 0.0
        self._window: float | None = None
        self._lock = threading.Lock()

    @property
    def live(self) -> bool:
        """Whether anything is redrawn: only on a terminal."""
        return self.console.is_terminal

    def _line(self, text: Text | str) -> None:
        if not self.live and isinstance(text, Text):
            text = text.plain  # a log or a pipe gets no escape code, whatever is forced
        self.console.print(text, soft_wrap=True, highlight=False, markup=False)

    def attempt_started(
        self,
        *,
        test: str,
        attempt: int,
        index: int,
        total: int,
        window_seconds: float | None = None,
    ) -> None:
        again = f" (attempt {attempt})" if attempt > 1 else ""
        self._label = f"[{index + 1}/{total}] {test}{again}"
        self._start = self._clock()
        self._window = window_seconds if window_seconds and window_seconds > 0 else None
        if not self.live:
            window = f" (window {clock_text(self._window)})" if self._window else ""
            self._line(f"{self._label}: running{window}{self._sim}")
            return
        if self._window is not None:
            self._bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                TextColumn("{task.percentage:>3.0f}%"),
                TimeLeftColumn(),
                console=self.console,
                transient=True,
                auto_refresh=False,
                redirect_stdout=False,
                redirect_stderr=False,
            )
            self._task = self._bar.add_task(
                f"{self._label}{self._sim}", total=self._window, over=0.0
            )
            self._bar.start()
        self.tick()
        if self._ticking:
            self._stop.clear()
            self._ticker = threading.Thread(target=self._tick_loop, daemon=True)
            self._ticker.start()

    def _tick_loop(self) -> None:
        while not self._stop.wait(_TICK_SECONDS):
            self.tick()

    def tick(self) -> None:
        """Redraw once: the bar's time left, or the elapsed time."""
        with self._lock:
            elapsed = self._clock() - self._start
            if self._bar is not None and self._window is not None:
                done = min(elapsed, self._window)
                over = max(0.0, elapsed - self._window)
                self._bar.update(self._task, completed=done, over=over)
                self._bar.refresh()
            elif self.live:
                self.console.file.write(f"\r{self._label}: running {elapsed:5.1f}s{self._sim}")
                self.console.file.flush()

    def _clear(self) -> None:
        if self._ticker is not None:
            self._stop.set()
            self._ticker.join()
            self._ticker = None
        with self._lock:
            if self._bar is not None:
                self._bar.stop()  # transient: the bar is erased
                self._bar = None
            elif self.live:
                self.console.file.write("\r\033[K")
                self.console.file.flush()

    def attempt_finished(self, *, test: str, verdict: AttemptVerdict, seconds: float) -> None:
        self._clear()
        if self._side:
            # A recording side has no verdict to show, only that its runner ended.
            self._line(
                f"{self._label}: runner exited {verdict.exit_code} in {seconds:.1f}s, "
                f"recorded{self._sim}"
            )
            return
        line = Text(f"{self._label}: ")
        line.append(str(verdict.phase).upper(), style=f"bold {PHASE_STYLES.get(verdict.phase, '')}")
        line.append(f" in {seconds:.1f}s{self._sim}")
        self._line(line)

    def test_finished(self, *, result: LocalResult) -> None:
        return None

    def checkpoint(self, *, result: LocalResult) -> None:
        """One line for a checkpoint just taken (called from the thread that follows
        the runner's output): the metrics so far, never a phase."""
        shown = checkpoint_text(result.checkpoint_metrics)
        text = f"{self._label}: checkpoint: {shown} (evidence, not a verdict){self._sim}"
        with self._lock:
            if self._bar is not None:
                self._bar.console.print(text, soft_wrap=True, highlight=False, markup=False)
                return
            if self.live:
                self.console.file.write("\r\033[K")  # the ticker's line; it redraws
            self._line(text)

    def close(self) -> None:
        """Take down the bar or ticker of an attempt that never finished (interrupted)."""
        if self._ticker is not None or self._bar is not None:
            self._clear()
