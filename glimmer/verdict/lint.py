"""The threshold linter (C4): catch gates that cannot mean what the author intends.

``Malformed`` gates cannot be evaluated at all and refuse a run at start (C5);
``Unsound`` gates can be evaluated but would fail healthy hardware or certify
nothing, so they raise a condition and the run proceeds. Never promote one to the
other: a refusal for advice would block acceptance, advice for a refusal would
report every node as a hardware failure.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from glimmer.contract.kinds import is_builtin
from glimmer.contract.names import grammar_ok, unit_of
from glimmer.contract.numbers import parse_go_float
from glimmer.contract.registry import REGISTRY, SPREAD_METRICS, ThresholdUse
from glimmer.verdict.cohort import CohortSpecError, relative_gate
from glimmer.verdict.thresholds import Comparison, Threshold


class Severity(enum.StrEnum):
    MALFORMED = "Malformed"
    UNSOUND = "Unsound"


@dataclass(frozen=True, slots=True)
class LintFinding:
    index: int
    metric: str
    severity: Severity
    reason: str


_EXACT = (Comparison.EQUAL, Comparison.NOT_EQUAL)


#: The scope a cohort-relative gate needs (a Pair or Group result has no one node).
_COHORT_SCOPE = "Node"


def _relative_findings(t: Threshold, *, scope: str | None) -> list[str]:
    """C7/C8: a ``relativeTo`` that cannot be judged, each reason naming field and fix."""
    if t.relative_to is None:
        return []
    if not isinstance(t.relative_to, Mapping):
        return ["relativeTo must be an object: {cohort, maxDeviation, minCohortSize}"]
    reasons = []
    if scope is not None and scope != _COHORT_SCOPE:
        reasons.append(
            f"relativeTo needs scope Node (this test is {scope}): a cohort is judged node "
            "by node, so remove relativeTo"
        )
    try:
        relative_gate(metric=t.metric, comparison=t.comparison, relative_to=t.relative_to)
    except CohortSpecError as err:
        reasons.append(str(err))
    return reasons


def _findings_for(
    kind: str, index: int, t: Threshold, *, scope: str | None = None
) -> list[LintFinding]:
    found: list[LintFinding] = []

    def add(severity: Severity, reason: str) -> None:
        found.append(LintFinding(index=index, metric=t.metric, severity=severity, reason=reason))

    name_ok = grammar_ok(t.metric)
    if not name_ok:
        add(
            Severity.MALFORMED,
            f"metric {t.metric!r} is not a valid name: start with a-z, then ASCII letters and "
            "digits only (lowerCamelCase, e.g. gpuTempC)",
        )
    value = parse_go_float(t.value)
    if value is None:
        add(Severity.MALFORMED, f"value {t.value!r} is not a number: write a decimal like 90")
    elif not math.isfinite(value):
        add(Severity.MALFORMED, f"value {t.value!r} is not finite: write a finite decimal")
    if t.comparison not in tuple(Comparison):
        add(
            Severity.MALFORMED,
            f"comparison {t.comparison!r} is not one of GreaterThanOrEqual, LessThanOrEqual, "
            "Equal, NotEqual",
        )
    elif t.comparison in _EXACT:
        unit = unit_of(t.metric)
        if unit:
            add(
                Severity.UNSOUND,
                f"{t.comparison} on {t.metric} (unit {unit}) asks a measurement to reproduce a "
                "decimal exactly and fails healthy hardware: use GreaterThanOrEqual and/or "
                "LessThanOrEqual",
            )
        elif value is not None and math.isfinite(value) and not value.is_integer():
            add(
                Severity.UNSOUND,
                f"{t.comparison} {t.value} on {t.metric} compares exactly with a non-integer: "
                "exact comparisons are for counters; use a GreaterThanOrEqual/LessThanOrEqual band",
            )
    for reason in _relative_findings(t, scope=scope):
        add(Severity.MALFORMED, reason)
    spec = REGISTRY.get(t.metric)
    if spec is None:
        if name_ok and is_builtin(kind):
            add(
                Severity.UNSOUND,
                f"{t.metric} is not a registered metric of the built-in kind {kind}: the runner "
                "never prints it, so the gate can only fail (check the name)",
            )
        return found
    if t.metric in SPREAD_METRICS and not t.required_if_measurable:
        add(
            Severity.UNSOUND,
            f"{t.metric} is n/a on single-device, MIG and heterogeneous boards: set "
            "applicability RequiredIfMeasurable, or every such healthy node fails",
        )
    if spec.use is ThresholdUse.EVIDENCE:
        add(
            Severity.UNSOUND,
            f"{t.metric} is evidence ({spec.description}), not an acceptance measurement: "
            "gate an acceptance metric instead",
        )
    return found


def lint_thresholds(
    kind: str, thresholds: Sequence[Threshold], *, scope: str | None = None
) -> list[LintFinding]:
    """Every finding, in threshold order and, within one threshold, in the order
    grammar, value, comparison/exact-compare, relativeTo, unregistered, spread,
    evidence. ``scope``: the test's (None: unknown, so relativeTo's scope is not
    checked here; the CRD's CEL checks it at apply time)."""
    findings: list[LintFinding] = []
    for index, threshold in enumerate(thresholds):
        findings.extend(_findings_for(kind, index, threshold, scope=scope))
    return findings


def malformed(findings: Sequence[LintFinding]) -> list[LintFinding]:
    return [f for f in findings if f.severity is Severity.MALFORMED]


def unsound(findings: Sequence[LintFinding]) -> list[LintFinding]:
    return [f for f in findings if f.severity is Severity.UNSOUND]
