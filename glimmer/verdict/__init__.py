"""Verdicts: thresholds, the linter, attempt phases, result and run roll-up.

Pure: standard library and ``glimmer.contract`` only, so the operator and
``glimmer run`` reach the same verdict from the same evidence.
"""

from glimmer.verdict.attempt import AttemptVerdict, judge_attempt
from glimmer.verdict.lint import LintFinding, Severity, lint_thresholds, malformed, unsound
from glimmer.verdict.phases import Phase, Provenance, resolve_provenance
from glimmer.verdict.rollup import (
    AttemptRecord,
    Counters,
    ResultClosedError,
    RunProvenance,
    TestResultState,
    Trigger,
    count,
    fail_fast_stops,
    force_settle,
    record_attempt,
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
    "Applicability",
    "AttemptRecord",
    "AttemptVerdict",
    "Cause",
    "Comparison",
    "Counters",
    "Evaluation",
    "LintFinding",
    "NotEvaluated",
    "Phase",
    "Provenance",
    "ResultClosedError",
    "RunProvenance",
    "Severity",
    "Termination",
    "TestResultState",
    "Threshold",
    "Trigger",
    "Violation",
    "ViolationKind",
    "apply_termination",
    "count",
    "evaluate",
    "fail_fast_stops",
    "force_settle",
    "judge_attempt",
    "kubelet_account",
    "lint_thresholds",
    "malformed",
    "record_attempt",
    "resolve_provenance",
    "run_phase",
    "run_provenance",
    "unsound",
]
