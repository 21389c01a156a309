"""``glimmer run``: the acceptance profile on this host, no cluster needed.

Exit status is a verdict (N4), so nothing but the verdict may choose it: a bad file,
a refused plan, an interrupt or a bug of ours is 3 ("not run / not judged"), never
1 (the hardware Failed) and never a traceback. Everything the attempts will need is
built and checked before the first runner starts (``--dry-run`` included); once a run
has started, ``run.json`` is always written, with what did not finish as Error.

Pair and Group tests run one side per host (N1-N3, :mod:`glimmer.local.links`): a
Pair server or a Group rank writes its side record and decides nothing, so it exits 2
("nothing judged") once the record is written whole and 3 otherwise; the Pair client
decides and writes ``run.json``; ``glimmer merge`` decides a Group. A profile that mixes
scopes runs the invocation's scope and reports the rest Skipped, naming the command that
runs each (N5); a test with ``checkpointIntervalSeconds`` is checkpointed while it runs,
shown, and with ``--sink-url`` delivered as Checkpoint envelopes (N6,
:mod:`glimmer.cli.run_checkpoints`).
"""

from __future__ import annotations

import json
import shlex
import sys
import time
import uuid
from collections.abc import Mapping
from dataclasses import replace
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from glimmer.cli import exits
from glimmer.cli._common import BAD_INPUT, OUTPUT_FORMAT, PHASE_COLOURS, fail, no_traceback
from glimmer.cli.run_checkpoints import CheckpointDelivery
from glimmer.cli.sinkflags import deliver, sink_flags, sink_options
from glimmer.local.dispatcher import (
    LocalOptions,
    LocalResult,
    needs_host_ip,
    preflight,
    run_plan,
    unlaunchable,
    unresolved_env,
)
from glimmer.local.host import (
    ACCELERATOR_KINDS,
    gpu_present,
    node_name,
    primary_address,
    this_host,
)
from glimmer.local.interrupt import deferred, signals_interrupt
from glimmer.local.launch import DEFAULT_SIM_HOST_WINDOW_S, HostWindow, host_window
from glimmer.local.links import (
    SESSION_ENV,
    GroupFlags,
    PairClient,
    PairFlags,
    SideRecorder,
    UsageError,
    declared_scope_problem,
    host_plan,
    link_flags,
    not_run_here,
    not_run_here_warning,
    scope_problem,
    side_recorder,
)
from glimmer.local.manifests import Document, ManifestError, load_documents, spec_of
from glimmer.local.planview import host_line, image_line, plan_view
from glimmer.local.progress import RunProgress
from glimmer.local.results import exit_status, plan_gates, run_document, write_document
from glimmer.local.runtimes import AUTO, RUNTIME_CHOICES, RuntimeChoiceError, choose_runtime
from glimmer.plan import PinnedPlan, PlanRefusal
from glimmer.plan.gates import MALFORMED, lint_tests
from glimmer.plan.units import verdict_units
from glimmer.verdict import Phase
from glimmer.verdict.messages import SIM_PASS_WORDS
from runners.catalog import sim_spec_problem

if TYPE_CHECKING:
    from securesystemslib.signer import CryptoSigner

    from glimmer.sinks.attestation import BareSigning

#: Exit status when the run could not happen (config, refusal, no GPU, interrupt).
NOT_RUN = exits.ERROR
#: Exit status of a side that decides nothing (Pair server, Group rank) once its record
#: is written: N4's "nothing judged", so a CI gate on 0 never passes on it.
NOTHING_JUDGED = exits.NOTHING_JUDGED
#: A manifest argument: a file that does not exist is a usage error (exit 2, N10).
MANIFEST = click.Path(exists=True, dir_okay=False, path_type=Path)
#: ``--tests FILE``, repeatable: the BurnInTests a profile file references, kept apart.
TESTS_OPTION = click.option(
    "--tests",
    "test_files",
    multiple=True,
    type=MANIFEST,
    help="More YAML files holding the BurnInTests the profile references.",
)


