"""The bare-host dispatcher: one profile, this host, runners as processes or containers.

It is the operator's twin without a cluster: the same plan (``glimmer.plan``), the
same contract and verdict, the same repeats and Error-only retries, so a verdict on
a bare host means what it means in-cluster. Each execution runs either as a local
process (this repository's runners, ``runner.command``, ``--image-command``) or as
its image under a container runtime (``LocalOptions.runtime``,
:mod:`glimmer.local.runtimes`); both are supervised and read the same way. Differences
by design (semantics N2): a segmented soak runs as one process or container for its
whole duration, and reserved ``BURNIN_*`` names in ``runner.env`` are ignored. Pair
and Group tests run one *side* here (``LocalOptions.link``, see
:mod:`glimmer.local.links`): the side's runner gets the rendezvous environment and the
peer's address as given (host networking, N2), and the link decides what each
attempt's report means.

Nothing the dispatcher does may end ``glimmer run`` with exit 1 (a hardware Fail) or
without ``run.json``: a run that is interrupted (SIGINT/SIGTERM) or that meets an
unexpected error of ours stops, records every unfinished test as Error (in flight,
and not yet started alike: a run.json holding only the tests that happened to finish
could read Passed), and returns; :attr:`LocalRun.stopped` says why.
"""

from __future__ import annotations

import os
import secrets
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from glimmer.contract import SIM_GPU_ENV, Artifact, RunnerReport
from glimmer.local.filenames import artifact_folder, raw_log_path
from glimmer.local.interrupt import Interrupted
from glimmer.local.process import ProcessResult, run_runner
from glimmer.local.records import SideAttempt
from glimmer.local.runtimes import (
    ContainerRuntime,
    ContainerStop,
    container_command,
    container_name,
)
from glimmer.local.serialize import artifact_refs
from glimmer.plan import (
    GroupRendezvous,
    ImageError,
    PairRendezvous,
    PinnedPlan,
    PlannedTest,
    SpecError,
    active_deadline_seconds,
    execution_window_seconds,
    resolve_image,
    runner_env,
)
from glimmer.plan import spec as specs
from glimmer.plan.env import DURATION
from glimmer.plan.gates import threshold_from_wire
from glimmer.verdict import (
    AttemptRecord,
    AttemptVerdict,
    Phase,
    Provenance,
    SoakProgress,
    TestResultState,
    apply_termination,
    attempt_record,
    fail_fast_stops,
    fold_segment,
    judge_aggregate,
    judge_attempt,
    record_attempt,
)
from runners.catalog import RUNNERS


class Reporter(Protocol):
    """Live progress; the CLI draws it, tests record it.

    ``window_seconds`` is the attempt's known window for long work (a soak or a
    stress kind, :func:`progress_window`), None when it has none worth a bar.
    """

    def attempt_started(
        self,
        *,
        test: str,
        attempt: int,
        index: int,
        total: int,
        window_seconds: float | None = None,
    ) -> None: ...

    def attempt_finished(self, *, test: str, verdict: AttemptVerdict, seconds: float) -> None: ...

    def test_finished(self, *, result: LocalResult) -> None: ...


class SilentReporter:
    """A :class:`Reporter` that shows nothing: for callers that read only the results
    (an embedding program, a test)."""

    def attempt_started(
        self,
        *,
        test: str,
        attempt: int,
        index: int,
        total: int,
        window_seconds: float | None = None,
    ) -> None:
        return None

    def attempt_finished(self, *, test: str, verdict: AttemptVerdict, seconds: float) -> None:
        return None

    def test_finished(self, *, result: LocalResult) -> None:
        return None


class LinkSide(Protocol):
    """How one side of a Pair or Group runs here (:mod:`glimmer.local.links`).

    ``decides`` is False for a side that only records (a Pair server, a Group rank):
    its attempts are judged without gates, only to know whether another attempt is
    owed, and that provisional verdict is never written as a result.
    """

    @property
    def decides(self) -> bool: ...

    @property
    def rendezvous(self) -> PairRendezvous | GroupRendezvous: ...

    @property
    def nodes(self) -> tuple[str, ...]: ...

    @property
    def record_node(self) -> str: ...

    def fold(self, *, test: PlannedTest, attempt: SideAttempt) -> RunnerReport:
        """The report this attempt is judged on; raises :class:`LinkError` when it
        cannot be known (the attempt is then Error, never judged on a guess)."""
        ...


