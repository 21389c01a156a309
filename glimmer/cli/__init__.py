"""The `glimmer` command line.

Each sub-command lives in its own module and is imported only when invoked, so
start-up stays fast (``glimmer run`` must launch its first runner within 0.5 s).
"""

from __future__ import annotations

import importlib
from typing import Any

import click

# sub-command name -> "module:attribute" of its click command.
_COMMANDS: dict[str, str] = {
    "dev": "glimmer.cli.dev:dev",
    "crds": "glimmer.cli.crds:crds",
    "evaluate": "glimmer.cli.evaluate:evaluate",
    "fingerprint": "glimmer.cli.fingerprint:fingerprint",
    "lint": "glimmer.cli.lint:lint",
    "run": "glimmer.cli.run:run",
    "manager": "glimmer.cli.manager:manager",
    "merge": "glimmer.cli.merge:merge",
    "plan": "glimmer.cli.plan:plan",
    "report": "glimmer.cli.report:report",
    "schedule": "glimmer.cli.schedule:schedule",
}


class _LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(_COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = _COMMANDS.get(cmd_name)
        if target is None:
            return None
        module_name, attr = target.split(":")
        command: Any = getattr(importlib.import_module(module_name), attr)
        assert isinstance(command, click.Command)
        return command


@click.group(cls=_LazyGroup)
@click.version_option(package_name="glimmer")
def main() -> None:
    """Glimmer: hardware acceptance testing (burn-in) for GPU/accelerator fleets."""