class NoSuchProfileError(ManifestError):
    """The files hold no BurnInProfile (of the ``--profile`` name): a usage error (N10),
    like a file that does not exist, not a run that could not happen."""


def bundled_profile() -> Path:
    return Path(str(resources.files("glimmer") / "examples" / "acceptance.yaml"))


def _same(one: Document, other: Document) -> bool:
    """The same object read twice (one file given twice), not a second definition."""
    return (one.path.resolve(), one.index) == (other.path.resolve(), other.index)


def select_profile(
    documents: list[Document], profile_name: str | None
) -> tuple[Document, dict[str, Any]]:
    """The one BurnInProfile the files hold (of ``--profile``'s name) and its BurnInTests."""
    tests: dict[str, Any] = {}
    seen: dict[str, Document] = {}
    for document in documents:
        if document.kind == "BurnInTest" and document.name:
            first = seen.setdefault(document.name, document)
            if first is not document and not _same(first, document):
                # Two objects cannot share a name in a namespace; the last silently
                # winning would run a test the author did not mean.
                raise ManifestError(
                    f"{document.where}: BurnInTest {document.name!r} is defined twice "
                    f"(also in {first.path}); keep one"
                )
            tests[document.name] = dict(spec_of(document))
    profiles: list[Document] = []
    for document in documents:
        if document.kind == "BurnInProfile" and not any(_same(document, p) for p in profiles):
            profiles.append(document)
    if profile_name:
        named = [d for d in profiles if d.name == profile_name]
        if not named:
            held = ", ".join(repr(d.name) for d in profiles) or "none"
            raise NoSuchProfileError(
                f"--profile {profile_name!r}: no BurnInProfile of that name in the given "
                f"files (they hold: {held})"
            )
        profiles = named
    if not profiles:
        raise NoSuchProfileError("no BurnInProfile in the given files")
    if len(profiles) > 1:
        # Running the first would run a profile the user never chose (I3).
        found = ", ".join(f"{d.name!r} ({d.path})" for d in profiles)
        if profile_name:
            raise ManifestError(
                f"BurnInProfile {profile_name!r} is defined twice: {found}; keep one"
            )
        raise ManifestError(
            f"the files hold several BurnInProfiles: {found}; choose one with --profile"
        )
    return profiles[0], tests


def summary(results: list[LocalResult], *, sim: str | None, document: Mapping[str, Any]) -> None:
    """The results table, then the run's line.

    Messages wrap in their column, never cut (the cut-off part is often the reason).
    Colour only on a terminal (rich and click both check; NO_COLOR is honoured). Under
    ``--sim`` the table's title and the run's line say SIMULATED, once each, rather
    than every row.
    """
    console = Console(file=sys.stdout, highlight=False)
    title = Text(f"SIMULATED GPU ({sim}): no silicon was measured", style="bold") if sim else None
    table = Table(box=None, pad_edge=False, title=title, title_justify="left", header_style="bold")
    table.add_column("TEST", no_wrap=True)
    table.add_column("KIND", no_wrap=True)
    table.add_column("PHASE", no_wrap=True)
    table.add_column("TRIES", justify="right", no_wrap=True)
    table.add_column("MESSAGE", overflow="fold")
    for r in results:
        table.add_row(
            Text(r.state.name),
            Text(r.state.kind),
            Text(str(r.state.phase), style=f"bold {PHASE_COLOURS.get(r.state.phase, '')}".strip()),
            Text(str(len(r.state.attempts))),
            # Text, not a str: a message is data, never rich markup ("[truncated ...]").
            Text((f"[{SIM_PASS_WORDS}] " if r.state.suspect else "") + r.state.message),
        )
    with console.capture() as captured:
        console.print(table)
    click.echo("")
    for row in captured.get().splitlines():
        click.echo(row.rstrip())  # rich pads every cell, the last one too
    run_colour = click.style(
        str(document["phase"]).upper(), fg=PHASE_COLOURS.get(Phase(document["phase"])), bold=True
    )
    counts = document["summary"]
    line = (
        f"run {run_colour}: {counts['passed']} passed, {counts['failed']} failed, "
        f"{counts['errored']} errored, {counts['skipped']} skipped"
    )
    if sim:
        line += (
            f"  SIMULATED GPU ({sim}): this certifies the plumbing, not the hardware; "
            "no silicon was measured"
        )
    elif not document["certifiesSilicon"]:
        line += "  (does not certify silicon)"
    skipped_here = document.get("notRunHere") or []
    if skipped_here:
        # N5: the phase judges only what ran here; say so on the run's own line.
        line += (
            f"  NOT A FULL RUN OF THE PROFILE: {len(skipped_here)} test(s) not run on this "
            "host (Skipped above, each with the command that runs it)"
        )
    click.echo(line)