class LinkError(Exception):
    """The other side's evidence for an attempt cannot be read; the attempt is Error."""


@dataclass
class LocalResult:
    """A settled test result plus what only the bare host records."""

    state: TestResultState
    scope: str
    node: str
    #: Every node the result covers (Pair: server, client; Group: rank order).
    nodes: tuple[str, ...] = ()
    started_at: float | None = None
    finished_at: float | None = None
    artifacts: list[dict[str, Any]] = field(default_factory=list)
    #: What each listed artifact ref stands for (A12's de-duplication identity).
    artifact_ids: set[tuple[str, str]] = field(default_factory=set, repr=False)
    raw_logs: list[str] = field(default_factory=list)
    variant_axes: Mapping[str, str] = field(default_factory=dict)
    #: When the attempt now in flight began (for the record of an interrupted one).
    attempt_started_at: float | None = None


@dataclass
class LocalRun:
    """Every planned test's result, and why the run stopped early ("" when it did not)."""

    results: list[LocalResult]
    stopped: str = ""


@dataclass(frozen=True)
class LocalOptions:
    node: str
    sim: str | None = None
    retry_on_error_limit: int = 0
    image_commands: Mapping[str, Sequence[str]] = field(default_factory=dict)
    report_dir: Path | None = None
    #: ``status.hostIP`` for ``valueFrom`` (the host's primary address, N2).
    host_ip: str = "127.0.0.1"
    #: The Pair/Group side this host plays; None for Node scope.
    link: LinkSide | None = None
    #: The container runtime that runs images; None: every execution is a local process.
    runtime: ContainerRuntime | None = None
    #: Part of every container's name, so this run can stop its own containers.
    run_id: str = field(default_factory=lambda: secrets.token_hex(4))


#: Kinds with a fixed window worth a progress bar with time left (soaks and stress).
LONG_KINDS: frozenset[str] = frozenset(
    {"clockprobe", "thermal-soak", "gpu-burn", "memory-stress", "dcgm-diag", "fabric-soak"}
)


def progress_window(test: PlannedTest) -> float | None:
    """The window a soak or stress test's runner is given (``BURNIN_DURATION_SECONDS``
    here: the whole duration for a soak, N2), None for short or unknown-length work."""
    if specs.soak(test.spec) is not None:
        return float(specs.duration_seconds(test.spec))
    if test.kind not in LONG_KINDS:
        return None
    return float(execution_window_seconds(test.spec))


@dataclass(frozen=True)
class Launch:
    """How one attempt starts: the command, its environment, and for a container what
    stops the container itself when the attempt is cut short."""

    command: list[str]
    env: dict[str, str]
    runtime: str
    stopper: ContainerStop | None = None


def execution_image(test: PlannedTest) -> str | ImageError:
    """The execution's image as the plan resolves it. A bare host knows no node vendor,
    so ``imagesByVendor`` is not consulted: ``runner.image`` or the kind's default."""
    return resolve_image(kind=test.kind, runner=specs.runner(test.spec), node_vendor=None)


def runner_command(test: PlannedTest, options: LocalOptions) -> list[str] | str:
    """The process that stands in for the test's image, or why there is none."""
    runner = specs.runner(test.spec)
    args = [str(a) for a in runner.get("args") or []]
    override = options.image_commands.get(test.kind)
    if override:
        return [*override, *args]
    command = [str(c) for c in runner.get("command") or []]
    if command:
        return [*command, *args]
    catalog = RUNNERS.get(test.kind)
    if catalog is not None and not specs.runner_image(test.spec):
        return [sys.executable, "-m", catalog.module, *args]
    image = specs.runner_image(test.spec) or f"the default {test.kind} image"
    return (
        f"no container runtime and no local command for {image}: install podman, docker "
        "or nerdctl (--runtime auto picks the first that works), set runner.command in "
        f"the test, or pass --image-command {test.kind}=CMD"
    )


