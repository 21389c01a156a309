"""One attempt: a runner report + the test's thresholds -> a phase (D1, A10, A13).

This is the one choke point every scope and both dispatchers go through: Node,
Pair and Group results, the operator and ``glimmer run``. If two places decided
"is this Error or Fail", one of them would be wrong.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from glimmer.contract.kinds import is_hardware_dependent
from glimmer.contract.report import MAX_LINE_BYTES, Outcome, RunnerReport
from glimmer.verdict.messages import (
    UNREADABLE_LINE,
    bracket,
    gated_message,
    invalid_names_note,
    join_clauses,
    plural,
    unreadable_note,
)
from glimmer.verdict.phases import Phase, Provenance, resolve_provenance
from glimmer.verdict.thresholds import Evaluation, NotEvaluated, Threshold, Violation, evaluate


@dataclass(frozen=True, slots=True)
class AttemptVerdict:
    phase: Phase
    message: str
    exit_code: int
    metrics: dict[str, str]
    unmeasurable: tuple[str, ...]
    violations: tuple[Violation, ...] = ()
    not_evaluated: tuple[NotEvaluated, ...] = ()
    invalid_names: tuple[str, ...] = ()
    #: Fail closed: a verdict nobody said anything about is not silicon.
    provenance: Provenance = Provenance.UNKNOWN
    #: A simulated Pass of a hardware-dependent kind: it proves the plumbing, not the part.
    suspect: bool = False
    undeclared_skip: bool = False
    empty_harvest: bool = False
    #: Error because an output line could not be read (I13): the message says so, and
    #: the kubelet's account of an ordinary exit must not replace it.
    unreadable_output: bool = False
    #: Gates that were evaluated at all (False for Fail/Skip/Error and for segments).
    gated: bool = False


def _runner_error_message(report: RunnerReport) -> str:
    if report.undeclared_skip:
        return join_clauses(
            "runner exited 2 without declaring a skip (no <PREFIX>_SKIP: line); "
            "treated as Error, not Skipped: a crash looks the same",
            bracket(report.message),
        )
    return report.message or f"runner exited {report.exit_code} with no message (no verdict)"


def judge_attempt(
    report: RunnerReport,
    *,
    kind: str,
    thresholds: Sequence[Threshold],
    dispatcher_provenance: Provenance | None = None,
    gate: bool = True,
    logs_unavailable: bool = False,
) -> AttemptVerdict:
    """Decide one attempt's phase from what the runner declared.

    ``gate=False`` is for a soak segment: only the exit code decides (G2), the gates
    run once over the aggregate. ``logs_unavailable`` is the A13 rule: when the log
    could not be fetched, a gate on an absent metric is unjudged (Error), not Failed.
    """
    provenance = resolve_provenance(report.provenance, dispatcher=dispatcher_provenance)
    unmeasurable = tuple(sorted(report.unmeasurable))
    invalid_note = join_clauses(
        invalid_names_note(report.invalid_names, report.invalid_name_count),
        unreadable_note(report.unreadable_lines) if report.outcome is not Outcome.PASS else "",
    )

    def verdict(phase: Phase, message: str) -> AttemptVerdict:
        return AttemptVerdict(
            phase=phase,
            message=join_clauses(message, invalid_note),
            exit_code=report.exit_code,
            metrics=dict(report.metrics),
            unmeasurable=unmeasurable,
            invalid_names=report.invalid_names,
            provenance=provenance,
            suspect=(
                phase is Phase.PASSED
                and provenance is Provenance.SIM
                and is_hardware_dependent(kind)
            ),
            undeclared_skip=report.undeclared_skip,
        )

    if report.outcome is Outcome.FAIL:
        return verdict(Phase.FAILED, report.message or "runner reported a failure (exit 1)")
    if report.outcome is Outcome.SKIP:
        return verdict(Phase.SKIPPED, report.message)
    if report.outcome is Outcome.ERROR:
        return verdict(Phase.ERROR, _runner_error_message(report))

    # Outcome.PASS: an unreadable line comes first (I13): it may have carried a newer
    # value of any name, so no value read before it may decide, gated or not.
    if report.unreadable_lines:
        return replace(
            verdict(
                Phase.ERROR,
                join_clauses(
                    f"{UNREADABLE_LINE} ({plural(report.unreadable_lines, 'line')} over "
                    f"{MAX_LINE_BYTES} bytes): an older value could stand in for what it said, "
                    "no verdict",
                    bracket(report.message),
                ),
            ),
            unreadable_output=True,
        )
    # The empty-harvest rule (A10) comes before any gate.
    if thresholds and report.harvested_nothing:
        empty = verdict(
            Phase.ERROR,
            join_clauses(
                f"runner exited 0 but measured nothing: no metric was reported, so "
                f"{len(thresholds)} threshold(s) cannot be judged",
                bracket(report.message),
            ),
        )
        return replace(empty, empty_harvest=True)
    if logs_unavailable and thresholds and _gated_metric_absent(report, thresholds):
        return verdict(
            Phase.ERROR,
            join_clauses(
                "runner logs unavailable: a gated metric could not be read, no verdict",
                bracket(report.message),
            ),
        )
    if not gate:
        return verdict(Phase.PASSED, report.message)
    metrics, unmeasurable_names, exposed = _expose_violating_readings(report, thresholds)
    evaluation: Evaluation = evaluate(thresholds, metrics, unmeasurable_names)
    gated = verdict(
        Phase.PASSED if evaluation.passed else Phase.FAILED,
        join_clauses(gated_message(evaluation, runner_line=report.message), *exposed),
    )
    return replace(
        gated,
        violations=evaluation.violations,
        not_evaluated=evaluation.not_evaluated,
        gated=True,
    )


def _expose_violating_readings(
    report: RunnerReport, thresholds: Sequence[Threshold]
) -> tuple[dict[str, str], frozenset[str], list[str]]:
    """The metrics the gates judge: the report's, plus, for a key a Group fold dropped
    (F7), the first rank reading that violates a gate on it.

    F7 drops a key whose readings conflict (one rank's ``n/a`` beside another's value,
    unclassified readings that differ) and marks it unmeasurable; a ``RequiredIfMeasurable``
    gate would then not be evaluated, and a rank that *measured* 7 ECC errors would pass
    behind its neighbour's ``n/a``. A reading that alone violates a gate is a provable
    violation, so it is judged; readings that satisfy every gate change nothing.
    """
    metrics = dict(report.metrics)
    unmeasurable = set(report.unmeasurable)
    notes: list[str] = []
    for name, readings in report.dropped_readings:
        gates = [t for t in thresholds if t.metric == name]
        if not gates:
            continue
        for side, value in readings:
            if not evaluate(gates, {name: value}, frozenset()).passed:
                metrics[name] = value
                unmeasurable.discard(name)
                notes.append(
                    f"[{name}={value} is {side}'s own reading: the group value was dropped "
                    "because the ranks disagreed, but this reading alone violates the gate]"
                )
                break
    return metrics, frozenset(unmeasurable), notes


def _gated_metric_absent(report: RunnerReport, thresholds: Sequence[Threshold]) -> bool:
    return any(
        t.metric not in report.metrics and t.metric not in report.unmeasurable for t in thresholds
    )