def _check_sim(sim: str) -> None:
    """Refuse a ``--sim`` every runner would refuse, before anything runs (a usage error:
    six runners each reporting Error for one typo would bury the typo)."""
    problem = sim_spec_problem(sim) if sim.strip() else "empty; give a profile, e.g. h200"
    if problem is not None:
        fail(f"--sim {sim!r}: {problem}", code=BAD_INPUT)


def _parse_image_commands(values: tuple[str, ...]) -> dict[str, list[str]]:
    commands: dict[str, list[str]] = {}
    for value in values:
        kind, sep, command = value.partition("=")
        if not sep or not kind or not command.strip():
            fail(
                f"--image-command {value!r}: use KIND=COMMAND, e.g. memory-stress='my-runner --x'",
                code=NOT_RUN,
            )
        try:
            commands[kind] = shlex.split(command)
        except ValueError as exc:
            fail(f"--image-command {value!r}: {exc}", code=NOT_RUN)
    return commands


@click.command()
@click.argument("profile_file", required=False, type=MANIFEST)
@click.option(
    "-f",
    "--file",
    "files",
    multiple=True,
    type=MANIFEST,
    help="A YAML file of BurnInProfile and BurnInTest documents (others are ignored); "
    "repeatable, as PROFILE_FILE and --tests.",
)
@TESTS_OPTION
@click.option(
    "--profile",
    "profile_name",
    default=None,
    help="Which BurnInProfile to run when the files hold several.",
)
@click.option(
    "--sim",
    default=None,
    metavar="PROFILE[:FAULT,...]",
    help="Run against the simulated GPU, e.g. h200, mi300x or h200:low-clock,xid:79.",
)
@click.option(
    "--report-dir",
    "--results-dir",
    "report_dir",
    type=click.Path(path_type=Path),
    default=Path("glimmer-report"),
    show_default=True,
    help="Where run.json, raw logs and artifacts go.",
)
@click.option(
    "--image-command",
    "image_commands",
    multiple=True,
    metavar="KIND=CMD",
    help="Run CMD instead of the built-in runner (or image) for KIND.",
)
@click.option(
    "--runtime",
    type=click.Choice(RUNTIME_CHOICES),
    default=AUTO,
    show_default=True,
    envvar="GLIMMER_RUNTIME",
    help="How runners run: as their images under podman, docker or nerdctl, or as local "
    "processes (this repository's runners, runner.command). auto: processes under --sim, "
    "else the first of podman, docker, nerdctl that works, else processes.",
)
@click.option("--node", default=None, help="Node name to record (default: this host's name).")
@click.option(
    "--retry-on-error",
    default=0,
    show_default=True,
    type=click.IntRange(min=0),
    help="Extra attempts after an Error (never after a Fail).",
)
@click.option(
    "--host-window",
    "host_window_text",
    default=None,
    metavar="SECONDS|full",
    help="Under --sim: bound the real window of the runners that load the real host "
    "(memory-stress, disk-io), which the simulator's clock cannot shorten. Default "
    f"{DEFAULT_SIM_HOST_WINDOW_S} under --sim; 'full' runs the profile's window. Refused "
    "without --sim: a shortened window is not the test the profile asked for.",
)
@click.option("--dry-run", is_flag=True, help="Show the plan and exit.")
@click.option(
    "--role",
    type=click.Choice(["server", "client"]),
    default=None,
    help="Pair tests: run this end of the link (the client decides).",
)
@click.option("--peer", default=None, metavar="HOST", help="Pair: the other end's address.")
@click.option("--peer-node", default=None, metavar="NODE", help="Pair: the other end's node name.")
@click.option(
    "--server-record",
    default=None,
    type=click.Path(path_type=Path),
    help="Pair client: the server's sidecar/server-record.json, folded in when readable.",
)
@click.option(
    "--rank", default=None, type=click.IntRange(min=0), help="Group tests: this host's rank."
)
@click.option("--nranks", default=None, type=int, help="Group: how many ranks.")
@click.option("--root", default=None, metavar="HOST", help="Group: rank 0's address.")
@click.option("--root-node", default=None, metavar="NODE", help="Group: rank 0's node name.")
@click.option(
    "--session",
    default=None,
    metavar="ID",
    envvar=SESSION_ENV,
    help="Pair/Group: the link run's session, shared by every side. The Pair server and "
    "Group rank 0 create one when given none and print it; give it to the client "
    "(with --server-record) and to every other rank. Records of another session are "
    "never folded in.",
)
@click.option(
    "-o",
    "--output",
    type=OUTPUT_FORMAT,
    default="text",
    show_default=True,
    help="json: print the run document (or, with --dry-run, the plan) on stdout.",
)
@click.option(
    "--attestation-key",
    type=click.Path(path_type=Path, exists=True, dir_okay=False, readable=True),
    default=None,
    metavar="PEM",
    help="ed25519 private key (PEM): sign the verdict envelope's run verdict, as the "
    "operator does with --attestation-key-secret (check it with glimmer verify; "
    "docs/attestations.md).",
)
@sink_options
@no_traceback(code=NOT_RUN)
def run(
    profile_file: Path | None,
    files: tuple[Path, ...],
    test_files: tuple[Path, ...],
    profile_name: str | None,
    sim: str | None,
    report_dir: Path,
    image_commands: tuple[str, ...],
    runtime: str,
    node: str | None,
    retry_on_error: int,
    host_window_text: str | None,
    dry_run: bool,
    role: str | None,
    peer: str | None,
    peer_node: str | None,
    server_record: Path | None,
    rank: int | None,
    nranks: int | None,
    root: str | None,
    root_node: str | None,
    session: str | None,
    output: str,
    sink_url: str | None,
    sink_token_file: Path | None,
    sink_insecure_skip_tls_verify: bool,
    sink_timeout: float,
    sink_ca_file: Path | None,
    sink_signing_key_file: Path | None,
    attestation_key: Path | None,
) -> None:
    """Run a BurnInProfile on this host and print the verdict.

    Without PROFILE_FILE (or -f FILE) the bundled acceptance profile runs. Runners run as their
    images under podman, docker or nerdctl, or as local processes (``--runtime``; see
    docs/bare-hosts.md). Exit status: 0 Passed,
    1 Failed, 3 Error or not run, 2 nothing judged (everything skipped) or a usage
    error (an unknown ``--sim`` profile or fault) refused before anything ran.

    Pair tests: ``--role server|client --peer HOST --peer-node NODE`` on each end; the
    server writes sidecar/server-record.json and exits 2, the client decides (give it
    ``--server-record FILE`` and the server's session to fold the server's side in;
    without it the server did not report, and nothing is certified). Group tests:
    ``--rank R --nranks N --root HOST`` on every rank (each writes ranks/rank-NN.json
    and exits 2), then ``glimmer merge --results-dir DIR --nranks N``. Every side of
    one link run shares one session (GLIMMER_SESSION or ``--session``): the server or
    rank 0 prints the one it created. The deciding side writes
    envelopes/001-RunPhaseChanged.json (signed with ``--attestation-key``) and, with
    ``--sink-url``, delivers it.
    """
    started = time.time()
    if sim is not None:
        _check_sim(sim)
    signer = _attestation_signer(attestation_key)
    bound = _host_window(host_window_text, sim=sim)
    sinks = sink_flags(
        sink_url=sink_url,
        sink_token_file=sink_token_file,
        sink_insecure_skip_tls_verify=sink_insecure_skip_tls_verify,
        sink_timeout=sink_timeout,
        sink_ca_file=sink_ca_file,
        sink_signing_key_file=sink_signing_key_file,
    )
    host = node or node_name()
    try:
        flags = link_flags(
            node=host,
            role=role,
            peer=peer,
            peer_node=peer_node,
            server_record=server_record,
            rank=rank,
            nranks=nranks,
            root=root,
            root_node=root_node,
            session=session,
            session_required=not dry_run,
        )
    except UsageError as exc:
        fail(str(exc), code=BAD_INPUT)
    given = [*([profile_file] if profile_file else []), *files]
    source = given[0] if given else bundled_profile()
    test_files = (*given[1:], *test_files)
    try:
        documents = [d for path in (source, *test_files) for d in load_documents(path)]
        profile_doc, tests = select_profile(documents, profile_name)
        profile_spec = dict(spec_of(profile_doc))
    except NoSuchProfileError as exc:
        fail(str(exc), code=BAD_INPUT)
    except ManifestError as exc:
        fail(str(exc), code=NOT_RUN)
    declared = declared_scope_problem(profile_spec, tests, flags=flags)
    if declared is not None:
        fail(f"{source}: refused: {declared}", code=NOT_RUN)
    outcome = host_plan(profile=profile_spec, tests=tests, node=host, flags=flags)
    if isinstance(outcome, PlanRefusal):
        fail(f"{source}: {outcome.message}", code=NOT_RUN)
    whole: PinnedPlan = outcome
    problem = scope_problem(whole, flags=flags)
    if problem is not None:
        fail(f"{source}: refused: {problem}", code=NOT_RUN)
    # N5: a mixed profile runs this invocation's scope; the rest is Skipped, named.
    skipped = not_run_here(
        whole, flags=flags, command=_invocation(source, test_files, profile_name)
    )
    plan = replace(whole, tests=tuple(t for t in whole.tests if t.name not in skipped))
    try:
        container_runtime = choose_runtime(runtime, sim=bool(sim))
    except RuntimeChoiceError as exc:
        fail(str(exc), code=NOT_RUN)
    options = LocalOptions(
        node=host,
        sim=sim,
        retry_on_error_limit=retry_on_error,
        image_commands=_parse_image_commands(image_commands),
        report_dir=report_dir,
        runtime=container_runtime,
        not_run_here=skipped,
        run_started_at=started,
        host_window=bound,
    )
    problems = preflight(plan, options=options)
    if problems:
        fail(f"{source}: plan refused: {'; '.join(problems)}", code=NOT_RUN)
    _lint(plan, source=source)
    options = _with_host_ip(plan, options=options, source=source)
    for warning in unresolved_env(plan):
        click.echo(f"glimmer: warning: {warning}", err=True)
    if dry_run:
        show_plan(plan, options=options, flags=flags, output=output, whole=whole)
        return
    cannot = unlaunchable(plan, options=options)
    if cannot:
        fail(f"{source}: refused: {'; '.join(cannot)}", code=NOT_RUN)
    if not sim and not gpu_present() and any(t.kind in ACCELERATOR_KINDS for t in plan.tests):
        fail(
            "no GPU found on this host (no /dev/nvidia0, no nvidia-smi). To rehearse the "
            f"profile on a simulated GPU: glimmer run {profile_file or ''} --sim h200".replace(
                "  ", " "
            ),
            code=NOT_RUN,
        )
    _prepare_report_dir(report_dir)
    _announce_session(flags)
    if skipped:
        click.echo(f"glimmer: warning: {not_run_here_warning(whole, skipped=skipped)}", err=True)
    for test, window in _bounded(plan, options=options):
        click.echo(f"glimmer: note: {test}: {window.describe()}", err=True)
    recorder: SideRecorder | None = None
    if isinstance(flags, GroupFlags) or (isinstance(flags, PairFlags) and flags.role == "server"):
        recorder = side_recorder(
            flags=flags,
            plan=whole,
            node=host,
            profile=profile_doc.name,
            sim=sim,
            retry_on_error_limit=retry_on_error,
            results_dir=report_dir,
            skipped=skipped,
        )
        options = replace(options, link=recorder)
    elif isinstance(flags, PairFlags):
        options = replace(
            options,
            link=PairClient(node=host, flags=flags, profile=profile_doc.name, sim=bool(sim)),
        )
    as_json = output == "json"
    if sim:
        click.echo(
            f"SIMULATED GPU {sim}: results prove the plumbing, never the silicon.", err=as_json
        )
    progress = RunProgress(sim=bool(sim), side=recorder is not None, err=as_json)
    if recorder is not None:
        _run_side(whole, options=options, recorder=recorder, progress=progress)
    # One UID for the run: its Checkpoint envelopes and its verdict's (N2, N6).
    run_uid = str(uuid.uuid4())
    checkpoints = CheckpointDelivery(
        progress=progress, sinks=sinks, uid=run_uid, node=host, profile=profile_doc.name,
        sim=sim, started_at=started, baseline=plan.baseline,
    )  # fmt: skip
    options = replace(options, checkpoints=checkpoints)
    with signals_interrupt():
        try:
            local_run = run_plan(whole, options=options, reporter=progress)
        finally:
            progress.close()
            checkpoints.close()
        with deferred():  # run.json is written whole even if a signal arrives now
            document = run_document(
                local_run.results,
                node=host,
                profile=profile_doc.name,
                sim=sim,
                started_at=started,
                finished_at=time.time(),
                stopped=local_run.stopped,
                baseline=plan.baseline,
            )
            document["gates"] = plan_gates(whole)  # M6: the plan's gates, for the report
            document["host"] = this_host(sim).to_json()  # N8: the fingerprint run on
            windows = _bounded(plan, options=options)
            if windows:  # N9: which real host windows --sim shortened
                document["hostWindows"] = [
                    {"test": name, "givenSeconds": w.given, "askedSeconds": w.asked}
                    for name, w in windows
                ]
            path = write_document(document, report_dir)
    if recorder is None:  # servers and ranks decide nothing, so they deliver nothing (N3)
        deliver(
            document,
            results_dir=report_dir,
            flags=sinks,
            baseline=plan.baseline,
            planned=verdict_units(whole),
            uid=run_uid,
            signing=None if signer is None else _signing(signer, whole),
        )
    if as_json:
        click.echo(json.dumps(document, indent=2))
    else:
        summary(local_run.results, sim=sim, document=document)
        click.echo(f"results: {path}")
    if local_run.stopped:
        click.echo(
            f"glimmer: {local_run.stopped}; what did not finish is recorded as Error in {path}",
            err=True,
        )
    raise SystemExit(exit_status(local_run.results, stopped=local_run.stopped))