def launch(
    test: PlannedTest,
    *,
    attempt: int,
    options: LocalOptions,
    rendezvous: PairRendezvous | GroupRendezvous | None = None,
) -> Launch | str:
    """How attempt ``attempt`` runs, or why it cannot (refused before anything runs).

    ``--image-command`` always means a local process; otherwise a runtime runs the
    image, and without one the local process of :func:`runner_command` stands in.
    ``rendezvous`` stands in for the link's when there is no link yet (``glimmer plan``).
    """
    runtime = options.runtime
    if runtime is None or options.image_commands.get(test.kind):
        command = runner_command(test, options)
        if isinstance(command, str):
            return command
        env = {
            **_host_env(),
            **runner_variables(test, attempt=attempt, options=options, rendezvous=rendezvous),
        }
        return Launch(command=command, env=env, runtime="process")
    image = execution_image(test)
    if isinstance(image, ImageError):
        return f"no image to run with {runtime.name}: {image.message}"
    name = container_name(run_id=options.run_id, test=test.name, attempt=attempt)
    client_env = _host_env()
    command = container_command(
        test,
        runtime=runtime,
        image=image,
        env=runner_variables(test, attempt=attempt, options=options, rendezvous=rendezvous),
        name=name,
        host_network=test.scope in ("Pair", "Group"),
    )
    return Launch(
        command=command,
        env=client_env,
        runtime=runtime.name,
        stopper=ContainerStop(runtime=runtime, name=name, env=client_env),
    )


def _host_env() -> dict[str, str]:
    """This host's environment without anything a runner must get only from the plan."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("BURNIN_")}
    env.pop(SIM_GPU_ENV, None)
    return env


def _env(test: PlannedTest, *, attempt: int, options: LocalOptions) -> dict[str, str]:
    """A local runner's environment: the host's, then the runner's own variables."""
    return {**_host_env(), **runner_variables(test, attempt=attempt, options=options)}


def runner_variables(
    test: PlannedTest,
    *,
    attempt: int,
    options: LocalOptions,
    rendezvous: PairRendezvous | GroupRendezvous | None = None,
) -> dict[str, str]:
    """The variables the plan gives the runner (api §10 as N2 adjusts it), in order:
    the same for a local process and a container."""
    if rendezvous is None and options.link is not None:
        rendezvous = options.link.rendezvous
    env: dict[str, str] = {}
    for entry in runner_env(
        spec=test.spec,
        attempt=attempt,
        axes=test.axes,
        rendezvous=rendezvous,
        include_resource_limits=False,
        ignore_reserved_runner_env=True,
    ):
        value = _env_value(entry, options)
        if value is not None:
            env[str(entry["name"])] = value
    if specs.soak(test.spec) is not None:
        # N2: on a bare host a soak is one process for its whole duration.
        env[DURATION] = str(specs.duration_seconds(test.spec))
    if options.sim:
        env[SIM_GPU_ENV] = options.sim
    return env


#: ``fieldRef`` paths a bare host can answer (N2); any other source is left unset.
_LOCAL_FIELD_PATHS = ("spec.nodeName", "status.hostIP")


def _field_path(entry: Mapping[str, Any]) -> Any:
    source = entry.get("valueFrom")
    field_ref = source.get("fieldRef") if isinstance(source, Mapping) else None
    return field_ref.get("fieldPath") if isinstance(field_ref, Mapping) else None


def _env_value(entry: Mapping[str, Any], options: LocalOptions) -> str | None:
    if entry.get("valueFrom") is None:
        return str(entry.get("value") or "")
    field_path = _field_path(entry)
    if field_path == "spec.nodeName":
        return options.node
    if field_path == "status.hostIP":
        return options.host_ip
    return None  # left unset, never empty (N2)


def needs_host_ip(plan: PinnedPlan) -> list[str]:
    """Tests whose ``runner.env`` reads ``status.hostIP`` (the host's address is needed)."""
    return [
        test.name
        for test in plan.tests
        if any(_field_path(e) == "status.hostIP" for e in specs.runner_env(test.spec))
    ]


def planned_env(
    test: PlannedTest,
    *,
    options: LocalOptions,
    rendezvous: PairRendezvous | GroupRendezvous | None,
) -> list[tuple[str, str | None]]:
    """``glimmer plan``: the BURNIN_* and ``runner.env`` names a runner would get, in
    order, with their values (None: left unset on this host, N2)."""
    return [
        (str(entry["name"]), _env_value(entry, options))
        for entry in runner_env(
            spec=test.spec,
            attempt=1,
            axes=test.axes,
            rendezvous=rendezvous,
            include_resource_limits=False,
            ignore_reserved_runner_env=True,
        )
    ]


