"""From attempts to a test result, and from results to a run verdict (D2-D7).

Repeats only make a gate stricter (an AND of passing executions); only an Error,
which means "unjudged", is ever retried, because re-running a Fail until it passes
launders a hardware fault. The run verdict lets a hardware Failed outrank machinery
noise (Error), and never lets unjudged work read as Passed.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from glimmer.verdict.attempt import AttemptVerdict
from glimmer.verdict.phases import Phase, Provenance
from glimmer.verdict.thresholds import NotEvaluated, Violation


class Trigger(enum.StrEnum):
    INITIAL = "Initial"
    REPEAT = "Repeat"
    ERROR_RETRY = "ErrorRetry"
    SEGMENT = "Segment"


@dataclass(frozen=True, slots=True)
class AttemptRecord:
    """One execution, the status ``TestAttempt`` shape."""

    attempt: int
    trigger: Trigger
    phase: Phase
    exit_code: int
    message: str
    metrics: Mapping[str, str]
    provenance: Provenance = Provenance.SILICON
    node: str = ""
    pod_name: str = ""
    started_at: str | None = None
    finished_at: str | None = None


@dataclass(frozen=True, slots=True)
class TestResultState:
    """One execution unit's result; ``phase`` is Running while it is open."""

    __test__ = False  # not a pytest test class, despite the name

    name: str
    kind: str
    required: bool = True
    phase: Phase = Phase.RUNNING
    repeats_required: int = 1
    repeats_completed: int = 0
    error_retries: int = 0
    attempts: tuple[AttemptRecord, ...] = ()
    message: str = ""
    metrics: Mapping[str, str] = field(default_factory=dict)
    violations: tuple[Violation, ...] = ()
    not_evaluated: tuple[NotEvaluated, ...] = ()
    unmeasurable: tuple[str, ...] = ()
    provenance: Provenance = Provenance.SILICON
    suspect: bool = False
    #: What made the last retry happen (e.g. the Error message), recorded for readers.
    retry_trigger: str = ""

    @property
    def synthetic(self) -> bool:
        """Synthetic results (``resolve``, ``admission``) are detected by the empty kind."""
        return self.kind == ""

    @property
    def open(self) -> bool:
        return not self.phase.terminal

    def next_trigger(self, *, segmented: bool = False) -> Trigger:
        if not self.attempts:
            return Trigger.INITIAL
        if self.attempts[-1].phase is Phase.ERROR:
            return Trigger.ERROR_RETRY
        return Trigger.SEGMENT if segmented else Trigger.REPEAT


class ResultClosedError(ValueError):
    """An attempt was recorded against a result that already settled."""


def _settle(state: TestResultState, verdict: AttemptVerdict, phase: Phase) -> TestResultState:
    # D4: the numbers beside a phase always explain it, so they are written together.
    return replace(
        state,
        phase=phase,
        message=verdict.message,
        metrics=dict(verdict.metrics),
        violations=verdict.violations,
        not_evaluated=verdict.not_evaluated,
        unmeasurable=verdict.unmeasurable,
        provenance=verdict.provenance,
        suspect=verdict.suspect and phase is Phase.PASSED,
    )


def record_attempt(
    state: TestResultState,
    verdict: AttemptVerdict,
    *,
    retry_on_error_limit: int,
    record: AttemptRecord | None = None,
) -> TestResultState:
    """Apply one attempt's verdict to an open result (D2-D4).

    ``retry_on_error_limit`` is read live from the run. ``record`` is the attempt's
    history entry (built from the verdict when omitted).
    """
    if not state.open:
        raise ResultClosedError(f"result {state.name!r} already settled {state.phase}")
    entry = record or AttemptRecord(
        attempt=len(state.attempts) + 1,
        trigger=state.next_trigger(),
        phase=verdict.phase,
        exit_code=verdict.exit_code,
        message=verdict.message,
        metrics=dict(verdict.metrics),
        provenance=verdict.provenance,
    )
    state = replace(state, attempts=(*state.attempts, entry))
    if verdict.phase is Phase.PASSED:
        completed = state.repeats_completed + 1
        state = replace(state, repeats_completed=completed)
        if completed >= max(state.repeats_required, 1):
            return _settle(state, verdict, Phase.PASSED)
        return replace(state, metrics=dict(verdict.metrics), provenance=verdict.provenance)
    if verdict.phase is Phase.ERROR:
        # D3: only Error is retried, and it consumes no repeat.
        if state.error_retries < max(retry_on_error_limit, 0):
            return replace(
                state,
                error_retries=state.error_retries + 1,
                retry_trigger=verdict.message,
            )
        return _settle(state, verdict, Phase.ERROR)
    # Failed settles at once (no retry, no more repeats); so does Skipped.
    return _settle(state, verdict, verdict.phase)


def force_settle(state: TestResultState, *, phase: Phase, message: str) -> TestResultState:
    """Settle an open result without an attempt (cancel, deadline, terminate)."""
    if not state.open:
        return state
    return replace(state, phase=phase, message=message, suspect=False)


@dataclass(frozen=True, slots=True)
class Counters:
    passed: int = 0
    failed: int = 0
    errored: int = 0
    skipped: int = 0


def count(results: Iterable[TestResultState]) -> Counters:
    """D5: one count per phase; open and Cancelled results count nowhere."""
    tally = {Phase.PASSED: 0, Phase.FAILED: 0, Phase.ERROR: 0, Phase.SKIPPED: 0}
    for result in results:
        if result.phase in tally:
            tally[result.phase] += 1
    return Counters(
        passed=tally[Phase.PASSED],
        failed=tally[Phase.FAILED],
        errored=tally[Phase.ERROR],
        skipped=tally[Phase.SKIPPED],
    )


def decides(result: TestResultState) -> bool:
    """Only required results (and synthetic ones, which stand for the whole run) decide."""
    return result.required or result.synthetic


def run_phase(results: Iterable[TestResultState]) -> Phase:
    """D6, applied when nothing is left: Failed beats Error beats Passed.

    Skips and non-required results never decide, and a run is never Skipped.
    """
    phase = Phase.PASSED
    for result in results:
        if not decides(result):
            continue
        if result.phase is Phase.FAILED:
            return Phase.FAILED
        if result.phase is Phase.ERROR:
            phase = Phase.ERROR
    return phase


def fail_fast_stops(results: Iterable[TestResultState]) -> bool:
    """D7: once any required result is Failed, nothing further in plan order runs."""
    return any(r.required and r.phase is Phase.FAILED for r in results)


@dataclass(frozen=True, slots=True)
class RunProvenance:
    provenance: Provenance
    #: Only a run measured entirely on silicon can certify a node for service.
    certifies_silicon: bool
    suspect_results: tuple[str, ...]


def run_provenance(results: Iterable[TestResultState], *, phase: Phase) -> RunProvenance:
    collected = list(results)
    sim = any(r.provenance is Provenance.SIM for r in collected if not r.synthetic)
    suspects = tuple(r.name for r in collected if r.suspect)
    return RunProvenance(
        provenance=Provenance.SIM if sim else Provenance.SILICON,
        certifies_silicon=phase is Phase.PASSED and not sim and not suspects,
        suspect_results=suspects,
    )
