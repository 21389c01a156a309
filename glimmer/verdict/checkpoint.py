"""Checkpoints: a running runner's output read without judging it (H1, H2, G6, N6).

Both dispatchers checkpoint through these functions, so a checkpoint means the same
thing in a cluster and on a bare host: the operator reads a running pod's whole log
(``glimmer.controllers.run.evidence``), ``glimmer run`` everything its runner has
printed so far (``glimmer.local.attempts``). What is decided here, once:

* when a checkpoint is due (:func:`checkpoint_wait`): the test's
  ``checkpointIntervalSeconds`` after the result's start or its last checkpoint;
* how a running runner's output is read (:class:`RunningLog`): every complete line
  through the contract's reader, never the unterminated last one, which may be half a
  number (``gpuTempC=10`` of ``gpuTempC=105``);
* what is kept (:func:`checkpoint_reading`): nothing from a read that stopped short
  (I11: a prefix can hold values the runner has since superseded) or that holds no
  metric yet, else the metrics so far;
* what the result shows (:func:`checkpoint_metrics`): those metrics, or for a soak the
  fold of its aggregate with the window so far (G6; the aggregate itself is never
  written by a checkpoint);
* the ``Checkpoint`` envelope's sequence (:func:`checkpoint_sequence`, H2), derived
  from the clock so that its delivery ID is the same however often it is computed.

Nothing here applies a threshold or changes a phase: a checkpoint is evidence, never a
verdict. Times are seconds since the epoch (the caller converts its own stamps).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Final

from glimmer.contract.report import MAX_LINE_BYTES, ReportReader, RunnerReport
from glimmer.verdict.soak import fold_metrics

#: The exit code a running runner's output is read with: it has none yet, and a
#: checkpoint never looks at one (no phase is decided from it).
RUNNING_EXIT_CODE: Final = 0


class RunningLog:
    """A running runner's output, as a checkpoint reads it (H1, I11).

    ``feed`` takes bytes as they arrive, in any chunking; only complete lines reach
    the contract's reader. A line longer than the reader's limit can never be a metric
    (I13), so it is handed on without waiting for its end. :meth:`finish` ends the read
    (the operator reads the whole log afresh at every checkpoint); :meth:`snapshot`
    reads what has arrived so far and keeps reading (``glimmer run`` follows its
    runner's output for the whole attempt).
    """

    def __init__(self, *, kind: str) -> None:
        self._reader = ReportReader(kind=kind)
        #: Bytes after the last newline: maybe half a line.
        self._held = bytearray()

    def feed(self, chunk: bytes) -> None:
        self._held += chunk
        end = self._held.rfind(b"\n") + 1
        if end == 0 and len(self._held) <= MAX_LINE_BYTES:
            return
        # Past the line limit the line can never be a metric: hand it on.
        end = end or len(self._held)
        self._reader.feed(bytes(self._held[:end]))
        del self._held[:end]

    def finish(self, *, exit_code: int = RUNNING_EXIT_CODE) -> RunnerReport:
        """What the complete lines declared; the reader is spent."""
        return self._reader.finish(exit_code=exit_code)

    def snapshot(self) -> RunnerReport:
        """What the complete lines so far declared; reading goes on."""
        return copy.deepcopy(self._reader).finish(exit_code=RUNNING_EXIT_CODE)


def checkpoint_wait(interval_seconds: int, *, since: float | None, now: float) -> float | None:
    """H1: seconds until the next checkpoint of a started, open result is due (0 or less:
    due now); None when the test takes no checkpoints (an interval of 0 or less).

    ``since`` is the result's last checkpoint, else its start (None: due now)."""
    if interval_seconds <= 0:
        return None
    if since is None:
        return 0.0
    return interval_seconds - (now - since)


def checkpoint_reading(report: RunnerReport, *, whole: bool) -> dict[str, str] | None:
    """H1, I11: the metrics a checkpoint keeps, sorted, or None when it keeps nothing:
    the read stopped short of the output's end (``whole`` false; a prefix can hold a
    value the runner has since superseded) or nothing has been measured yet. The
    running attempt's ``metrics`` are these; the result's are :func:`checkpoint_metrics`."""
    if not whole or not report.metrics:
        return None
    return dict(sorted(report.metrics.items()))


def checkpoint_metrics(
    window: Mapping[str, str], *, aggregate: Mapping[str, str] | None
) -> dict[str, str]:
    """G6: what a checkpoint shows as the result's ``metrics``: the window so far, or
    for a segmented soak (``aggregate`` its persisted fold, ``{}`` before any segment)
    ``fold(aggregate, window so far)``. The aggregate itself is never written here."""
    if aggregate is None:
        return dict(sorted(window.items()))
    return fold_metrics(aggregate, window)


def checkpoint_sequence(
    intervals: Iterable[int], *, started: float | None, now: float
) -> int | None:
    """H2: ``floor((now - run start) / the plan's smallest positive interval)``, the
    ``Checkpoint`` envelope's sequence and delivery key; None when no test of the plan
    checkpoints or the run has no start."""
    positive = [i for i in intervals if i > 0]
    if not positive or started is None:
        return None
    return int((now - started) // min(positive))
