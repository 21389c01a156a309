"""Verdicts: thresholds, the linter, attempt phases, result and run roll-up.

Pure: standard library and ``glimmer.contract`` only, so the operator and
``glimmer run`` reach the same verdict from the same evidence.
"""

from glimmer.verdict.attempt import AttemptVerdict, judge_attempt
from glimmer.verdict.group import Elected, Election, GroupOutcome, elect, group_outcome
from glimmer.verdict.links import SideReport, combine_group, combine_pair
from glimmer.verdict.lint import LintFinding, Severity, lint_thresholds, malformed, unsound
from glimmer.verdict.phases import Phase, Provenance, resolve_provenance, weakest
from glimmer.verdict.rollup import (
    MEASURED_CONDITION,
    REASON_MEASURED,
    REASON_NOTHING_MEASURED,
    AttemptRecord,
    ConditionFact,
    Counters,
    ResultClosedError,
    RunProvenance,
    TestResultState,
    Trigger,
    attempt_record,
    count,
    fail_fast_stops,
    force_settle,
    measured_condition,
    record_attempt,
    result_provenance,
    run_phase,
    run_provenance,
)
from glimmer.verdict.termination import Termination, apply_termination, kubelet_account
from glimmer.verdict.thresholds import (
    Applicability,
    Cause,
    Comparison,
    Evaluation,
    NotEvaluated,
    Threshold,
    Violation,
    ViolationKind,
    evaluate,
)

__all__ = [
    "MEASURED_CONDITION",
    "REASON_MEASURED",
    "REASON_NOTHING_MEASURED",
    "Applicability",
    "AttemptRecord",
    "AttemptVerdict",
    "Cause",
    "Comparison",
    "ConditionFact",
    "Counters",
    "Elected",
    "Election",
    "Evaluation",
    "GroupOutcome",
    "LintFinding",
    "NotEvaluated",
    "Phase",
    "Provenance",
    "ResultClosedError",
    "RunProvenance",
    "Severity",
    "SideReport",
    "Termination",
    "TestResultState",
    "Threshold",
    "Trigger",
    "Violation",
    "ViolationKind",
    "apply_termination",
    "attempt_record",
    "combine_group",
    "combine_pair",
    "count",
    "elect",
    "evaluate",
    "fail_fast_stops",
    "force_settle",
    "group_outcome",
    "judge_attempt",
    "kubelet_account",
    "lint_thresholds",
    "malformed",
    "measured_condition",
    "record_attempt",
    "resolve_provenance",
    "result_provenance",
    "run_phase",
    "run_provenance",
    "unsound",
    "weakest",
]