def unresolved_env(plan: PinnedPlan) -> list[str]:
    """N2's warning: ``runner.env`` entries a bare host leaves unset, one line each."""
    lines = []
    for test in plan.tests:
        for entry in specs.runner_env(test.spec):
            if entry.get("valueFrom") is not None and _field_path(entry) not in _LOCAL_FIELD_PATHS:
                lines.append(
                    f"test {test.name!r}: runner.env {entry['name']} is left unset on a bare "
                    "host (only fieldRef spec.nodeName and status.hostIP resolve here)"
                )
    return lines


def preflight(plan: PinnedPlan, *, options: LocalOptions) -> list[str]:
    """Build every test's command, environment, deadline and gates once, before any runs.

    The plan has already refused malformed fields; this is the backstop that makes
    "found only when the attempt runs" impossible for anything derived from the spec:
    the same functions the attempts call are called here, and what raises is refused.
    """
    problems = []
    for test in plan.tests:
        try:
            launch(test, attempt=1, options=options)
            _deadline(test)
            for threshold in specs.thresholds(test.spec):
                threshold_from_wire(threshold)
            specs.repeat_count(test.spec)
        except (SpecError, ValueError, TypeError, KeyError, AttributeError) as err:
            problems.append(f"test {test.name!r}: {err}")
    return problems


def unlaunchable(plan: PinnedPlan, *, options: LocalOptions) -> list[str]:
    """Tests nothing on this host can run (no image for the runtime, no runtime and no
    local command), one line each naming the fix: ``glimmer run`` refuses them before
    anything runs rather than finding them as an Error per attempt; ``glimmer plan``
    shows them."""
    found = []
    for test in plan.tests:
        how = launch(test, attempt=1, options=options)
        if isinstance(how, str):
            found.append(f"test {test.name!r}: {how}")
    return found


def _deadline(test: PlannedTest) -> int:
    if specs.soak(test.spec) is not None:
        return specs.duration_seconds(test.spec) + 120
    return active_deadline_seconds(test.spec, test.scope)


def _keep_artifacts(
    report: RunnerReport, *, test: str, attempt: int, options: LocalOptions, local: LocalResult
) -> list[dict[str, Any]]:
    """Append the attempt's artifact refs to the result in the order they were printed
    (I19.21), writing each accepted payload under the report directory.

    A12, as the operator keeps them: a ref is listed once per place its payload is kept
    (test, attempt, name, as the operator's ConfigMap key is test, pod, name) or, when
    dropped, once per name and drop reason. The first payload of a name is the one kept,
    so a listed ref's digest always matches its file.
    """
    relative = artifact_folder(test=test, attempt=attempt)
    kept: list[dict[str, Any]] = []
    for found, ref in zip(report.artifacts_in_order, artifact_refs(report), strict=True):
        dropped = "dropped" in ref
        identity = (
            (str(ref["dropped"]), found.name) if dropped else ("", str(relative / found.name))
        )
        if identity in local.artifact_ids:
            continue
        local.artifact_ids.add(identity)
        if not dropped and isinstance(found, Artifact) and options.report_dir is not None:
            folder = options.report_dir / relative
            folder.mkdir(parents=True, exist_ok=True)
            (folder / found.name).write_bytes(found.payload)
            ref["file"] = str(relative / found.name)
        local.artifacts.append(ref)
        kept.append(ref)
    return kept


def run_plan(plan: PinnedPlan, *, options: LocalOptions, reporter: Reporter) -> LocalRun:
    """Run every test of the plan on this host, in order, one at a time.

    An interrupt or an unexpected error stops the run; it never escapes from here, so
    the caller can always write ``run.json`` (see the module docstring).
    """
    run = LocalRun(results=[])
    index = 0
    try:
        for index, test in enumerate(plan.tests):
            if plan.fail_fast and fail_fast_stops(r.state for r in run.results):
                return run
            local = _new_result(test, options=options)
            run.results.append(local)
            _run_test(
                test,
                local=local,
                index=index,
                total=len(plan.tests),
                options=options,
                reporter=reporter,
            )
            reporter.test_finished(result=local)
    except (KeyboardInterrupt, Exception) as exc:
        run.stopped = _why_stopped(exc)
        run.results[:] = settle_interrupted(run.results, why=run.stopped)
        started = {r.state.name for r in run.results}
        run.results += [
            _not_started(test, options=options, why=run.stopped)
            for test in plan.tests[index:]
            if test.name not in started
        ]
    return run


