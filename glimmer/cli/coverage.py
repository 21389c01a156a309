"""``glimmer coverage``: which modelled faults a profile catches on the simulated GPU (N13).

The profile runs once per fault of the simulator's matrix, plus healthy as the control,
each case a ``glimmer run`` of its own (:mod:`glimmer.local.coverage`), so the verdicts
are the ones ``glimmer run`` reaches; its Pair and Group tests once per link and fabric
fault, each case a simulated pair (server and client) or group (its ranks, then
``glimmer merge``) on this host, with its own healthy control. The input is checked
first by ``glimmer run --dry-run`` on the user's own files (once per scope), so a bad
file or a refused plan reads exactly as ``glimmer run`` says it and nothing else runs.

Exit status (N10's table): 0 the coverage was measured and every ``--require``d fault is
caught; 1 a required fault is missed (N14: the check failed, as a Fail is); 2 a usage
error (a bad ``--sim``, an unknown fault in ``--require``, a file that does not exist);
3 not judged: a healthy control did not Pass (a profile that fails a healthy node
catches nothing meaningfully: that scope's part of the matrix is void), a case wrote no
run.json, or the input was refused.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Final

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from glimmer.cli import exits
from glimmer.cli._common import BAD_INPUT, fail, no_traceback
from glimmer.cli.coverage_status import open_profile_ref
from glimmer.cli.run import MANIFEST, TESTS_OPTION, bundled_profile, select_profile
from glimmer.local.coverage import (
    DEFAULT_SIM,
    GROUP_RANKS,
    HEALTHY,
    HOST_REAL_NOTE,
    NODE,
    PAIR,
    SCOPES,
    CaseOutcome,
    Coverage,
    PlannedTest,
    Section,
    cases_for,
    cover,
    default_jobs,
    faults_of,
    glimmer_command,
    nothing_to_cover,
    scopes_of,
    sim_profiles_problem,
)
from glimmer.local.links import declared_scopes
from glimmer.local.manifests import ManifestError, load_documents, spec_of
from glimmer.report.coverage import (
    catch_words,
    cell_look,
    coverage_html,
    coverage_json,
)
from glimmer.report.words import ABSENT_LOOK, look
from glimmer.verdict import Phase

#: Exit status when coverage could not be measured (N10's "Error or not run").
NOT_JUDGED = exits.ERROR


def _split(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


#: The side flags a ``--dry-run`` of each scope's tests is given (one Pair server, one
#: Group rank 0): its plan is that scope's tests, as a side of a link case plans them.
_SCOPE_FLAGS: Final = {
    NODE: [],
    PAIR: ["--role", "server", "--peer-node", "coverage-client", "--node", "coverage-server"],
    "Group": ["--rank", "0", "--nranks", str(GROUP_RANKS), "--root", "127.0.0.1"],
}


def _declared(
    source: Path, test_files: tuple[Path, ...], profile_name: str | None
) -> tuple[str, ...]:
    """The scopes the profile declares, in coverage's order (Node when it cannot be read
    here: the Node dry run then says what is wrong, as glimmer run says it)."""
    try:
        documents = [d for path in (source, *test_files) for d in load_documents(path)]
        profile, tests = select_profile(documents, profile_name)
    except ManifestError:
        return (NODE,)
    held = declared_scopes(dict(spec_of(profile)), tests)
    return tuple(s for s in SCOPES if s in held) or (NODE,)


def _dry_run(
    source: Path, test_files: tuple[Path, ...], profile_name: str | None, sim: str
) -> list[PlannedTest]:
    """``glimmer run --dry-run`` on the user's files, once per scope the profile has:
    its refusal, verbatim, or the profile's planned tests of every scope."""
    tests: list[PlannedTest] = []
    for scope in _declared(source, test_files, profile_name):
        command = [*glimmer_command(), "run", str(source), "--sim", sim, "--dry-run", "-o", "json"]
        for path in test_files:
            command += ["--tests", str(path)]
        if profile_name:
            command += ["--profile", profile_name]
        command += _SCOPE_FLAGS[scope]
        done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=120)
        if done.returncode != 0:
            click.echo(done.stderr.rstrip(), err=True)
            raise SystemExit(done.returncode if done.returncode == BAD_INPUT else NOT_JUDGED)
        plan = json.loads(done.stdout)
        tests += [
            PlannedTest(
                name=str(t["name"]),
                kind=str(t["kind"]),
                required=t["required"] is True,
                scope=scope,
            )
            for t in plan["tests"]
        ]
    return tests


_STYLES: Final = {"pass": "green", "fail": "bold red", "error": "bold magenta", "skip": "dim"}


def _table(coverage: Coverage) -> None:
    """Each scope's matrix (a shape per cell, so it fits a terminal whatever the test
    names), then one paragraph per fault: caught by whom, or missed and what would catch
    it. A void scope (its healthy control did not Pass) shows no matrix."""
    for section in coverage.sections:
        if section.control_passed:
            _section_table(coverage, section)


