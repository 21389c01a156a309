"""``glimmer version``: what is installed, for a bug report (the reference CLI's ``version``).

The version of the installed distribution, the commit it was built from when that is
known (a ``pip install git+...`` records it; a source checkout has it in git), the
Python and the platform. A commit that cannot be learnt reads ``unknown``, never a guess.
"""

from __future__ import annotations

import json
import platform
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

import click

import glimmer
from glimmer.cli._common import OUTPUT_FORMAT

UNKNOWN = "unknown"


def installed_version() -> str:
    try:
        return metadata.version("glimmer")
    except metadata.PackageNotFoundError:
        return glimmer.__version__


def commit() -> str:
    """The commit recorded at install (PEP 610 ``vcs_info``), else the source
    checkout's ``HEAD``, else ``unknown``."""
    try:
        text = metadata.distribution("glimmer").read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        text = None
    if text:
        try:
            found = (json.loads(text).get("vcs_info") or {}).get("commit_id")
        except (ValueError, AttributeError):
            found = None
        if isinstance(found, str) and found:
            return found
    source = Path(glimmer.__file__).resolve().parent.parent
    try:
        done = subprocess.run(
            ["git", "-C", str(source), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=2,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return UNKNOWN
    head = done.stdout.strip()
    return head if done.returncode == 0 and head else UNKNOWN


def facts() -> dict[str, Any]:
    return {
        "version": installed_version(),
        "commit": commit(),
        "python": f"{platform.python_version()} ({platform.python_implementation()})",
        "platform": platform.platform(),
    }


@click.command()
@click.option("-o", "--output", "output", type=OUTPUT_FORMAT, default="text", show_default=True)
def version(output: str) -> None:
    """Show glimmer's version, the commit it was built from, Python and the platform."""
    shown = facts()
    if output == "json":
        click.echo(json.dumps(shown, indent=2))
        return
    click.echo(f"glimmer {shown['version']}")
    for key in ("commit", "python", "platform"):
        click.echo(f"{key}: {shown[key]}")
