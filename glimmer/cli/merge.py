"""``glimmer merge``: decide a bare-host Group from its N rank records (N3), or judge
several hosts' cohort-relative gates from their run.json files (``--cohort``, N17).

Each rank's ``glimmer run --rank R --nranks N --root HOST`` wrote
``ranks/rank-NN.json`` and no verdict; copy them into one ``DIR/ranks`` and merge
there. The verdict comes from the operator's own code (:mod:`glimmer.local.merge`), and
``run.json`` is written by the same codec as ``glimmer run``'s. Exit status is N4's: 0
Passed, 1 Failed, 3 Error or not judged (a partial, duplicate or foreign turnout is
refused with 3 and nothing written), 2 nothing judged (every required test skipped).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import click

from glimmer.cli import exits
from glimmer.cli._common import OUTPUT_FORMAT, fail, no_traceback
from glimmer.cli.sinkflags import deliver, sink_flags, sink_options
from glimmer.local.merge import TurnoutError, merge_group, read_turnout
from glimmer.local.results import exit_status, run_document, write_document

#: Exit status when no verdict could be reached (refused turnout, bad input, a bug).
NOT_JUDGED = exits.ERROR


@click.command()
@click.option(
    "--results-dir",
    required=True,
    type=click.Path(path_type=Path, file_okay=False),
    help="Holds ranks/rank-NN.json from every rank; run.json is written here.",
)
@click.option(
    "--nranks",
    type=click.IntRange(min=2),
    help="How many ranks the group has (a Group merge; required unless --cohort).",
)
@click.option(
    "--cohort",
    "cohort",
    multiple=True,
    type=click.Path(path_type=Path, dir_okay=False, exists=True),
    help="A host's run.json (repeat for each host): judge the cohort-relative gates over "
    "them and write cohort.json instead of a Group merge (C7-C10).",
)
@click.option("-o", "--output", "output", type=OUTPUT_FORMAT, default="text", show_default=True)
@sink_options
@no_traceback(code=NOT_JUDGED)
def merge(
    results_dir: Path,
    nranks: int | None,
    cohort: tuple[Path, ...],
    output: str,
    sink_url: str | None,
    sink_token_file: Path | None,
    sink_insecure_skip_tls_verify: bool,
    sink_timeout: float,
    sink_ca_file: Path | None,
    sink_signing_key_file: Path | None,
) -> None:
    """Judge a Group test from every rank's record, as the operator would.

    The merge decides, so it writes envelopes/001-RunPhaseChanged.json and, with
    ``--sink-url``, delivers it (N3).
    """
    sinks = sink_flags(
        sink_url=sink_url,
        sink_token_file=sink_token_file,
        sink_insecure_skip_tls_verify=sink_insecure_skip_tls_verify,
        sink_timeout=sink_timeout,
        sink_ca_file=sink_ca_file,
        sink_signing_key_file=sink_signing_key_file,
    )
    if cohort:
        if nranks is not None:
            fail("--cohort and --nranks are two merges: give one", code=NOT_JUDGED)
        raise SystemExit(_merge_cohort(results_dir, cohort, output=output))
    if nranks is None:
        fail("--nranks is required for a Group merge (or give --cohort run.json ...)",
             code=NOT_JUDGED)  # fmt: skip
    try:
        # A previous merge's verdict must not be read as this one's if this one refuses.
        (results_dir / "run.json").unlink(missing_ok=True)
    except OSError as exc:
        fail(f"--results-dir {results_dir}: cannot be written: {exc}", code=NOT_JUDGED)
    try:
        records = read_turnout(results_dir, nranks=nranks)
    except TurnoutError as exc:
        fail(str(exc), code=NOT_JUDGED)
    merged = merge_group(records)
    root = records[0]
    sim = next((r.sim for r in records if r.sim is not None), None)
    document = run_document(
        merged.results,
        node=root.node,
        profile=root.profile,
        sim=sim,
        started_at=merged.started_at,
        finished_at=merged.finished_at or time.time(),
        stopped=merged.stopped,
    )
    path = write_document(document, results_dir)
    deliver(document, results_dir=results_dir, flags=sinks, baseline=False)
    if output == "json":
        click.echo(json.dumps(document, indent=2))
    else:
        from glimmer.cli.run import summary

        summary(merged.results, sim=sim, document=document)
        click.echo(f"results: {path}")
    raise SystemExit(exit_status(merged.results, stopped=merged.stopped))


def _merge_cohort(results_dir: Path, paths: tuple[Path, ...], *, output: str) -> int:
    """C7-C10 over several hosts' run.json: cohort.json, and N4's exit status."""
    from glimmer.local.cohort import CohortInputError, cohort_exit_status, merge_cohort, read_hosts
    from glimmer.local.dispatcher import rfc3339

    target = results_dir / "cohort.json"
    try:
        target.unlink(missing_ok=True)  # never leave an older judgement to be read as this
        hosts = read_hosts(paths)
    except CohortInputError as exc:
        fail(str(exc), code=NOT_JUDGED)
    except OSError as exc:
        fail(f"--results-dir {results_dir}: cannot be written: {exc}", code=NOT_JUDGED)
    merged = merge_cohort(hosts, at=rfc3339(time.time()) or "")
    results_dir.mkdir(parents=True, exist_ok=True)
    partial = results_dir / ".cohort.json.partial"
    partial.write_text(json.dumps(merged.document, indent=2) + "\n", encoding="utf-8")
    partial.replace(target)
    if output == "json":
        click.echo(json.dumps(merged.document, indent=2))
    else:
        for record in merged.document["cohortVerdicts"]:
            if record["evaluated"]:
                outliers = ", ".join(record["outliers"]) or "none"
                click.echo(
                    f"{record['test']}/{record['metric']}: cohort of {record['size']}, "
                    f"median {record['median']}, MAD {record['mad']}: outliers {outliers}"
                )
            else:
                click.echo(f"{record['test']}/{record['metric']}: {record['reason']}")
        for result in merged.document["results"]:
            if result.get("violations") and any(
                v.get("kind") == "CohortOutlier" for v in result["violations"]
            ):
                click.echo(f"  {result['nodes'][0]}: FAILED {result.get('message', '')}")
        click.echo(f"{merged.document['phase']}; results: {target}")
    return cohort_exit_status(merged)