def show_plan(
    plan: PinnedPlan,
    *,
    options: LocalOptions,
    flags: PairFlags | GroupFlags | None,
    output: str,
    whole: PinnedPlan | None = None,
) -> None:
    """``glimmer plan``: each execution's image (or UNRESOLVED), command, gates, axes, env;
    then the tests of ``whole`` (the profile's plan) not run here, with why (N5)."""
    view = plan_view(plan, options=options, flags=flags)
    host = this_host(options.sim)
    elsewhere = [
        {"name": t.name, "kind": t.kind, "scope": t.scope, "reason": options.not_run_here[t.name]}
        for t in (whole or plan).tests
        if t.name in options.not_run_here
    ]
    if output == "json":
        shown: dict[str, Any] = {
            "node": options.node,
            "sim": options.sim,
            "host": host.to_json(),
            "tests": view,
        }
        if elsewhere:
            shown["notRunHere"] = elsewhere
        click.echo(json.dumps(shown, indent=2))
        return
    click.echo(host_line(host))
    for index, entry in enumerate(view):
        click.echo(
            f"{index + 1}. {entry['name']} ({entry['kind']}, {entry['scope']}) on "
            f"{', '.join(entry['nodes'])}{'' if entry['required'] else ' (not required)'}"
        )
        click.echo(f"   image: {image_line(entry)}")
        command = entry["command"]
        if command:
            click.echo(f"   runtime: {entry['runtime']}")
        click.echo(f"   command: {shlex.join(command) if command else entry['commandProblem']}")
        click.echo(f"   repeats: {entry['repeatCount']}")
        if entry["hostWindow"] is not None:
            click.echo(f"   window: {entry['hostWindow']['note']}")
        gates = entry["gates"] or [{"metric": "(none: the runner's exit code decides)"}]
        for gate in gates:
            words = [str(gate.get(k, "")) for k in ("metric", "comparison", "value")]
            extra = f" ({gate['applicability']})" if gate.get("applicability") else ""
            click.echo(f"   gate: {' '.join(w for w in words if w)}{extra}")
        for axis, value in sorted(entry["variantAxes"].items()):
            click.echo(f"   axis: {axis}={value}")
        for item in entry["env"]:
            value = "(unset on this host)" if item["value"] is None else item["value"]
            click.echo(f"   env: {item['name']}={value}")
    for item in elsewhere:
        click.echo(
            f"not run here: {item['name']} ({item['kind']}, {item['scope']}): {item['reason']}"
        )


