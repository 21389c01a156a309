"""``glimmer report``: a run's verdict as JUnit, HTML, Markdown, NVVS JSON or CTRF.

Exactly one input: ``--from-file`` (an envelope or a JSON array of them),
``--results-dir`` (a directory of envelope files, e.g. a webhook receiver's or
``glimmer run``'s ``envelopes/``), ``--run [ns/]name`` (the run's ConfigMap sinks; a
bare name is in ``-n``, else the kubeconfig context's namespace) or
``--run-json`` (a ``glimmer run`` results directory or its ``run.json``).
Exit status: 0 written; 2 the input was refused (the message says why); 3 an internal
error. The run's own verdict never changes the exit status: a report of a Failed run
is a successful report.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import click

from glimmer.cli._common import fail, no_traceback
from glimmer.cli.exits import ERROR
from glimmer.cli.kubecontext import NAMESPACE_HELP, namespace_for
from glimmer.report import (
    FORMATS,
    Report,
    ReportInputError,
    assemble,
    from_file,
    from_results_dir,
    load_run_json,
    render,
)

INTERNAL_ERROR = ERROR


def run_ref(ref: str, *, namespace: str | None, kubeconfig: str | None) -> str:
    """``--run`` as ``NS/NAME``: a bare NAME is in ``-n``, else the context's namespace
    (N11); ``-n`` beside a ``NS/NAME`` naming another namespace is refused."""
    given, sep, _ = ref.partition("/")
    if not sep:
        return f"{namespace_for(namespace, kubeconfig=kubeconfig)}/{ref}"
    if namespace and given != namespace:
        raise ReportInputError(
            f"--run {ref!r} is in namespace {given!r} but -n says {namespace!r}; give one"
        )
    return ref


async def _from_cluster(ref: str, *, kubeconfig: str | None) -> Report:
    from glimmer.engine import ApiServerClient  # only --run needs a cluster client
    from glimmer.report.cluster import parse_run_ref, report_from_cluster

    namespace, name = parse_run_ref(ref)
    client = await ApiServerClient.connect(kubeconfig)
    try:
        return await report_from_cluster(client, namespace=namespace, name=name)
    finally:
        await client.close()


def _load(
    *,
    from_file_: Path | None,
    results_dir: Path | None,
    run: str | None,
    run_json: Path | None,
    kubeconfig: str | None,
    namespace: str | None = None,
) -> Report:
    given = [x for x in (from_file_, results_dir, run, run_json) if x is not None]
    if len(given) != 1:
        raise ReportInputError(
            "give exactly one input: --from-file, --results-dir, --run or --run-json "
            f"({len(given)} given)"
        )
    if from_file_ is not None:
        return assemble(from_file(from_file_), source=str(from_file_))
    if results_dir is not None:
        return assemble(from_results_dir(results_dir), source=str(results_dir))
    if run_json is not None:
        return load_run_json(run_json)
    assert run is not None
    ref = run_ref(run, namespace=namespace, kubeconfig=kubeconfig)
    return asyncio.run(_from_cluster(ref, kubeconfig=kubeconfig))


def write_files(files: dict[str, str], *, out: str) -> list[Path]:
    """Write each file whole or not at all; ``-`` prints the one file to stdout."""
    if out == "-":
        if len(files) != 1:
            raise ReportInputError(
                f"--out - prints one file, but this format writes {len(files)} "
                f"({', '.join(sorted(files))}); give a directory"
            )
        sys.stdout.write(next(iter(files.values())))
        return []
    directory = Path(out)
    try:
        directory.mkdir(parents=True, exist_ok=True)
        written = []
        for name, content in files.items():
            path = directory / name
            partial = directory / f".{name}.partial"
            partial.write_text(content, encoding="utf-8")
            os.replace(partial, path)
            written.append(path)
    except OSError as err:
        raise ReportInputError(f"--out {out}: cannot write: {err.strerror or err}") from None
    return written


@click.command()
@click.option(
    "--from-file",
    "from_file_",
    type=click.Path(path_type=Path),
    help="An envelope JSON file, or a JSON array of envelopes.",
)
@click.option(
    "--results-dir",
    type=click.Path(path_type=Path),
    help="A directory of envelope files (*.json; other files are skipped).",
)
@click.option(
    "--run",
    "run",
    metavar="[NS/]NAME",
    help="A BurnInRun in the cluster: reads its ConfigMap sinks' envelopes. A bare NAME "
    "is in -n's namespace.",
)
@click.option("-n", "--namespace", default=None, help="For --run NAME. " + NAMESPACE_HELP)
@click.option(
    "--run-json",
    type=click.Path(path_type=Path),
    help="A `glimmer run` results directory, or its run.json.",
)
@click.option(
    "--kubeconfig",
    default=None,
    help="Kubeconfig for --run; default: $KUBECONFIG, else in-cluster config.",
)
@click.option(
    "-o",
    "--output",
    "fmt",
    type=click.Choice(FORMATS),
    default="html",
    show_default=True,
    help="Report format.",
)
@click.option(
    "--out",
    default=".",
    show_default=True,
    help="Directory to write into, or - for stdout (single-file formats only).",
)
@no_traceback(code=INTERNAL_ERROR)
def report(
    from_file_: Path | None,
    results_dir: Path | None,
    run: str | None,
    run_json: Path | None,
    namespace: str | None,
    kubeconfig: str | None,
    fmt: str,
    out: str,
) -> None:
    """Render one run's delivered verdict as a report."""
    try:
        view = _load(
            from_file_=from_file_,
            results_dir=results_dir,
            run=run,
            run_json=run_json,
            kubeconfig=kubeconfig,
            namespace=namespace,
        )
        written = write_files(render(view, fmt), out=out)
    except ReportInputError as err:
        fail(str(err))
    for path in written:
        click.echo(f"wrote {path}", err=True)
