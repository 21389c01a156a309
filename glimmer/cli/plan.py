"""``glimmer plan``: ``glimmer run --dry-run`` under its own name (N1).

The same options and the same checks as ``run`` (files, flags, plan refusals, lint,
``status.hostIP``), then each execution's image or UNRESOLVED, command, gates, variant
axes and environment; nothing runs and no GPU is needed. Sharing ``run``'s callback
keeps one place for every check, so the plan shown is what ``run`` would run.
"""

from __future__ import annotations

from typing import Any

import click

from glimmer.cli.run import run


def _plan(**options: Any) -> Any:
    assert run.callback is not None
    return run.callback(**options, dry_run=True)


plan = click.Command(
    name="plan",
    callback=_plan,
    params=[p for p in run.params if p.name != "dry_run"],
    help="Show what glimmer run would run (image or UNRESOLVED, gates, axes, env); run nothing.",
)
