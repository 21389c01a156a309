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
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType
from typing import Final

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
