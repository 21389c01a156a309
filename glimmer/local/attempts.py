"""One attempt at a time until a test's result settles: run, judge, record.

The same plan, contract and verdict as the operator, so a verdict on a bare host means
what it means in-cluster: repeats and Error-only retries through ``record_attempt``, one
judgement through ``judge_attempt`` (a Pair or Group side's through its link's fold), and
a segmented soak judged as one window (N2: it runs as one process or container for its
whole duration). An attempt nothing here could run, or one stopped mid-way, is Error
and never silicon (I14). :func:`preflight` calls the functions the attempts call, once
per test before any runs, so nothing derived from the spec is found only when an
attempt runs.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from glimmer.contract import Artifact, RunnerReport
from glimmer.local.checkpoints import CheckpointWatch, RunCheckpoints
from glimmer.local.filenames import artifact_folder, raw_log_path
from glimmer.local.interrupt import why_stopped
from glimmer.local.launch import host_window, launch
from glimmer.local.model import LinkError, LocalOptions, LocalResult, Reporter
from glimmer.local.process import ProcessResult, run_runner
from glimmer.local.records import SideAttempt
from glimmer.local.serialize import artifact_refs
from glimmer.plan import (
    PinnedPlan,
    PlannedTest,
    SpecError,
    active_deadline_seconds,
    execution_window_seconds,
)
from glimmer.plan import spec as specs
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
    fold_segment,
    judge_aggregate,
    judge_attempt,
    record_attempt,
)

#: Kinds with a fixed window worth a progress bar with time left (soaks and stress).
LONG_KINDS: frozenset[str] = frozenset(
    {"clockprobe", "thermal-soak", "gpu-burn", "memory-stress", "dcgm-diag", "fabric-soak"}
)


def progress_window(test: PlannedTest, *, options: LocalOptions | None = None) -> float | None:
    """The window a soak or stress test's runner is given (``BURNIN_DURATION_SECONDS``
    here: the whole duration for a soak, N2; the bounded one under ``--host-window``,
    N9), None for short or unknown-length work."""
    bound = None if options is None else host_window(test, options=options)
    if bound is not None:
        return float(bound.given)
    if specs.soak(test.spec) is not None:
        return float(specs.duration_seconds(test.spec))
    if test.kind not in LONG_KINDS:
        return None
    return float(execution_window_seconds(test.spec))


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


def _deadline(test: PlannedTest) -> int:
    if specs.soak(test.spec) is not None:
        return specs.duration_seconds(test.spec) + 120
    return active_deadline_seconds(test.spec, test.scope)


def run_test(
    test: PlannedTest,
    *,
    local: LocalResult,
    index: int,
    total: int,
    options: LocalOptions,
    reporter: Reporter,
    checkpoints: RunCheckpoints | None = None,
) -> None:
    """Attempts until the result settles (repeats, Error retries); ``checkpoints`` is
    the run's checkpointing (None: this side takes none)."""
    provenance = Provenance.SIM if options.sim else None
    while local.state.open:
        attempt = len(local.state.attempts) + 1
        reporter.attempt_started(
            test=test.name,
            attempt=attempt,
            index=index,
            total=total,
            window_seconds=progress_window(test, options=options),
        )
        try:
            verdict, record, seconds = _one_attempt(
                test,
                attempt=attempt,
                trigger_state=local.state,
                options=options,
                provenance=provenance,
                local=local,
                checkpoints=checkpoints,
            )
        except (KeyboardInterrupt, Exception) as exc:
            _record_stopped_attempt(local, why=why_stopped(exc), options=options)
            raise
        local.state = record_attempt(
            local.state,
            verdict,
            retry_on_error_limit=options.retry_on_error_limit,
            record=record,
        )
        # The recorded attempt now says what the result's metrics are, as the status's
        # attempt write replaces a checkpoint's (H1); lastCheckpointAt stays.
        local.checkpoint_metrics, local.flight_metrics = {}, {}
        reporter.attempt_finished(test=test.name, verdict=verdict, seconds=seconds)


def _record_stopped_attempt(local: LocalResult, *, why: str, options: LocalOptions) -> None:
    """The attempt in flight when the run stopped: Error, never a verdict, never retried."""
    now = time.time()
    state = local.state
    verdict = _unjudged(
        f"{why}: the attempt was stopped before it finished; no verdict",
        exit_code=-1,
        options=options,
        # I23: what a checkpoint already read stays on the Error, as evidence.
        metrics=local.flight_metrics,
    )
    record = attempt_record(
        verdict,
        attempt=len(state.attempts) + 1,
        trigger=state.next_trigger(),
        node=options.record_node,
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
    checkpoints: RunCheckpoints | None = None,
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
        local.flight_metrics = {}
        with CheckpointWatch(test, local=local, run=checkpoints) as watch:
            outcome: ProcessResult = run_runner(
                command=how.command,
                env=how.env,
                kind=test.kind,
                deadline_seconds=_deadline(test),
                raw_log=raw,
                stopper=how.stopper,
                on_output=watch.feed if watch.active else None,
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
        node=options.record_node,
        started_at=_rfc3339(started) if not isinstance(how, str) else None,
        finished_at=_rfc3339(finished),
    )
    return verdict, record, finished - started


def _keep_artifacts(
    report: RunnerReport, *, test: str, attempt: int, options: LocalOptions, local: LocalResult
) -> list[dict[str, Any]]:
    """Append the attempt's artifact refs to the result in the order they were printed
    (I31), writing each accepted payload under the report directory.

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


def _unjudged(
    message: str,
    *,
    exit_code: int,
    options: LocalOptions,
    metrics: dict[str, str] | None = None,
) -> AttemptVerdict:
    """An attempt this dispatcher settles as Error without reading a runner (no
    command, or stopped mid-attempt). Nobody declared the hardware, so it is never
    silicon (I14): ``sim`` under ``--sim``, else ``unknown``, as the operator's.
    ``metrics`` is what a checkpoint already read (I23): evidence, never judged."""
    return AttemptVerdict(
        phase=Phase.ERROR,
        message=message,
        exit_code=exit_code,
        metrics=dict(metrics or {}),
        unmeasurable=(),
        provenance=Provenance.SIM if options.sim else Provenance.UNKNOWN,
    )


def _rfc3339(stamp: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(stamp))


def rfc3339(stamp: float | None) -> str | None:
    return None if stamp is None else _rfc3339(stamp)