def _run_test(
    test: PlannedTest,
    *,
    local: LocalResult,
    index: int,
    total: int,
    options: LocalOptions,
    reporter: Reporter,
) -> None:
    """Attempts until the result settles (repeats, Error retries)."""
    provenance = Provenance.SIM if options.sim else None
    while local.state.open:
        attempt = len(local.state.attempts) + 1
        reporter.attempt_started(
            test=test.name,
            attempt=attempt,
            index=index,
            total=total,
            window_seconds=progress_window(test),
        )
        try:
            verdict, record, seconds = _one_attempt(
                test,
                attempt=attempt,
                trigger_state=local.state,
                options=options,
                provenance=provenance,
                local=local,
            )
        except (KeyboardInterrupt, Exception) as exc:
            _record_stopped_attempt(local, why=_why_stopped(exc), options=options)
            raise
        local.state = record_attempt(
            local.state,
            verdict,
            retry_on_error_limit=options.retry_on_error_limit,
            record=record,
        )
        reporter.attempt_finished(test=test.name, verdict=verdict, seconds=seconds)


def _why_stopped(exc: BaseException) -> str:
    if isinstance(exc, Interrupted):
        return f"interrupted ({exc.signal_name})"
    if isinstance(exc, KeyboardInterrupt):
        return "interrupted (SIGINT)"
    return f"internal error: {type(exc).__name__}: {exc}"


def _new_result(test: PlannedTest, *, options: LocalOptions) -> LocalResult:
    return LocalResult(
        state=TestResultState(
            name=test.name,
            kind=test.kind,
            required=test.required,
            repeats_required=specs.repeat_count(test.spec),
        ),
        scope=test.scope,
        node=options.node,
        nodes=_nodes(options),
        variant_axes=dict(test.axes),
    )


def _nodes(options: LocalOptions) -> tuple[str, ...]:
    return options.link.nodes if options.link is not None else (options.node,)


def _record_node(options: LocalOptions) -> str:
    """F9: a link's attempts are recorded on the server's / rank 0's node."""
    return options.link.record_node if options.link is not None else options.node


def _not_started(test: PlannedTest, *, options: LocalOptions, why: str) -> LocalResult:
    """A test the stopped run never reached: Error, so the run cannot read Passed."""
    kind = test.spec.get("kind")
    scope = test.spec.get("scope")
    return LocalResult(
        state=TestResultState(
            name=test.name,
            kind=kind if isinstance(kind, str) else "",
            required=test.required,
            phase=Phase.ERROR,
            message=f"{why} before this test ran; no verdict",
        ),
        scope=scope if isinstance(scope, str) else "Node",
        node=options.node,
        nodes=_nodes(options),
        variant_axes=dict(test.axes),
    )


def _record_stopped_attempt(local: LocalResult, *, why: str, options: LocalOptions) -> None:
    """The attempt in flight when the run stopped: Error, never a verdict, never retried."""
    now = time.time()
    state = local.state
    verdict = _unjudged(
        f"{why}: the attempt was stopped before it finished; no verdict",
        exit_code=-1,
        options=options,
    )
    record = attempt_record(
        verdict,
        attempt=len(state.attempts) + 1,
        trigger=state.next_trigger(),
        node=_record_node(options),
        started_at=rfc3339(local.attempt_started_at),
        finished_at=_rfc3339(now),
    )
    local.state = record_attempt(state, verdict, retry_on_error_limit=0, record=record)
    local.finished_at = now
    if local.started_at is None:
        local.started_at = local.attempt_started_at


