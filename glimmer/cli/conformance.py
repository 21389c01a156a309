"""``glimmer conformance``: any runner checked against the runner contract (N15).

The runner is a command (``--command "python -m runners.clockprobe"``, another
language's binary) or an image run under a container runtime (``--image``, with
``--runtime``); ``--kind`` names the contract it claims: its markers, its provenance,
its registered metrics and the fault matrix's rows. Every case of every suite that
kind is checked by runs (:func:`runners.conformance.kind_card`): a Node kind's cases on
the simulated GPU, a Pair or Group kind's as two to four processes on loopback (the
link suite, or the fabric suite), and ``nccl``'s Node cases and its fabric Pair and
Group cases together, in parallel up to the cores, through the conformance suite's own
engine (:mod:`runners.conformance.clauses`), the one the project's runner tests use.
The card prints one row per clause: pass, fail (every problem, and the fix), not
reached (no case exercised it) or not checked (the engine has no check for it yet).

Under ``--image`` each process is its own container: a Node case runs with
``--network none``; a Pair or Group side with ``--network host``, so the sides meet on
the host's loopback (the card's header says so).

Exit status (N10's table): 0 every clause checked passed; 1 a clause failed (the
runner does not conform, as a Fail is); 2 a usage error (an unknown kind, no command, a
runtime that is not here); 3 an internal error.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import replace
from typing import Final

import click
from rich.console import Console
from rich.table import Table

from glimmer.cli import exits
from glimmer.cli._common import OUTPUT_FORMAT, fail, no_traceback
from glimmer.local.runtimes import RUNTIME_NAMES, RuntimeChoiceError, choose_runtime
from runners.catalog import RUNNERS, RunnerSpec
from runners.conformance import (
    Card,
    cases_for,
    fabric_cases_for,
    kind_card,
    link_cases_for,
    suites_of,
)
from runners.conformance.cards import FABRIC, LINK, NODE, runs_links
from runners.conformance.clauses import FAIL, NOT_CHECKED, NOT_REACHED, PASS

_STYLES: Final = {PASS: "green", FAIL: "bold red", NOT_CHECKED: "dim", NOT_REACHED: "yellow"}


#: Where a side's container lives: a Node case needs no network; the sides of a Pair
#: or Group case listen on and dial loopback addresses, so they share the host's.
NODE_NETWORK: Final = "none"
LINK_NETWORK: Final = "host"


def node_kinds() -> list[str]:
    return sorted(kind for kind, spec in RUNNERS.items() if spec.scope == "Node")


def image_command(
    *, runtime_binary: str, image: str, env_names: list[str], network: str = NODE_NETWORK
) -> list[str]:
    """The ``<runtime> run`` prefix for an image: each case's variables pass by name
    (``-e NAME``: the runtime copies the value from its own environment, and leaves an
    unset one out), so one command line serves every case; ``network`` is
    :data:`NODE_NETWORK` or :data:`LINK_NETWORK`."""
    argv = [runtime_binary, "run", "--rm", "-i", "--network", network]
    for name in env_names:
        argv += ["-e", name]
    argv.append(image)
    return argv


def case_env_names(kind: str) -> list[str]:
    """Every variable any case of the kind sets (any side, any suite): what an image
    must be handed."""
    spec = RUNNERS[kind]
    names = set(spec.test_env)
    suites = suites_of(spec)
    if NODE in suites:
        for case in cases_for(kind):
            names |= set(case.env)
    if LINK in suites:
        for link in link_cases_for(kind):
            names |= {name for side in link.sides for name in side.env}
    if FABRIC in suites:
        for fabric in fabric_cases_for(kind):
            names |= {name for side in fabric.sides for name in side.env}
    return sorted(names)


def suites_note(spec: RunnerSpec) -> str:
    """What the card ran, in words, for its header."""
    words = {
        NODE: "the Node cases (one process each)",
        LINK: f"the {spec.scope} link cases (each side its own process, on loopback)",
        FABRIC: "the fabric cases (a whole Pair or Group, each side its own process, on loopback)",
    }
    return "ran " + " and ".join(words[suite] for suite in suites_of(spec))


def _env(items: tuple[str, ...]) -> dict[str, str]:
    env = {}
    for item in items:
        name, equals, value = item.partition("=")
        if not equals or not name:
            fail(f"--env {item!r}: write NAME=VALUE (e.g. BURNIN_DISK_IO_PATH=/mnt/scratch)")
        env[name] = value
    return env


def card_json(card: Card) -> str:
    return json.dumps(
        {
            "kind": card.kind,
            "command": list(card.command),
            "notes": list(card.notes),
            "conforms": not card.failed,
            "failed": list(card.failed),
            "clauses": [
                {
                    "clause": row.clause,
                    "status": row.status,
                    "asks": row.asks,
                    "cases": row.cases,
                    "problems": list(row.problems),
                    "fix": row.fix if row.status == FAIL else None,
                }
                for row in card.rows
            ],
        },
        indent=2,
    )


def _print_card(card: Card) -> None:
    click.echo(f"conformance of {shlex.join(card.command)} as kind {card.kind}")
    for note in card.notes:
        click.echo(f"  {note}")
    table = Table(box=None, pad_edge=False, header_style="bold")
    table.add_column("CLAUSE", no_wrap=True)
    table.add_column("RESULT", no_wrap=True)
    table.add_column("CASES", justify="right", no_wrap=True)
    table.add_column("ASKS")
    for row in card.rows:
        table.add_row(
            row.clause, f"[{_STYLES[row.status]}]{row.status}[/]", str(row.cases), row.asks
        )
    Console(soft_wrap=False, width=120).print(table)
    for row in card.rows:
        if row.status != FAIL:
            continue
        click.echo("")
        click.echo(f"FAILED {row.clause}: {row.asks}")
        for problem in row.problems[:5]:
            click.echo(f"  {problem}")
        if len(row.problems) > 5:
            click.echo(f"  ... and {len(row.problems) - 5} more")
        click.echo(f"  fix: {row.fix}")
    click.echo("")
    if card.failed:
        click.echo(f"does not conform: {len(card.failed)} clause(s) failed")
    else:
        click.echo("conforms: every checked clause passed")


@click.command(short_help="Check a runner command or image against the runner contract.")
@click.option("--kind", required=True, help="The runner kind whose contract it claims.")
@click.option("--command", "command_text", default=None, help='e.g. "python -m runners.x".')
@click.option("--image", default=None, help="An image to run under --runtime instead.")
@click.option(
    "--runtime",
    type=click.Choice(list(RUNTIME_NAMES)),
    default=None,
    help="With --image: podman, docker or nerdctl (default: the first that works).",
)
@click.option("-o", "--output", "output", type=OUTPUT_FORMAT, default="text")
@click.option(
    "--env",
    "env_items",
    multiple=True,
    metavar="NAME=VALUE",
    help="A variable every case gets (e.g. disk-io's BURNIN_DISK_IO_PATH); repeatable.",
)
@click.option("--jobs", type=click.IntRange(min=1), default=None, help="Cases at once.")
@no_traceback(code=exits.ERROR)
def conformance(
    kind: str,
    command_text: str | None,
    image: str | None,
    runtime: str | None,
    output: str,
    env_items: tuple[str, ...],
    jobs: int | None,
) -> None:
    """Run every conformance case of KIND on a runner (Node, Pair or Group) and print a
    report card: one row per contract clause, each failed clause with its fix."""
    if kind not in RUNNERS:
        fail(f"--kind {kind!r}: unknown kind; use one of {', '.join(sorted(RUNNERS))}")
    spec = RUNNERS[kind]
    if not suites_of(spec):
        fail(f"--kind {kind}: a {spec.scope} kind no conformance suite knows the cases of")
    extra = _env(env_items)
    if (command_text is None) == (image is None):
        fail('give exactly one of --command "CMD ..." or --image IMAGE')
    if runtime is not None and image is None:
        fail("--runtime goes with --image; drop it, or give --image")
    notes = [suites_note(spec)]
    link_command: list[str] | None = None
    if command_text is not None:
        command = shlex.split(command_text)
        if not command:
            fail("--command is empty; give the runner's command line")
    else:
        assert image is not None
        try:
            chosen = choose_runtime(runtime or "auto", sim=False)
        except RuntimeChoiceError as exc:
            fail(str(exc))
        if chosen is None:
            fail(f"--image: none of {', '.join(RUNTIME_NAMES)} works here; install one")
        env_names = sorted({*case_env_names(kind), *extra})
        command = image_command(
            runtime_binary=chosen.binary, image=image, env_names=env_names, network=NODE_NETWORK
        )
        if runs_links(spec):
            link_command = image_command(
                runtime_binary=chosen.binary, image=image, env_names=env_names, network=LINK_NETWORK
            )
            notes.append(
                f"Pair and Group sides: --network {LINK_NETWORK} (each side is its own "
                "container; they meet on the host's loopback)"
            )
            if NODE in suites_of(spec):
                notes.append(f"Pair and Group cases ran {shlex.join(link_command)}")
            else:
                command = link_command
    if extra:
        spec = replace(spec, test_env={**spec.test_env, **extra})
    card = kind_card(spec, command=command, link_command=link_command, jobs=jobs, notes=notes)
    if output == "json":
        click.echo(card_json(card))
    else:
        _print_card(card)
    if card.failed:
        raise SystemExit(exits.FAILED)
