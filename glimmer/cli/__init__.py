"""The `glimmer` command line, and the `kubectl glimmer` plugin.

Each sub-command lives in its own module and is imported only when invoked, so
start-up stays fast (``glimmer run`` must launch its first runner within 0.5 s).
kubectl runs any executable named ``kubectl-glimmer`` on ``PATH`` as ``kubectl
glimmer``; that entry point (:func:`kubectl_main`) is this CLI restricted to the
commands that read the cluster.
"""

from __future__ import annotations

import importlib
from typing import Any, Final

import click

# sub-command name -> "module:attribute" of its click command.
_COMMANDS: dict[str, str] = {
    "dev": "glimmer.cli.dev:dev",
    "conformance": "glimmer.cli.conformance:conformance",
    "coverage": "glimmer.cli.coverage:coverage",
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
    "verify": "glimmer.cli.verify:verify",
    "version": "glimmer.cli.version:version",
}

#: What ``kubectl glimmer`` runs: the commands about a cluster's runs and nodes.
PLUGIN_COMMANDS: Final = ("fingerprint", "report", "schedule")


def _load(cmd_name: str) -> click.Command:
    module_name, attr = _COMMANDS[cmd_name].split(":")
    command: Any = getattr(importlib.import_module(module_name), attr)
    assert isinstance(command, click.Command)
    return command


class _LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(_COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return _load(cmd_name) if cmd_name in _COMMANDS else None


class _PluginGroup(click.Group):
    """``kubectl glimmer``: only :data:`PLUGIN_COMMANDS`; another glimmer command is a
    usage error naming ``glimmer``, which has it."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(PLUGIN_COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in PLUGIN_COMMANDS:
            return _load(cmd_name)
        if cmd_name in _COMMANDS and not ctx.resilient_parsing:
            ctx.fail(
                f"'{cmd_name}' is not a kubectl plugin command (kubectl glimmer runs "
                f"{', '.join(PLUGIN_COMMANDS)}); run it as: glimmer {cmd_name}"
            )
        return None


@click.group(cls=_LazyGroup)
@click.version_option(package_name="glimmer")
def main() -> None:
    """Glimmer: hardware acceptance testing (burn-in) for GPU/accelerator fleets."""


@click.group(cls=_PluginGroup)
@click.version_option(package_name="glimmer")
def _plugin() -> None:
    """Glimmer as a kubectl plugin: a run's report, a schedule's ticks, a node's
    fingerprint. Everything else is `glimmer`'s."""


def kubectl_main() -> None:
    """The ``kubectl-glimmer`` executable, shown in help and errors as kubectl shows it."""
    _plugin(prog_name="kubectl glimmer", complete_var="_KUBECTL_GLIMMER_COMPLETE")