def _host_window(text: str | None, *, sim: str | None) -> int | None:
    """N9: ``--host-window`` as a bound in seconds (None: the profile's windows)."""
    if text is None:
        return DEFAULT_SIM_HOST_WINDOW_S if sim is not None else None
    if sim is None:
        fail(
            "--host-window bounds real host windows only under --sim: a shortened window "
            "is not the test the profile asked for; drop the flag, or add --sim",
            code=BAD_INPUT,
        )
    if text.strip().lower() == "full":
        return None
    try:
        seconds = int(text)
    except ValueError:
        seconds = 0
    if seconds < 1:
        fail(f"--host-window {text!r}: a whole number of seconds (>= 1) or 'full'", code=BAD_INPUT)
    return seconds


def _attestation_signer(path: Path | None) -> CryptoSigner | None:
    """N19: the key, read before anything runs; an unusable one is a usage error naming
    the file and how to make a key, never a run that ends unsigned."""
    if path is None:
        return None
    from glimmer.attest import UnusableKeyError, load_signer

    try:
        return load_signer(path.read_bytes(), source=f"--attestation-key {path}")
    except (OSError, UnusableKeyError) as exc:
        fail(str(exc), code=BAD_INPUT)


def _signing(signer: CryptoSigner, plan: PinnedPlan) -> BareSigning:
    from glimmer.attest import plan_digest
    from glimmer.sinks.attestation import BareSigning

    return BareSigning(signer=signer, plan_digest=plan_digest(plan.to_annotation()))


