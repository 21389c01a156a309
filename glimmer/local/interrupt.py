"""SIGINT and SIGTERM on ``glimmer run`` become one exception the dispatcher can settle.

Ctrl-C in a terminal reaches only the foreground process group, and every runner runs
in a session of its own, so an interrupt that merely killed ``glimmer`` would orphan
the runner and lose every verdict already reached. Instead the first signal raises
:class:`Interrupted` in the main thread; the process supervisor stops the runner's
whole group on the way out and the dispatcher records what was not finished as Error
(never Passed, never Failed) before ``run.json`` is written.

Later signals are absorbed while that cleanup runs (it is bounded: SIGKILL follows a
short grace), so a second Ctrl-C cannot cut the writing of ``run.json`` half way.
Around process creation the signal is deferred: raised after ``Popen`` returns, so a
runner can never be started without the supervisor that will stop it.

What a stopped run records is here too: every test it had not settled is Error, in
flight and not yet started alike (:func:`settle_interrupted`, :func:`not_started`), for
a ``run.json`` holding only the tests that happened to finish could read Passed.
(:mod:`glimmer.local.attempts` records the attempt that was in flight.)
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from dataclasses import replace
from types import FrameType
from typing import Final

from glimmer.local.model import LocalOptions, LocalResult
from glimmer.plan import PlannedTest
from glimmer.verdict import Phase, TestResultState

#: The signals ``glimmer run`` turns into :class:`Interrupted` (SIGHUP: the terminal
#: closed, which would otherwise orphan the runner just the same).
STOP_SIGNALS: Final = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Interrupted(KeyboardInterrupt):
    """The operator asked ``glimmer run`` to stop (Ctrl-C or SIGTERM)."""

    def __init__(self, signal_name: str) -> None:
        super().__init__(signal_name)
        self.signal_name = signal_name


class _State:
    fired: str = ""
    deferring: int = 0
    pending: str = ""


_state = _State()


def _handler(signum: int, frame: FrameType | None) -> None:
    name = signal.Signals(signum).name
    if _state.fired:
        return  # cleanup is already under way and bounded; let it finish
    if _state.deferring:
        _state.pending = _state.pending or name
        return
    _state.fired = name
    raise Interrupted(name)


@contextlib.contextmanager
def signals_interrupt() -> Iterator[None]:
    """Turn SIGINT/SIGTERM into :class:`Interrupted` for the duration (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    # A signal the parent chose to ignore (``nohup``, a background job) stays ignored.
    previous = {
        sig: signal.signal(sig, _handler)
        for sig in STOP_SIGNALS
        if signal.getsignal(sig) is not signal.SIG_IGN
    }
    _state.fired = _state.pending = ""
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        _state.fired = _state.pending = ""


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """Hold an interrupt until the block ends (process creation must not be split)."""
    _state.deferring += 1
    try:
        yield
    finally:
        _state.deferring -= 1
    if not _state.deferring and _state.pending and not _state.fired:
        name, _state.pending = _state.pending, ""
        _state.fired = name
        raise Interrupted(name)


def why_stopped(exc: BaseException) -> str:
    """What stopped the run, as its record says it (``LocalRun.stopped``)."""
    if isinstance(exc, Interrupted):
        return f"interrupted ({exc.signal_name})"
    if isinstance(exc, KeyboardInterrupt):
        return "interrupted (SIGINT)"
    return f"internal error: {type(exc).__name__}: {exc}"


def not_started(test: PlannedTest, *, options: LocalOptions, why: str) -> LocalResult:
    """A test the stopped run never reached: Error, so the run cannot read Passed."""
    kind = test.spec.get("kind")
    scope = test.spec.get("scope")
    return LocalResult(
        state=TestResultState(
            name=test.name,
            kind=kind if isinstance(kind, str) else "",
            required=test.required,
            phase=Phase.ERROR,
            message=f"{why} before this test ran; no verdict",
        ),
        scope=scope if isinstance(scope, str) else "Node",
        node=options.node,
        nodes=options.nodes,
        variant_axes=dict(test.axes),
    )


def settle_interrupted(
    results: list[LocalResult], *, why: str = "interrupted"
) -> list[LocalResult]:
    """Mark anything still open as Error: an interrupted run judged nothing it didn't finish."""
    return [
        replace(
            r,
            state=replace(r.state, phase=Phase.ERROR, message=f"{why} before settling; no verdict"),
        )
        if r.state.open
        else r
        for r in results
    ]
