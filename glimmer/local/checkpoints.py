"""Checkpoints on a bare host: a running runner's output read without judging it (H1, N6).

The operator reads a running pod's whole log once ``checkpointIntervalSeconds`` has
passed since the result started or was last checkpointed; ``glimmer run`` does the same
with its own runner, through the same functions (:mod:`glimmer.verdict.checkpoint`): the
same cadence, the same read (every complete line, never the unterminated last one),
the same rule for what is kept, the same G6 fold for a soak and the same H2 sequence.
The difference is only where the bytes come from: the operator fetches the log from the
kubelet at each checkpoint, a bare host follows its runner's output as it is printed
(every byte from the first, so it is the whole log), and a thread wakes at the due time
whether or not the runner printed anything.

What a checkpoint keeps goes on the open result (``checkpoint_metrics``,
``last_checkpoint_at``; ``lastCheckpointAt`` in ``run.json``, as in the status) and on
the in-flight attempt (``flight_metrics``, kept as evidence if the attempt is stopped
before it finishes, I23). Nothing here changes a phase or applies a threshold: the
attempt is judged on its whole output when it ends, as the operator judges it.

Only a deciding side checkpoints (a Node-scope run, a Pair client), as the operator
reads only the client's (rank 0's) pod (F9); a Pair server or a Group rank records and
decides nothing, so it neither checkpoints nor delivers.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Final

from glimmer.local.model import LocalOptions, LocalResult
from glimmer.plan import PinnedPlan, PlannedTest
from glimmer.plan import spec as specs
from glimmer.verdict.checkpoint import (
    RunningLog,
    checkpoint_metrics,
    checkpoint_reading,
    checkpoint_sequence,
    checkpoint_wait,
)

#: How often the watch looks at the clock while a checkpoint is not yet due: the due
#: time is decided by :func:`checkpoint_wait`; this only bounds how late it is noticed.
_LOOK_SECONDS: Final = 0.25


@dataclass
class RunCheckpoints:
    """What a checkpoint needs from the whole run: every result so far (the envelope
    carries them), the plan's intervals and the run's start (H2's sequence), and the
    sequences already owed an envelope (one per sequence, as in the operator)."""

    options: LocalOptions
    results: Sequence[LocalResult]
    intervals: tuple[int, ...]
    started_at: float
    sent: set[int] = field(default_factory=set)


def run_checkpoints(
    plan: PinnedPlan, *, options: LocalOptions, results: Sequence[LocalResult]
) -> RunCheckpoints | None:
    """The run's checkpointing, or None when this side takes none (it decides nothing,
    or no test of the plan checkpoints)."""
    if options.link is not None and not options.link.decides:
        return None
    intervals = tuple(specs.checkpoint_interval_seconds(t.spec) for t in plan.tests)
    if not any(i > 0 for i in intervals):
        return None
    started = options.run_started_at
    return RunCheckpoints(
        options=options,
        results=results,
        intervals=intervals,
        started_at=options.clock() if started is None else started,
    )


class CheckpointWatch:
    """Follows one attempt's output (:meth:`feed`) and takes its checkpoints while it
    runs; a context manager around the attempt. Inert for a test with no interval."""

    def __init__(
        self, test: PlannedTest, *, local: LocalResult, run: RunCheckpoints | None
    ) -> None:
        self._test = test
        self._local = local
        self._run = run
        self._interval = specs.checkpoint_interval_seconds(test.spec) if run is not None else 0
        self._log = RunningLog(kind=test.kind)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def active(self) -> bool:
        return self._run is not None and self._interval > 0

    def feed(self, chunk: bytes) -> None:
        """Every byte the runner prints, in order (the attempt's ``on_output``)."""
        if self.active:
            with self._lock:
                self._log.feed(chunk)

    def __enter__(self) -> CheckpointWatch:
        if self.active and self._run is not None:
            if self._local.checkpoint_origin is None:
                self._local.checkpoint_origin = self._run.options.clock()
            self._thread = threading.Thread(
                target=self._follow, name=f"checkpoint-{self._test.name}", daemon=True
            )
            self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def _follow(self) -> None:
        run = self._run
        assert run is not None
        clock = run.options.clock
        # After a read that kept nothing, the next waits an interval (the operator's
        # requeue after every read); a read that kept something restarts the interval.
        not_before: float | None = None
        while not self._stop.is_set():
            now = clock()
            since = self._local.last_checkpoint_at
            if since is None:
                since = self._local.checkpoint_origin
            wait = checkpoint_wait(self._interval, since=since, now=now)
            if wait is None:
                return
            if not_before is not None:
                wait = max(wait, not_before - now)
            if wait > 0:
                self._stop.wait(min(wait, _LOOK_SECONDS))
                continue
            self._take(run, now=now)
            not_before = now + self._interval

    def _take(self, run: RunCheckpoints, *, now: float) -> None:
        with self._lock:
            report = self._log.snapshot()
        # The bare host follows every byte the runner printed: the read is whole.
        window = checkpoint_reading(report, whole=True)
        if window is None:
            return
        local = self._local
        local.flight_metrics = window
        local.checkpoint_metrics = checkpoint_metrics(
            window, aggregate={} if specs.soak(self._test.spec) is not None else None
        )
        local.last_checkpoint_at = now
        sequence = checkpoint_sequence(run.intervals, started=run.started_at, now=now)
        owed = sequence if sequence is not None and sequence not in run.sent else None
        if owed is not None:
            run.sent.add(owed)
        listener = run.options.checkpoints
        if listener is None:
            return
        try:
            listener.checkpoint(result=local, results=run.results, envelope_sequence=owed)
        except Exception as err:  # a checkpoint is evidence: showing it never stops a run
            sys.stderr.write(
                f"glimmer: warning: checkpoint of test {self._test.name!r} not shown or "
                f"delivered: {type(err).__name__}: {err}\n"
            )
