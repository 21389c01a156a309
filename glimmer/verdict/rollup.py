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
from typing import Final

from glimmer.contract.kinds import is_hardware_dependent
from glimmer.verdict.attempt import AttemptVerdict
from glimmer.verdict.phases import Phase, Provenance, weakest
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
    provenance: Provenance = Provenance.UNKNOWN
    node: str = ""
    pod_name: str = ""
    started_at: str | None = None
    finished_at: str | None = None
    #: UID of the runner pod the attempt ran in (the operator's audit trail: the name is
    #: reused by a re-created pod, the UID never); "" where there was no pod.
    pod_uid: str = ""


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
    #: The weakest over every attempt (I15); UNKNOWN until an attempt is recorded.
    provenance: Provenance = Provenance.UNKNOWN
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


def attempt_record(
    verdict: AttemptVerdict,
    *,
    attempt: int,
    trigger: Trigger,
    node: str = "",
    pod_name: str = "",
    pod_uid: str = "",
    started_at: str | None = None,
    finished_at: str | None = None,
) -> AttemptRecord:
    """The one constructor of an attempt's history entry from its verdict, for both
    dispatchers: the entry says what the verdict said, field for field."""
    return AttemptRecord(
        attempt=attempt,
        trigger=trigger,
        phase=verdict.phase,
        exit_code=verdict.exit_code,
        message=verdict.message,
        metrics=dict(verdict.metrics),
        provenance=verdict.provenance,
        node=node,
        pod_name=pod_name,
        pod_uid=pod_uid,
        started_at=started_at,
        finished_at=finished_at,
    )


class ResultClosedError(ValueError):
    """An attempt was recorded against a result that already settled."""


def result_provenance(
    state: TestResultState, entry: AttemptRecord, verdict: AttemptVerdict
) -> Provenance:
    """I15: a result is as weak as its weakest attempt (any sim attempt makes it
    sim), Error attempts included: the result is the sum of everything that ran.

    Once the result has history its own recorded provenance counts too, so a weaker
    value than its listed attempts show (e.g. attempts elided) is never lost.
    """
    prior = [a.provenance for a in state.attempts]
    if state.attempts:
        prior.append(state.provenance)
    return weakest((*prior, entry.provenance, verdict.provenance))


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
        suspect=phase is Phase.PASSED and (verdict.suspect or _sim_pass_suspect(state)),
    )


def _sim_pass_suspect(state: TestResultState) -> bool:
    """A Pass the weakest attempt says was simulated proves the plumbing, not the part."""
    return state.provenance is Provenance.SIM and is_hardware_dependent(state.kind)


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
    entry = record or attempt_record(
        verdict, attempt=len(state.attempts) + 1, trigger=state.next_trigger()
    )
    provenance = result_provenance(state, entry, verdict)
    state = replace(state, attempts=(*state.attempts, entry), provenance=provenance)
    if verdict.phase is Phase.PASSED:
        completed = state.repeats_completed + 1
        state = replace(state, repeats_completed=completed)
        if completed >= max(state.repeats_required, 1):
            return _settle(state, verdict, Phase.PASSED)
        return replace(state, metrics=dict(verdict.metrics))
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
    #: Only a measured, Passed, non-baseline run whose every required result Passed on
    #: silicon can certify a node for service (I16).
    certifies_silicon: bool
    suspect_results: tuple[str, ...]
    #: Some required result was judged on hardware (Passed or Failed); False for a run
    #: that Passed only because every required result was Skipped.
    measured: bool = False


def run_provenance(
    results: Iterable[TestResultState], *, phase: Phase, baseline: bool = False
) -> RunProvenance:
    """The run's provenance and whether it certifies silicon (I16), from the results.

    ``baseline`` is the pinned ``spec.baseline``: a baseline run measures, it never
    certifies. A run with no measured result is UNKNOWN, never silicon.
    """
    collected = [r for r in results if not r.synthetic]
    required = [r for r in collected if r.required]
    suspects = tuple(r.name for r in collected if r.suspect)
    measured = any(r.phase in (Phase.PASSED, Phase.FAILED) for r in required)
    certifies = (
        phase is Phase.PASSED
        and not baseline
        and measured
        and all(r.phase is Phase.PASSED and r.provenance is Provenance.SILICON for r in required)
        and not any(r.provenance is Provenance.SIM for r in collected)
        and not suspects
    )
    return RunProvenance(
        provenance=weakest(r.provenance for r in collected),
        certifies_silicon=certifies,
        suspect_results=suspects,
        measured=measured,
    )


#: I16: the run condition that says whether anything was measured.
MEASURED_CONDITION: Final = "Measured"
#: Reason when some required result was judged on hardware (status True).
REASON_MEASURED: Final = "RequiredResultsMeasured"
#: Reason when nothing was (status False): e.g. every required result Skipped.
REASON_NOTHING_MEASURED: Final = "NothingMeasured"


@dataclass(frozen=True, slots=True)
class ConditionFact:
    """A run condition decided by the roll-up; the operator writes it as is."""

    type: str
    status: str
    reason: str
    message: str


def measured_condition(origin: RunProvenance) -> ConditionFact:
    """The ``Measured`` condition for a finished run (shown by ``kubectl get``)."""
    if origin.measured:
        return ConditionFact(
            type=MEASURED_CONDITION,
            status="True",
            reason=REASON_MEASURED,
            message="at least one required result was judged on hardware",
        )
    return ConditionFact(
        type=MEASURED_CONDITION,
        status="False",
        reason=REASON_NOTHING_MEASURED,
        message="no required result was measured (all Skipped, Error or none planned): "
        "the run certifies nothing",
    )
