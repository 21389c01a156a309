"""Helpers shared by CLI commands: one-line errors, never a traceback."""

from __future__ import annotations

import sys
from typing import NoReturn

import click

#: Exit code for bad input (missing file, bad YAML, wrong kind, missing field).
BAD_INPUT = 2


def fail(message: str, *, code: int = BAD_INPUT) -> NoReturn:
    click.echo(f"glimmer: error: {message}", err=True)
    sys.exit(code)


OUTPUT_FORMAT = click.Choice(["text", "json"])