def _one_attempt(
    test: PlannedTest,
    *,
    attempt: int,
    trigger_state: TestResultState,
    options: LocalOptions,
    provenance: Provenance | None,
    local: LocalResult,
) -> tuple[AttemptVerdict, AttemptRecord, float]:
    how = launch(test, attempt=attempt, options=options)
    thresholds = [threshold_from_wire(t) for t in specs.thresholds(test.spec)]
    started = time.time()
    local.attempt_started_at = started
    if isinstance(how, str):
        verdict = _unjudged(how, exit_code=0, options=options)
        finished = started
    else:
        raw = None
        if options.report_dir is not None:
            relative = raw_log_path(test=test.name, attempt=attempt)
            raw = options.report_dir / relative
            raw.parent.mkdir(parents=True, exist_ok=True)
            local.raw_logs.append(str(relative))
        outcome: ProcessResult = run_runner(
            command=how.command,
            env=how.env,
            kind=test.kind,
            deadline_seconds=_deadline(test),
            raw_log=raw,
            stopper=how.stopper,
        )
        report = outcome.report
        started, finished = outcome.started_at, outcome.finished_at
        kept = _keep_artifacts(
            report, test=test.name, attempt=attempt, options=options, local=local
        )
        if local.started_at is None:
            local.started_at = started
        verdict = _judge(
            test,
            own=SideAttempt(
                attempt=attempt,
                report=report,
                termination=outcome.termination,
                started_at=_rfc3339(started),
                finished_at=_rfc3339(finished),
                raw_log=local.raw_logs[-1] if raw is not None else "",
                artifacts=tuple(kept),
            ),
            thresholds=thresholds,
            options=options,
            provenance=provenance,
        )
    local.finished_at = finished
    record = attempt_record(
        verdict,
        attempt=attempt,
        trigger=trigger_state.next_trigger(),
        node=_record_node(options),
        started_at=_rfc3339(started) if not isinstance(how, str) else None,
        finished_at=_rfc3339(finished),
    )
    return verdict, record, finished - started


def _judge(
    test: PlannedTest,
    *,
    own: SideAttempt,
    thresholds: Sequence[Any],
    options: LocalOptions,
    provenance: Provenance | None,
) -> AttemptVerdict:
    """The one judgement of an attempt: its own report (Node), or the link's fold of
    every side's (Pair client, Group merge), through ``judge_attempt`` either way.

    A side that does not decide is judged without gates: the verdict only says whether
    its own runner asks for another attempt and is never written as a result.
    """
    link = options.link
    report = own.report
    if link is not None:
        try:
            report = link.fold(test=test, attempt=own)
        except LinkError as err:
            return _unjudged(str(err), exit_code=own.report.exit_code, options=options)
        if not link.decides:
            thresholds = ()
    if specs.soak(test.spec) is not None and thresholds:
        verdict = judge_soak(test, report, thresholds=thresholds, provenance=provenance)
    else:
        verdict = judge_attempt(
            report, kind=test.kind, thresholds=thresholds, dispatcher_provenance=provenance
        )
    return apply_termination(verdict, own.termination, runner_line=own.report.message)


def judge_soak(
    test: PlannedTest,
    report: RunnerReport,
    *,
    thresholds: Sequence[Any],
    provenance: Provenance | None,
) -> AttemptVerdict:
    """N2: a soak here is one process for its whole duration, so it is one window,
    judged as the operator judges a soak (G2/G3, :mod:`glimmer.verdict.soak`): the
    exit code decides the window, a clean one is folded (Sum re-rendered, a non-finite
    Sum/Min/Max reading poisoned) and the gates run once over that fold."""
    window = judge_attempt(
        report, kind=test.kind, thresholds=thresholds, dispatcher_provenance=provenance,
        gate=False,
    )  # fmt: skip
    if window.phase is not Phase.PASSED:
        return window
    progress = fold_segment(
        SoakProgress(required=1, segment_seconds=specs.duration_seconds(test.spec)),
        metrics=window.metrics,
        unmeasurable=set(window.unmeasurable),
    )
    return judge_aggregate(
        progress, kind=test.kind, thresholds=thresholds, runner_line=report.message,
        provenance=window.provenance, invalid_names=window.invalid_names,
    )  # fmt: skip


def _unjudged(message: str, *, exit_code: int, options: LocalOptions) -> AttemptVerdict:
    """An attempt this dispatcher settles as Error without reading a runner (no
    command, or stopped mid-attempt). Nobody declared the hardware, so it is never
    silicon (I19.4): ``sim`` under ``--sim``, else ``unknown``, as the operator's."""
    return AttemptVerdict(
        phase=Phase.ERROR,
        message=message,
        exit_code=exit_code,
        metrics={},
        unmeasurable=(),
        provenance=Provenance.SIM if options.sim else Provenance.UNKNOWN,
    )


def _rfc3339(stamp: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(stamp))


def rfc3339(stamp: float | None) -> str | None:
    return None if stamp is None else _rfc3339(stamp)


def settle_interrupted(
    results: list[LocalResult], *, why: str = "interrupted"
) -> list[LocalResult]:
    """Mark anything still open as Error: an interrupted run judged nothing it didn't finish."""
    return [
        replace(
            r,
            state=replace(r.state, phase=Phase.ERROR, message=f"{why} before settling; no verdict"),
        )
        if r.state.open
        else r
        for r in results
    ]