def _section_table(coverage: Coverage, section: Section) -> None:
    if section.scope == NODE:
        title = f"SIMULATED GPU ({', '.join(coverage.sims)}): fault coverage of {coverage.profile}"
    else:
        how = (
            "a server and a client on this host"
            if section.scope == PAIR
            else f"{GROUP_RANKS} ranks on this host, then glimmer merge"
        )
        title = (
            f"SIMULATED {section.scope.upper()} ({coverage.sims[0]}, {how}): link and fabric "
            f"fault coverage of {coverage.profile}"
        )
    click.echo(title)
    names = [
        f"{i} {t.name}" + ("" if t.required else " (not required)")
        for i, t in enumerate(section.tests, start=1)
    ]
    click.echo("tests: " + "  ".join(names))
    legend = [look(p) for p in (Phase.PASSED, Phase.FAILED, Phase.ERROR, Phase.SKIPPED)]
    click.echo(
        "cells: "
        + "  ".join(f"{item.shape} {item.word}" for item in legend)
        + f"  {ABSENT_LOOK.word} not run: {HOST_REAL_NOTE}"
    )
    table = Table(box=None, pad_edge=False, header_style="bold")
    table.add_column("FAULT", no_wrap=True)
    for index in range(1, len(section.tests) + 1):
        table.add_column(str(index), no_wrap=True, justify="center")
    table.add_column("RUN", no_wrap=True)
    for outcome in (*section.control, *section.faults):
        by_name = {c.name: c for c in outcome.cells}
        cells = []
        for test in section.tests:
            shown = cell_look(by_name.get(test.name))
            cells.append(Text(shown.shape or shown.word, style=_STYLES.get(shown.css, "")))
        run = look(None if outcome.phase is None else Phase(outcome.phase))
        if outcome.case.fault == HEALTHY:
            verdict = "control"
        else:
            verdict = "caught" if outcome.caught else "MISSED"
        words = f"{run.shape} {run.word} {verdict}" if outcome.phase else "NOT JUDGED"
        style = "bold red" if verdict == "MISSED" else _STYLES.get(run.css, "")
        table.add_row(Text(coverage.label(outcome)), *cells, Text(words, style=style))
    console = Console(file=sys.stdout, highlight=False)
    with console.capture() as captured:
        console.print(table)
    click.echo("")
    for row in captured.get().splitlines():
        click.echo(row.rstrip())
    click.echo("")
    for outcome in section.faults:
        if outcome.caught:
            head = f"CAUGHT by {catch_words(outcome)}"
        else:
            head = catch_words(outcome).split("; caught by ")[0]
        click.echo(f"{coverage.label(outcome)}: {head}")
        click.echo(f"  models: {outcome.case.story.models}")
        if outcome.case.scope != NODE:
            click.echo(f"  run as: {outcome.case.where}")
        if not outcome.caught:
            click.echo(f"  caught by: {outcome.case.story.caught_by}")
    click.echo("")


def _control_failure(outcome: CaseOutcome) -> str:
    bad = [
        f"{c.name} {c.phase}" + (f" ({c.gate})" if c.gate else "")
        for c in outcome.cells
        if c.required and c.phase != str(Phase.PASSED)
    ]
    return (
        f"the healthy control ({outcome.case.where}) did not Pass "
        f"(run {outcome.phase or 'not judged'}: "
        f"{'; '.join(bad) or outcome.problem}): a profile that fails a healthy node catches "
        "nothing meaningfully"
        + ("" if outcome.case.scope == NODE else f", so its {outcome.case.scope} part is void")
        + "; fix the profile (or its thresholds) first"
    )


