"""The bare-host dispatcher: one profile, this host, runners as local processes.

It is the operator's twin without a cluster: the same plan (``glimmer.plan``), the
same contract and verdict, the same repeats and Error-only retries, so a verdict on
a bare host means what it means in-cluster. Differences by design (semantics N2):
Node scope only, a segmented soak runs as one process for its whole duration, and
reserved ``BURNIN_*`` names in ``runner.env`` are ignored.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from glimmer.contract import Artifact, artifact_name_ok
from glimmer.local.process import ProcessResult, run_runner
from glimmer.local.serialize import artifact_refs
from glimmer.plan import PinnedPlan, PlannedTest, active_deadline_seconds, runner_env
from glimmer.plan import spec as specs
from glimmer.plan.gates import threshold_from_wire
from glimmer.verdict import (
    AttemptRecord,
    AttemptVerdict,
    Phase,
    Provenance,
    TestResultState,
    apply_termination,
    fail_fast_stops,
    judge_attempt,
    record_attempt,
)
from runners.catalog import RUNNERS

SIM_ENV = "GLIMMER_SIM_GPU"


class Reporter(Protocol):
    """Live progress; the CLI draws it, tests record it."""

    def attempt_started(self, *, test: str, attempt: int, index: int, total: int) -> None: ...

    def attempt_finished(self, *, test: str, verdict: AttemptVerdict, seconds: float) -> None: ...

    def test_finished(self, *, result: LocalResult) -> None: ...


@dataclass
class LocalResult:
    """A settled test result plus what only the bare host records."""

    state: TestResultState
    scope: str
    node: str
    started_at: float | None = None
    finished_at: float | None = None
    artifacts: list[dict[str, Any]] = field(default_factory=list)
    raw_logs: list[str] = field(default_factory=list)
    variant_axes: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class LocalOptions:
    node: str
    sim: str | None = None
    retry_on_error_limit: int = 0
    image_commands: Mapping[str, Sequence[str]] = field(default_factory=dict)
    report_dir: Path | None = None


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
        f"no local command for {image}: set runner.command in the test, or pass "
        f"--image-command {test.kind}=CMD"
    )


def _env(test: PlannedTest, *, attempt: int, options: LocalOptions) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BURNIN_")}
    env.pop(SIM_ENV, None)
    for entry in runner_env(
        spec=test.spec,
        attempt=attempt,
        axes=test.axes,
        include_resource_limits=False,
        ignore_reserved_runner_env=True,
    ):
        value = _env_value(entry, options)
        if value is not None:
            env[str(entry["name"])] = value
    if specs.soak(test.spec) is not None:
        # N2: on a bare host a soak is one process for its whole duration.
        env["BURNIN_DURATION_SECONDS"] = str(specs.duration_seconds(test.spec))
    if options.sim:
        env[SIM_ENV] = options.sim
    return env


def _env_value(entry: Mapping[str, Any], options: LocalOptions) -> str | None:
    if "valueFrom" not in entry:
        return str(entry.get("value", ""))
    field_path = ((entry.get("valueFrom") or {}).get("fieldRef") or {}).get("fieldPath")
    if field_path == "spec.nodeName":
        return options.node
    if field_path == "status.hostIP":
        return "127.0.0.1"
    return None  # left unset, never empty (N2)


def _deadline(test: PlannedTest) -> int:
    if specs.soak(test.spec) is not None:
        return specs.duration_seconds(test.spec) + 120
    return active_deadline_seconds(test.spec, "Node")


def _keep_artifacts(
    artifacts: Sequence[Artifact], *, test: str, attempt: int, options: LocalOptions
) -> None:
    if options.report_dir is None:
        return
    folder = options.report_dir / "artifacts"
    for artifact in artifacts:
        if artifact_name_ok(artifact.name):
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"{test}.a{attempt}.{artifact.name}").write_bytes(artifact.payload)


def run_plan(plan: PinnedPlan, *, options: LocalOptions, reporter: Reporter) -> list[LocalResult]:
    """Run every test of the plan on this host, in order, one at a time."""
    results: list[LocalResult] = []
    provenance = Provenance.SIM if options.sim else None
    for index, test in enumerate(plan.tests):
        if plan.fail_fast and fail_fast_stops(r.state for r in results):
            break
        local = LocalResult(
            state=TestResultState(
                name=test.name,
                kind=test.kind,
                required=test.required,
                repeats_required=specs.repeat_count(test.spec),
            ),
            scope=test.scope,
            node=options.node,
            variant_axes=dict(test.axes),
        )
        while local.state.open:
            attempt = len(local.state.attempts) + 1
            reporter.attempt_started(
                test=test.name, attempt=attempt, index=index, total=len(plan.tests)
            )
            verdict, record, seconds = _one_attempt(
                test,
                attempt=attempt,
                trigger_state=local.state,
                options=options,
                provenance=provenance,
                local=local,
            )
            local.state = record_attempt(
                local.state,
                verdict,
                retry_on_error_limit=options.retry_on_error_limit,
                record=record,
            )
            reporter.attempt_finished(test=test.name, verdict=verdict, seconds=seconds)
        results.append(local)
        reporter.test_finished(result=local)
    return results


def _one_attempt(
    test: PlannedTest,
    *,
    attempt: int,
    trigger_state: TestResultState,
    options: LocalOptions,
    provenance: Provenance | None,
    local: LocalResult,
) -> tuple[AttemptVerdict, AttemptRecord, float]:
    command = runner_command(test, options)
    thresholds = [threshold_from_wire(t) for t in specs.thresholds(test.spec)]
    started = time.time()
    if isinstance(command, str):
        verdict = AttemptVerdict(
            phase=Phase.ERROR,
            message=command,
            exit_code=0,
            metrics={},
            unmeasurable=(),
            provenance=provenance or Provenance.SILICON,
        )
        finished = started
    else:
        raw = None
        if options.report_dir is not None:
            (options.report_dir / "raw").mkdir(parents=True, exist_ok=True)
            raw = options.report_dir / "raw" / f"{test.name}.a{attempt}.log"
            local.raw_logs.append(str(raw.relative_to(options.report_dir)))
        outcome: ProcessResult = run_runner(
            command=command,
            env=_env(test, attempt=attempt, options=options),
            kind=test.kind,
            deadline_seconds=_deadline(test),
            raw_log=raw,
        )
        report = outcome.report
        verdict = judge_attempt(
            report, kind=test.kind, thresholds=thresholds, dispatcher_provenance=provenance
        )
        verdict = apply_termination(verdict, outcome.termination, runner_line=report.message)
        started, finished = outcome.started_at, outcome.finished_at
        _keep_artifacts(report.artifacts, test=test.name, attempt=attempt, options=options)
        local.artifacts.extend(artifact_refs(report.artifacts, report.dropped_artifacts))
        if local.started_at is None:
            local.started_at = started
    local.finished_at = finished
    record = AttemptRecord(
        attempt=attempt,
        trigger=trigger_state.next_trigger(),
        phase=verdict.phase,
        exit_code=verdict.exit_code,
        message=verdict.message,
        metrics=dict(verdict.metrics),
        provenance=verdict.provenance,
        node=options.node,
        started_at=_rfc3339(started) if not isinstance(command, str) else None,
        finished_at=_rfc3339(finished),
    )
    return verdict, record, finished - started


def _rfc3339(stamp: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(stamp))


def rfc3339(stamp: float | None) -> str | None:
    return None if stamp is None else _rfc3339(stamp)


def settle_interrupted(results: list[LocalResult]) -> list[LocalResult]:
    """Mark anything still open as Error: an interrupted run judged nothing it didn't finish."""
    return [
        replace(r, state=replace(r.state, phase=Phase.ERROR, message="interrupted before settling"))
        if r.state.open
        else r
        for r in results
    ]
