"""Helpers shared by CLI commands: one-line errors, never a traceback."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import NoReturn, ParamSpec, TypeVar

import click

from glimmer.cli.exits import USAGE
from glimmer.local.progress import PHASE_STYLES
from glimmer.verdict import Phase

_P = ParamSpec("_P")
_R = TypeVar("_R")

#: Exit code for bad input (missing file, bad YAML, wrong kind, missing field): a
#: usage error, click's own 2 (:mod:`glimmer.cli.exits`).
BAD_INPUT = USAGE


def fail(message: str, *, code: int = BAD_INPUT) -> NoReturn:
    click.echo(f"glimmer: error: {message}", err=True)
    sys.exit(code)


OUTPUT_FORMAT = click.Choice(["text", "json"])

#: How a phase is coloured wherever the CLI prints one (one table, the live progress's).
PHASE_COLOURS: dict[Phase, str] = PHASE_STYLES


def no_traceback(*, code: int) -> Callable[[Callable[_P, _R]], Callable[_P, _R]]:
    """Turn an unexpected exception or Ctrl-C into one line and exit ``code``.

    Without this, click prints a traceback and exits 1, and for ``run`` and
    ``evaluate`` 1 means "the hardware Failed": a bug or an interrupt must never say
    that. ``code`` is the command's "not judged" status.
    """

    def decorate(command: Callable[_P, _R]) -> Callable[_P, _R]:
        @functools.wraps(command)
        def guarded(*args: _P.args, **kwargs: _P.kwargs) -> _R:
            try:
                return command(*args, **kwargs)
            except (click.exceptions.Exit, click.ClickException, SystemExit):
                raise
            except KeyboardInterrupt:
                fail("interrupted", code=code)
            except Exception as exc:
                fail(f"internal error: {type(exc).__name__}: {exc}", code=code)

        return guarded

    return decorate