@click.command(short_help="Which simulated faults a profile catches: a fault x test matrix.")
@click.argument("profile_file", required=False, type=MANIFEST)
@TESTS_OPTION
@click.option("--profile", "profile_name", default=None, help="Which BurnInProfile to cover.")
@click.option(
    "--sim",
    "sim_text",
    default=DEFAULT_SIM,
    show_default=True,
    metavar="PROFILE,...",
    help="The simulated parts to cover, e.g. h200x2,mi300xx2: every fault of the "
    "simulator's matrix the part can have runs on each.",
)
@click.option(
    "--require",
    "require_text",
    default=None,
    metavar="FAULT,...",
    help="Exit 1 when one of these faults is missed (a CI guard for a profile).",
)
@click.option(
    "-o",
    "--output",
    type=click.Choice(["text", "json", "html"]),
    default="text",
    show_default=True,
    help="text: a table; json: the coverage document; html: a self-contained heatmap.",
)
@click.option(
    "--jobs",
    default=None,
    type=click.IntRange(min=1),
    help="Runs at a time (default: this machine's cores).",
)
@click.option(
    "--work-dir",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Keep every case's profile and results here (default: a temporary directory).",
)
@click.option(
    "--profile-ref",
    "profile_ref",
    default=None,
    metavar="[NAMESPACE/]NAME",
    help="Cover this BurnInProfile of the cluster (with the BurnInTests it references) "
    "instead of a file; a bare NAME is in the kube context's namespace.",
)
@click.option(
    "--write-status",
    is_flag=True,
    help="With --profile-ref: write the coverage to the profile's status.coverage "
    "(the Coverage column of kubectl get burninprofiles).",
)
@click.option("--kubeconfig", default=None, help="Kubeconfig (default: $KUBECONFIG, in-cluster).")
@no_traceback(code=NOT_JUDGED)
def coverage(
    profile_file: Path | None,
    test_files: tuple[Path, ...],
    profile_name: str | None,
    sim_text: str,
    require_text: str | None,
    output: str,
    jobs: int | None,
    work_dir: Path | None,
    profile_ref: str | None,
    write_status: bool,
    kubeconfig: str | None,
) -> None:
    """Which modelled faults PROFILE_FILE catches, on the simulated GPU.

    Runs the profile (default: the bundled acceptance profile) once per fault of the
    simulator's fault matrix, and healthy as the control, and prints fault x test:
    caught (by which test, Fail or Error, the deciding gate) or missed (the run would
    Pass). With --profile-ref the profile is read from the cluster, and --write-status
    writes the result to its status.coverage. Exit status: 0 measured, 1 a --require'd
    fault missed, 2 usage error, 3 not judged (the healthy control did not Pass, a run
    could not be read, or the cluster could not be read or written).
    """
    sims = list(dict.fromkeys(_split(sim_text)))
    problem = sim_profiles_problem(sims)
    if problem is not None:
        fail(f"--sim {sim_text!r}: {problem}", code=BAD_INPUT)
    remote = open_profile_ref(
        profile_ref,
        write_status=write_status,
        kubeconfig=kubeconfig,
        profile_file=profile_file,
        profile_name=profile_name,
        test_files=test_files,
    )
    if remote is not None:
        profile_file, profile_name = remote.path, remote.profile_name
    source = profile_file or bundled_profile()
    # The faults --require may name depend on the profile's scopes (a Pair test's link
    # faults), so the profile is read first; still before any case runs.
    tests = _dry_run(source, test_files, profile_name, sims[0])
    known = faults_of(sims, scopes_of(tests))
    required = _split(require_text or "")
    unknown = [f for f in required if f not in known]
    if unknown:
        fail(
            f"--require {', '.join(unknown)}: not a modelled fault of {', '.join(sims)} "
            f"for this profile's tests (known: {', '.join(known)})",
            code=BAD_INPUT,
        )
    empty = nothing_to_cover(tests)
    if empty is not None:
        fail(f"{source}: {empty}", code=NOT_JUDGED)
    try:
        documents = [d for path in (source, *test_files) for d in load_documents(path)]
    except ManifestError as exc:  # glimmer run read them a moment ago
        fail(str(exc), code=NOT_JUDGED)
    name = profile_name or next(d.name for d in documents if d.kind == "BurnInProfile")
    count = jobs or default_jobs()
    if output == "text":
        total = len(cases_for(sims, scopes_of(tests)))
        click.echo(f"glimmer: covering {name}: {total} simulated runs, {count} at a time", err=True)
    with tempfile.TemporaryDirectory(prefix="glimmer-coverage-") as scratch:
        result = cover(
            documents=documents,
            profile=name,
            profile_name=profile_name,
            tests=tests,
            sims=sims,
            work_dir=work_dir or Path(scratch),
            jobs=count,
        )
    if remote is not None:
        remote.record(result)  # a Void or NotJudged coverage is written too (N16)
    for outcome in result.unjudged:
        click.echo(f"glimmer: error: {outcome.case.where}: {outcome.problem}", err=True)
    for outcome in result.control:
        if outcome.phase != str(Phase.PASSED):
            click.echo(f"glimmer: error: {_control_failure(outcome)}", err=True)
    if not any(s.control_passed for s in result.sections):
        if output == "json":
            click.echo(json.dumps(coverage_json(result), indent=2))
        raise SystemExit(NOT_JUDGED)
    _show(result, output=output)  # the scopes whose control Passed; a void one is left out
    if result.unjudged or not result.control_passed:
        raise SystemExit(NOT_JUDGED)
    missed_required = [result.label(o) for o in result.missed if o.case.fault in required]
    if missed_required:
        click.echo(
            f"glimmer: required fault(s) missed: {', '.join(missed_required)}",
            err=True,
        )
        raise SystemExit(exits.FAILED)


def _show(result: Coverage, *, output: str) -> None:
    if output == "json":
        click.echo(json.dumps(coverage_json(result), indent=2))
    elif output == "html":
        click.echo(coverage_html(result))
    else:
        _table(result)
        click.echo(result.summary_line())
        click.echo(
            f"({len(result.control) + len(result.faults)} cases in {result.seconds:.1f} s, "
            f"{result.jobs} at a time; SIMULATED GPU: proves the profile's logic, not the hardware)"
        )
