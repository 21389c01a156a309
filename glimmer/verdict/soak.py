"""Segmented soaks (G1-G6): the fold of clean segments, the one judgement of the
aggregate, the early abort and the attempt-history cap.

A week-long soak is a chain of full windows, so an eviction costs one window, not
the week. Only a segment's exit code decides it (G2); the gates describe the soak,
so they run once, over the fold (G3), through the same evaluator and messages as any
attempt (:func:`~glimmer.verdict.judge_attempt`). The fold is persisted, and the
verdict is read from it, never from the attempt history, which is capped (G5).

Both dispatchers use these functions: the operator folds each segment pod as it
ends; ``glimmer run`` runs a soak as one process (N2) and judges its one report as
a soak of one window through :func:`judge_aggregate`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass, field, replace
from typing import Final

from glimmer.contract.kinds import is_hardware_dependent
from glimmer.contract.numbers import format_go_plain, parse_go_float
from glimmer.contract.registry import Aggregation, aggregation_of
from glimmer.contract.report import Outcome, RunnerReport
from glimmer.verdict.attempt import AttemptVerdict, judge_attempt
from glimmer.verdict.messages import join_clauses
from glimmer.verdict.phases import Phase, Provenance
from glimmer.verdict.rollup import (
    AttemptRecord,
    ResultClosedError,
    TestResultState,
    result_provenance,
)
from glimmer.verdict.thresholds import Comparison, Threshold, Violation, ViolationKind, evaluate

#: G5: a segmented result keeps at most this many attempts before elision starts ...
ATTEMPT_HISTORY_CAP: Final = 17
#: ... and then the first, every non-Passed one, and this many most recent Passed.
RECENT_PASSED_KEPT: Final = 16


@dataclass(frozen=True, slots=True)
class SoakProgress:
    """What a segmented result has persisted beside its attempts (status fields
    ``segmentsRequired``, ``segmentSeconds``, ``segmentsCompleted``,
    ``aggregatedMetrics``, ``truncatedAttempts``; the folded unmeasurable names are
    the open result's ``unmeasurable``)."""

    required: int
    segment_seconds: int
    completed: int = 0
    aggregate: Mapping[str, str] = field(default_factory=dict)
    unmeasurable: frozenset[str] = frozenset()
    truncated: int = 0

    @property
    def prefix(self) -> str:
        """G3's message prefix: how much of the soak the aggregate covers."""
        return f"{self.completed} segment(s) of {self.segment_seconds}s completed"


def poisoned(value: str) -> bool:
    """A reading no numeric fold can carry: not float-parseable (C1), or NaN/±Inf."""
    number = parse_go_float(value)
    return number is None or not math.isfinite(number)


def fold_value(aggregation: Aggregation, current: str | None, reading: str) -> str:
    """One key's fold (G2): Sum adds (re-rendered as Go ``FormatFloat 'f' -1``),
    Min/Max keep the extreme *original* string, Last takes the newest.

    For Sum/Min/Max a poisoned reading poisons the key, and a poisoned key stays
    poisoned whatever comes after, so its gate reads NonNumeric/NonFinite and fails
    closed: a later clean window must not wash out a garbage one.
    """
    if aggregation is Aggregation.LAST:
        return reading
    if current is not None and poisoned(current):
        return current
    if poisoned(reading):
        return reading
    got = parse_go_float(reading)
    assert got is not None  # not poisoned
    if current is None:
        return format_go_plain(got) if aggregation is Aggregation.SUM else reading
    have = parse_go_float(current)
    assert have is not None  # not poisoned
    if aggregation is Aggregation.SUM:
        return format_go_plain(have + got)
    if aggregation is Aggregation.MIN:
        return reading if got < have else current
    return reading if got > have else current  # Aggregation.MAX


def fold_metrics(aggregate: Mapping[str, str], window: Mapping[str, str]) -> dict[str, str]:
    """``aggregate`` with one window's metrics folded in, by each name's registered
    Aggregation (unregistered names are Last). Also what a checkpoint shows (G6)."""
    folded = dict(aggregate)
    for name, reading in window.items():
        folded[name] = fold_value(aggregation_of(name), folded.get(name), reading)
    return dict(sorted(folded.items()))


def fold_unmeasurable(
    prior: Set[str], window: Set[str], *, folded: Mapping[str, str]
) -> frozenset[str]:
    """G2: unmeasurable names are unioned, except those the fold holds a value for (the
    maps stay disjoint, A9), whatever order the segments came in."""
    return frozenset((set(prior) | set(window)) - set(folded))


def fold_segment(
    progress: SoakProgress, *, metrics: Mapping[str, str], unmeasurable: Set[str]
) -> SoakProgress:
    """A clean segment folded in: one more completed (G2)."""
    aggregate = fold_metrics(progress.aggregate, metrics)
    return replace(
        progress,
        completed=progress.completed + 1,
        aggregate=aggregate,
        unmeasurable=fold_unmeasurable(progress.unmeasurable, unmeasurable, folded=aggregate),
    )


def judge_aggregate(
    progress: SoakProgress,
    *,
    kind: str,
    thresholds: Sequence[Threshold],
    runner_line: str = "",
    provenance: Provenance | None = None,
    invalid_names: tuple[str, ...] = (),
) -> AttemptVerdict:
    """G3: the gates, once, over the aggregate, through the one attempt judgement (its
    empty-harvest rule, evaluator and message composition), the message prefixed with
    how much of the soak the aggregate covers. ``invalid_names`` are the last window's
    (A7: its note closes the message on any phase)."""
    report = RunnerReport(
        exit_code=0,
        outcome=Outcome.PASS,
        metrics=dict(progress.aggregate),
        unmeasurable=progress.unmeasurable,
        invalid_names=invalid_names,
        invalid_name_count=len(invalid_names),
        message=runner_line,
        skip_declared=False,
        artifacts=(),
        dropped_artifacts=(),
    )
    verdict = judge_attempt(
        report, kind=kind, thresholds=thresholds, dispatcher_provenance=provenance
    )
    return replace(verdict, message=_prefixed(progress.prefix, verdict.message))


def _prefixed(prefix: str, message: str) -> str:
    return f"{prefix}: {message}" if message else prefix


def _provable(threshold: Threshold, value: str) -> bool:
    aggregation = aggregation_of(threshold.metric)
    comparison = threshold.comparison
    if aggregation is Aggregation.SUM:
        if comparison == Comparison.LESS_THAN_OR_EQUAL:
            return True
        if comparison == Comparison.EQUAL:
            got, want = parse_go_float(value), parse_go_float(threshold.value)
            return got is not None and want is not None and got > want
        return False
    if aggregation is Aggregation.MIN:
        return comparison == Comparison.GREATER_THAN_OR_EQUAL
    if aggregation is Aggregation.MAX:
        return comparison == Comparison.LESS_THAN_OR_EQUAL
    return False


def provable_violations(
    progress: SoakProgress, thresholds: Sequence[Threshold]
) -> tuple[Violation, ...]:
    """G4: the aggregate's violations no later segment can retract: a Sum that only
    grows past a ceiling (or past an exact count), a Min already under a floor, a Max
    already over a ceiling. Only Unsatisfied readings count: a metric not yet
    reported, unmeasurable or unparseable never aborts (it is not a measurement)."""
    evaluation = evaluate(thresholds, progress.aggregate, progress.unmeasurable)
    return tuple(
        v
        for v in evaluation.violations
        if v.kind is ViolationKind.UNSATISFIED
        and _provable(thresholds[v.index], progress.aggregate[v.metric])
    )


def abort_verdict(
    progress: SoakProgress,
    provable: Sequence[Violation],
    *,
    runner_line: str = "",
    provenance: Provenance | None = None,
) -> AttemptVerdict:
    """G4: settle Failed now, on the aggregate, with only the provable violations."""
    if not provable:
        raise ValueError("an early abort needs a provable violation")
    more = len(provable) - 1
    message = join_clauses(
        provable[0].reason,
        f"[abortEarly: no later segment can retract this; "
        f"{progress.completed} of {progress.required} segment(s) run]",
        f"[and {more} more provable violation(s)]" if more else "",
    )
    return AttemptVerdict(
        phase=Phase.FAILED,
        message=_prefixed(progress.prefix, message),
        exit_code=0,
        metrics=dict(progress.aggregate),
        unmeasurable=tuple(sorted(progress.unmeasurable)),
        violations=tuple(provable),
        provenance=provenance or Provenance.UNKNOWN,
        gated=True,
    )


def cap_attempts(attempts: Sequence[AttemptRecord]) -> tuple[tuple[AttemptRecord, ...], int]:
    """G5: past 17 attempts keep the first, every non-Passed and the 16 most recent
    Passed, in order; returns what is kept and how many were dropped. Nothing the
    verdict reads is lost: that is the persisted fold."""
    if len(attempts) <= ATTEMPT_HISTORY_CAP:
        return tuple(attempts), 0
    passed = [i for i, a in enumerate(attempts) if i > 0 and a.phase is Phase.PASSED]
    recent = set(passed[-RECENT_PASSED_KEPT:])
    kept = tuple(
        a for i, a in enumerate(attempts) if i == 0 or a.phase is not Phase.PASSED or i in recent
    )
    return kept, len(attempts) - len(kept)


def record_segment(
    state: TestResultState,
    progress: SoakProgress,
    verdict: AttemptVerdict,
    *,
    thresholds: Sequence[Threshold],
    retry_on_error_limit: int,
    record: AttemptRecord,
    abort_early: bool = False,
) -> tuple[TestResultState, SoakProgress]:
    """Apply one segment's verdict (judged with ``gate=False``) to an open soak (G2-G5).

    Exit 0 folds and completes the segment (the last one is judged on the aggregate;
    with ``abortEarly`` a provable violation settles Failed now); Fail settles Failed
    with that window's metrics; a declared skip settles Skipped; Error is retried under
    the budget at the same segment index and contributes nothing, and once the budget
    is spent settles Error keeping the aggregate.
    """
    if not state.open:
        raise ResultClosedError(f"result {state.name!r} already settled {state.phase}")
    provenance = result_provenance(state, record, verdict)
    kept, dropped = cap_attempts((*state.attempts, record))
    state = replace(state, attempts=kept, provenance=provenance)
    progress = replace(progress, truncated=progress.truncated + dropped)
    index = progress.completed + 1
    if verdict.phase is Phase.PASSED:
        progress = fold_segment(
            progress, metrics=verdict.metrics, unmeasurable=set(verdict.unmeasurable)
        )
        if progress.completed >= progress.required:
            final = judge_aggregate(
                progress, kind=state.kind, thresholds=thresholds, runner_line=verdict.message,
                provenance=verdict.provenance, invalid_names=verdict.invalid_names,
            )  # fmt: skip
            if final.phase is Phase.PASSED:
                state = replace(state, repeats_completed=state.repeats_required)
            return _settle(state, final), progress
        if abort_early:
            provable = provable_violations(progress, thresholds)
            if provable:
                final = abort_verdict(
                    progress, provable, runner_line=verdict.message, provenance=verdict.provenance
                )
                return _settle(state, final), progress
        return _open(
            state, progress, message=f"segment {progress.completed}/{progress.required} complete"
        ), progress
    if verdict.phase is Phase.ERROR:
        if state.error_retries < max(retry_on_error_limit, 0):
            retried = replace(state, error_retries=state.error_retries + 1,
                              retry_trigger=verdict.message)  # fmt: skip
            return _open(retried, progress, message=retried.message), progress
        # G3: six days of evidence survive a last-hour eviction.
        kept_aggregate = replace(
            verdict,
            message=_prefixed(progress.prefix, verdict.message),
            metrics=dict(progress.aggregate),
            unmeasurable=tuple(sorted(progress.unmeasurable)),
            violations=(),
            not_evaluated=(),
        )
        return _settle(state, kept_aggregate), progress
    # Failed (exit 1) settles now on that window; a declared skip settles Skipped.
    window = replace(verdict, message=f"segment {index}/{progress.required}: {verdict.message}")
    return _settle(state, window), progress


def _open(state: TestResultState, progress: SoakProgress, *, message: str) -> TestResultState:
    """An open soak shows the fold as its metrics (G2), never a window's."""
    return replace(
        state,
        message=message,
        metrics=dict(progress.aggregate),
        unmeasurable=tuple(sorted(progress.unmeasurable)),
        violations=(),
        not_evaluated=(),
    )


def _settle(state: TestResultState, verdict: AttemptVerdict) -> TestResultState:
    # D4: phase, message and the numbers that explain it, together.
    sim_pass = state.provenance is Provenance.SIM and is_hardware_dependent(state.kind)
    suspect = verdict.phase is Phase.PASSED and (verdict.suspect or sim_pass)
    return replace(
        state,
        phase=verdict.phase,
        message=verdict.message,
        metrics=dict(verdict.metrics),
        violations=verdict.violations,
        not_evaluated=verdict.not_evaluated,
        unmeasurable=verdict.unmeasurable,
        suspect=suspect,
    )