def _bounded(plan: PinnedPlan, *, options: LocalOptions) -> list[tuple[str, HostWindow]]:
    """The tests whose real host window ``--host-window`` shortens (N9), in plan order."""
    return [
        (test.name, window)
        for test in plan.tests
        if (window := host_window(test, options=options)) is not None
    ]


def _lint(plan: PinnedPlan, *, source: Path) -> None:
    """C5 at run start, as ``glimmer lint`` and the operator classify: Malformed refuses
    the run (the plan already does; this is the backstop), Unsound is printed and the
    run proceeds. Never promote one or demote the other."""
    refused: list[str] = []
    for finding in lint_tests(plan.tests):
        line = f"test {finding.test!r}: {finding.metric}: {finding.severity}: {finding.reason}"
        if finding.severity == MALFORMED:
            refused.append(line)
        else:
            click.echo(f"glimmer: warning: {line}", err=True)
    if refused:
        more = f"; and {len(refused) - 5} more" if len(refused) > 5 else ""
        fail(f"{source}: malformed thresholds: {'; '.join(refused[:5])}{more}", code=NOT_RUN)


def _with_host_ip(plan: PinnedPlan, *, options: LocalOptions, source: Path) -> LocalOptions:
    """N2: ``valueFrom: status.hostIP`` is this host's primary address; a test that
    reads it on a host with none is refused (a loopback stand-in would misdirect it)."""
    readers = needs_host_ip(plan)
    if not readers:
        return options
    address = primary_address()
    if address is None:
        fail(
            f"{source}: {', '.join(readers)}: runner.env reads status.hostIP, but this host "
            "has no primary address (no default route); give the value in runner.env "
            "instead of valueFrom",
            code=NOT_RUN,
        )
    return replace(options, host_ip=address)


