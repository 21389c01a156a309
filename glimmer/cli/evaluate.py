"""``glimmer evaluate``: one attempt judged exactly as the operator would judge it."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

import click

from glimmer.cli import exits
from glimmer.cli._common import OUTPUT_FORMAT, PHASE_COLOURS, fail, no_traceback
from glimmer.contract import read_report
from glimmer.local.manifests import (
    Document,
    ManifestError,
    iter_kind,
    load_documents,
    spec_of,
    test_kind,
    thresholds_of,
)
from glimmer.local.serialize import artifact_refs, verdict_json
from glimmer.verdict import AttemptVerdict, Phase, Provenance, judge_attempt
from glimmer.verdict.messages import SIM_PASS_WORDS

#: Exit status by phase; 2 is reserved for bad input (:mod:`glimmer.cli.exits`).
EXIT_BY_PHASE = {
    Phase.PASSED: exits.OK,
    Phase.FAILED: exits.FAILED,
    Phase.ERROR: exits.ERROR,
    Phase.SKIPPED: exits.SKIPPED,
}
_CHUNK = 1 << 20


@click.command()
@click.option(
    "--test",
    "test_file",
    required=True,
    type=click.Path(path_type=Path),
    help="BurnInTest manifest (YAML). A file holding several BurnInTests needs --name.",
)
@click.option(
    "--name",
    "test_name",
    default=None,
    help="Which BurnInTest of --test to judge by (required when it holds several).",
)
@click.option("--exit-code", required=True, type=int, help="The runner's exit code.")
@click.option(
    "--stdout",
    "stdout_file",
    required=True,
    type=click.Path(path_type=Path),
    help="File holding the runner's output (stdout and stderr merged), or - for stdin.",
)
@click.option("-o", "--output", "output_format", type=OUTPUT_FORMAT, default="text")
@click.option(
    "--provenance",
    type=click.Choice([str(Provenance.SILICON), str(Provenance.SIM)]),
    default=None,
    help="Mark the input as measured on silicon or on the simulated GPU.",
)
@no_traceback(code=EXIT_BY_PHASE[Phase.ERROR])
def evaluate(
    test_file: Path,
    test_name: str | None,
    exit_code: int,
    stdout_file: Path,
    output_format: str,
    provenance: str | None,
) -> None:
    """Judge one runner execution against a BurnInTest's thresholds.

    Exit status: 0 Passed, 1 Failed, 3 Error, 4 Skipped; 2 for bad input.
    """
    try:
        documents = load_documents(test_file)
        test = chosen_test(documents, test_name, source=test_file)
        spec = spec_of(test)
        kind = test_kind(spec, where=test.where)
        thresholds = thresholds_of(spec, where=test.where)
    except ManifestError as exc:
        fail(str(exc))
    report = read_report(_read_output(stdout_file), kind=kind, exit_code=exit_code)
    verdict = judge_attempt(
        report,
        kind=kind,
        thresholds=thresholds,
        dispatcher_provenance=Provenance(provenance) if provenance else None,
    )
    refs = artifact_refs(report)
    if output_format == "json":
        click.echo(json.dumps(verdict_json(verdict, artifacts=refs), indent=2))
    else:
        _print_text(verdict, test_name=test.name or kind)
    raise SystemExit(EXIT_BY_PHASE.get(verdict.phase, exits.ERROR))


def chosen_test(documents: list[Document], name: str | None, *, source: Path) -> Document:
    """The BurnInTest to judge by: the only one, or the one ``--name`` names. Several
    without ``--name`` are refused naming each (N12): judging by the first would apply
    thresholds the user never chose."""
    tests = list(iter_kind(documents, "BurnInTest"))
    if not tests:
        kinds = ", ".join(sorted({d.kind or "?" for d in documents})) or "none"
        fail(f"{source}: no BurnInTest document found (kinds seen: {kinds})")
    names = ", ".join(repr(t.name) for t in tests)
    if name is not None:
        named = [t for t in tests if t.name == name]
        if not named:
            fail(f"{source}: --name {name!r}: no BurnInTest of that name (it holds: {names})")
        if len(named) > 1:
            fail(f"{source}: BurnInTest {name!r} is defined {len(named)} times; keep one")
        return named[0]
    if len(tests) > 1:
        fail(f"{source}: holds {len(tests)} BurnInTests ({names}); choose one with --name")
    return tests[0]


def _read_output(path: Path) -> Iterator[bytes]:
    """Stream the runner output in chunks so a 100 MB log is read in bounded memory."""
    if str(path) == "-":
        yield from _chunks(sys.stdin.buffer)
        return
    try:
        handle: BinaryIO = path.open("rb")
    except FileNotFoundError:
        fail(f"{path}: no such file (--stdout)")
    except OSError as exc:
        fail(f"{path}: cannot read (--stdout): {exc}")
    with handle:
        yield from _chunks(handle)


def _chunks(stream: BinaryIO) -> Iterator[bytes]:
    while chunk := stream.read(_CHUNK):
        yield chunk


def _print_text(verdict: AttemptVerdict, *, test_name: str) -> None:
    label = click.style(str(verdict.phase).upper(), fg=PHASE_COLOURS.get(verdict.phase), bold=True)
    sim = " (SIMULATED" + (f"; {SIM_PASS_WORDS}" if verdict.suspect else "") + ")"
    click.echo(f"{test_name}: {label}{sim if verdict.provenance == Provenance.SIM else ''}")
    if verdict.message:
        click.echo(f"  {verdict.message}")
    for violation in verdict.violations:
        click.echo(f"  - [{violation.cause}/{violation.kind}] {violation.reason}")
    for item in verdict.not_evaluated:
        click.echo(f"  - not evaluated: {item.metric} ({item.reason})")
    if verdict.metrics:
        width = max(len(name) for name in verdict.metrics)
        for name, value in sorted(verdict.metrics.items()):
            click.echo(f"    {name:<{width}}  {value}")
    for name in verdict.unmeasurable:
        click.echo(f"    {name}  n/a (unmeasurable)")
