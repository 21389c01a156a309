"""Threshold evaluation (C1-C3, C6): one metrics map + one unmeasurable set -> a verdict.

The cohort-relative gates (C7-C10), judged over a whole run, are in ``cohort``.

Every threshold is evaluated, in spec order, never stopping at the first failure,
so the structured ``violations`` list is complete; the human message names only
the first (frozen semantics old consumers parse). Comparisons are exact float64:
no epsilon, ever, because a tolerance around zero ECC errors is a tolerance for ECC
errors, and two evaluators with different epsilons would disagree.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass, field
from typing import Any, Final

from glimmer.contract.numbers import format_go_g, parse_go_float


class Comparison(enum.StrEnum):
    GREATER_THAN_OR_EQUAL = "GreaterThanOrEqual"
    LESS_THAN_OR_EQUAL = "LessThanOrEqual"
    EQUAL = "Equal"
    NOT_EQUAL = "NotEqual"


class Applicability(enum.StrEnum):
    REQUIRED = "Required"
    REQUIRED_IF_MEASURABLE = "RequiredIfMeasurable"


class Cause(enum.StrEnum):
    """Who acts on a violation: the hardware, nobody yet (unjudged), or the author."""

    MEASUREMENT = "Measurement"
    EVIDENCE = "Evidence"
    AUTHORING = "Authoring"


class ViolationKind(enum.StrEnum):
    CONTRADICTORY = "Contradictory"
    UNMEASURABLE_REQUIRED = "UnmeasurableRequired"
    NOT_REPORTED = "NotReported"
    NON_NUMERIC = "NonNumeric"
    NON_FINITE = "NonFinite"
    THRESHOLD_VALUE_NON_NUMERIC = "ThresholdValueNonNumeric"
    THRESHOLD_VALUE_NON_FINITE = "ThresholdValueNonFinite"
    UNSATISFIED = "Unsatisfied"
    #: C9: the absolute gate passed, the node is an outlier from its cohort's median.
    COHORT_OUTLIER = "CohortOutlier"


_CAUSE: Final[dict[str, Cause]] = {
    ViolationKind.UNSATISFIED: Cause.MEASUREMENT,
    ViolationKind.COHORT_OUTLIER: Cause.MEASUREMENT,
    ViolationKind.THRESHOLD_VALUE_NON_NUMERIC: Cause.AUTHORING,
    ViolationKind.THRESHOLD_VALUE_NON_FINITE: Cause.AUTHORING,
}

#: How a cause reads in the "and N more gates failed" note (C3).
CAUSE_WORDS: Final[dict[Cause, str]] = {
    Cause.MEASUREMENT: "hardware",
    Cause.EVIDENCE: "not measured",
    Cause.AUTHORING: "profile error",
}

NOT_EVALUATED_REASON: Final = "unmeasurable on this hardware"


def cause_of(kind: str) -> Cause:
    """The single kind -> cause mapping; unknown kinds are Evidence (unjudged)."""
    return _CAUSE.get(kind, Cause.EVIDENCE)


@dataclass(frozen=True, slots=True)
class Threshold:
    metric: str
    comparison: str
    value: str
    applicability: str = Applicability.REQUIRED
    #: The threshold's ``relativeTo`` wire JSON, as written (C7-C10; judged by
    #: :mod:`glimmer.verdict.cohort` over the run, never by :func:`evaluate`).
    relative_to: Mapping[str, Any] | None = field(default=None, hash=False)

    @property
    def required_if_measurable(self) -> bool:
        # Unset or unknown applicability is treated as Required.
        return self.applicability == Applicability.REQUIRED_IF_MEASURABLE


@dataclass(frozen=True, slots=True)
class Violation:
    """The status ``Violation`` shape."""

    index: int
    metric: str
    kind: ViolationKind
    cause: Cause
    reason: str


@dataclass(frozen=True, slots=True)
class NotEvaluated:
    metric: str
    reason: str = NOT_EVALUATED_REASON


@dataclass(frozen=True, slots=True)
class Evaluation:
    violations: tuple[Violation, ...]
    #: C2: every not-evaluated gate when passed; when failed, only those before the
    #: first violation (kept for compatibility).
    not_evaluated: tuple[NotEvaluated, ...]

    @property
    def passed(self) -> bool:
        return not self.violations


def compare(comparison: str, got: float, want: float) -> bool:
    """Exact float64 comparison; an unknown comparison is false (fails closed)."""
    if comparison == Comparison.GREATER_THAN_OR_EQUAL:
        return got >= want
    if comparison == Comparison.LESS_THAN_OR_EQUAL:
        return got <= want
    if comparison == Comparison.EQUAL:
        return got == want
    if comparison == Comparison.NOT_EQUAL:
        return got != want
    return False


def _check(
    threshold: Threshold, metrics: Mapping[str, str], unmeasurable: Set[str]
) -> tuple[ViolationKind, str] | NotEvaluated | None:
    """One threshold, C1's rows in order; first matching row wins."""
    name = threshold.metric
    if name in unmeasurable:
        if name in metrics:
            return ViolationKind.CONTRADICTORY, f"{name}: reported both a value and n/a"
        if threshold.required_if_measurable:
            return NotEvaluated(metric=name)
        return (
            ViolationKind.UNMEASURABLE_REQUIRED,
            f"{name}: the runner declared it unmeasurable (n/a) but the gate is Required",
        )
    raw = metrics.get(name)
    if raw is None:
        return ViolationKind.NOT_REPORTED, f"{name}: not reported by the runner"
    got = parse_go_float(raw)
    if got is None:
        return ViolationKind.NON_NUMERIC, f"{name}: reported {raw!r}, which is not a number"
    if not math.isfinite(got):
        return ViolationKind.NON_FINITE, f"{name}: reported {raw}, which is not finite"
    want = parse_go_float(threshold.value)
    if want is None:
        return (
            ViolationKind.THRESHOLD_VALUE_NON_NUMERIC,
            f"{name}: threshold value {threshold.value!r} is not a number",
        )
    if not math.isfinite(want):
        return (
            ViolationKind.THRESHOLD_VALUE_NON_FINITE,
            f"{name}: threshold value {threshold.value!r} is not finite",
        )
    if not compare(threshold.comparison, got, want):
        return (
            ViolationKind.UNSATISFIED,
            f"{name}: got {format_go_g(got)}, need {threshold.comparison} {format_go_g(want)}",
        )
    return None


def evaluate(
    thresholds: Sequence[Threshold], metrics: Mapping[str, str], unmeasurable: Set[str]
) -> Evaluation:
    """Evaluate every threshold in spec order (C1) and collect the outcome (C2)."""
    violations: list[Violation] = []
    not_evaluated: list[NotEvaluated] = []
    before_first: int | None = None
    for index, threshold in enumerate(thresholds):
        found = _check(threshold, metrics, unmeasurable)
        if found is None:
            continue
        if isinstance(found, NotEvaluated):
            not_evaluated.append(found)
            continue
        kind, reason = found
        if before_first is None:
            before_first = len(not_evaluated)
        violations.append(
            Violation(
                index=index, metric=threshold.metric, kind=kind, cause=cause_of(kind), reason=reason
            )
        )
    if before_first is not None:
        not_evaluated = not_evaluated[:before_first]
    return Evaluation(violations=tuple(violations), not_evaluated=tuple(not_evaluated))