def _run_side(
    plan: PinnedPlan, *, options: LocalOptions, recorder: SideRecorder, progress: RunProgress
) -> None:
    """A side that records and decides nothing (Pair server, Group rank)."""
    with signals_interrupt():
        try:
            local_run = run_plan(plan, options=options, reporter=progress)
        finally:
            progress.close()
        with deferred():  # the record is written whole even if a signal arrives now
            path = recorder.finish(stopped=local_run.stopped)
    who = (
        "the Pair client decides"
        if recorder.record.role == "server"
        else f"run glimmer merge --results-dir DIR --nranks {recorder.record.nranks} "
        "once every rank's record is in DIR/ranks"
    )
    click.echo(f"side record: {path}; no verdict on this side: {who}")
    if local_run.stopped:
        click.echo(f"glimmer: {local_run.stopped}; the record says so ({path})", err=True)
        raise SystemExit(NOT_RUN)
    raise SystemExit(NOTHING_JUDGED)


def _invocation(source: Path, test_files: tuple[Path, ...], profile_name: str | None) -> str:
    """How this profile is run, for the command a test not run here names (N5)."""
    words = ["glimmer", "run", str(source)]
    for path in test_files:
        words += ["--tests", str(path)]
    if profile_name:
        words += ["--profile", profile_name]
    return shlex.join(words)


def _announce_session(flags: PairFlags | GroupFlags | None) -> None:
    """The session a Pair server or Group rank 0 created: every other side needs it."""
    if flags is None or not flags.session_created:
        return
    who = "the client (with --server-record)" if isinstance(flags, PairFlags) else "every rank"
    click.echo(
        f"glimmer: session {flags.session}: give {who} the same session: "
        f"{SESSION_ENV}={flags.session} (or --session {flags.session})",
        err=True,
    )


def _prepare_report_dir(report_dir: Path) -> None:
    """Create the report directory and drop a previous run's run.json before starting.

    A stale run.json left in place would be read as this run's verdict if this run
    were killed outright (SIGKILL) before writing its own.
    """
    try:
        report_dir.mkdir(parents=True, exist_ok=True)
        (report_dir / "run.json").unlink(missing_ok=True)
    except OSError as exc:
        fail(f"--report-dir {report_dir}: cannot be written: {exc}", code=NOT_RUN)
