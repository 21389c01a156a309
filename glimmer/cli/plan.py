"""``glimmer plan``: ``glimmer run --dry-run`` under its own name (N1).

The same checks as ``run`` (files, flags, plan refusals, lint, ``status.hostIP``), then
each execution's image or UNRESOLVED, command, gates, variant axes and environment;
nothing runs and no GPU is needed. Sharing ``run``'s callback keeps one place for every
check, so the plan shown is what ``run`` would run. Only the options that change what
the plan shows are offered (N12): where results go, retries, the link session and the
sinks act only once something runs, so ``plan --help`` does not list them and passing
one is a usage error rather than a flag silently ignored.
"""

from __future__ import annotations

from typing import Any, Final

import click

from glimmer.cli.run import run

#: ``run`` options that act only once something runs; ``plan`` runs nothing.
RUN_ONLY: Final = frozenset(
    {
        "dry_run",
        "report_dir",
        "retry_on_error",
        "server_record",
        "session",
        "sink_url",
        "sink_token_file",
        "sink_insecure_skip_tls_verify",
        "sink_timeout",
        "sink_ca_file",
        "sink_signing_key_file",
    }
)
_SHOWN = [p for p in run.params if p.name not in RUN_ONLY]


def _plan(**options: Any) -> Any:
    """``run``'s callback with each run-only option at the value ``run`` gives it unset."""
    assert run.callback is not None
    ctx = click.get_current_context()
    unset = {
        p.name: p.type_cast_value(ctx, p.get_default(ctx))
        for p in run.params
        if p.name in RUN_ONLY and p.name != "dry_run"
    }
    return run.callback(**options, **unset, dry_run=True)


plan = click.Command(
    name="plan",
    callback=_plan,
    params=_SHOWN,
    help="Show what glimmer run would run (image or UNRESOLVED, gates, axes, env); run nothing.",
)
