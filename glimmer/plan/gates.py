"""Threshold review over a whole plan (rule C5): Malformed refuses the run, Unsound advises.

The threshold linter itself lives in :mod:`glimmer.verdict` (one place decides what a
gate means); this module only runs it over every planned test, after variant
expansion (a cell's replaced thresholds are what will gate it), and words the
outcome. The two severities are never traded: a Malformed gate would fail every node
forever *as a hardware verdict*, so it refuses the run; an Unsound one only sets the
``ThresholdsSound`` condition.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from glimmer.plan import spec as specs
from glimmer.plan.pinned import PinnedPlan, PlannedTest
from glimmer.verdict import Threshold, lint_thresholds

MALFORMED: Final = "Malformed"
UNSOUND: Final = "Unsound"
#: How many offenders a refusal or condition message names before "and N more" (C5).
NAMED_LIMIT: Final = 5
_REQUIRED: Final = "Required"
_TEXT_FIELDS: Final = ("metric", "comparison", "value")


@dataclass(frozen=True)
class GateFinding:
    """One linter finding on one planned test's threshold."""

    test: str
    severity: str
    metric: str
    reason: str
    #: The threshold's position in the test's list (None: the list itself is unreadable).
    index: int | None = None

    def describe(self) -> str:
        return f"{self.test}: {self.reason}"


def threshold_from_wire(entry: Mapping[str, Any]) -> Threshold:
    """A verdict ``Threshold`` from its wire JSON; unset applicability reads ``Required``."""
    applicability = entry.get("applicability")
    if not isinstance(applicability, str) or not applicability:
        applicability = _REQUIRED
    return Threshold(
        metric=_text(entry, "metric"),
        comparison=_text(entry, "comparison"),
        value=_text(entry, "value"),
        applicability=applicability,
        relative_to=entry.get("relativeTo"),
    )


def planned_thresholds(plan: PinnedPlan) -> Iterator[tuple[PlannedTest, Threshold]]:
    """Every threshold of the pinned plan with its test, in plan order (what a report
    draws as the plan's gates, not only those a violation names)."""
    for test in plan.tests:
        for entry in test.spec.get("thresholds") or []:
            if isinstance(entry, Mapping):
                yield test, threshold_from_wire(entry)


def cohort_gated_tests(plan: PinnedPlan) -> frozenset[str]:
    """The planned tests with a threshold that has ``relativeTo`` (C7): the run-level
    judgement reads each of their results' metrics, so their evidence must stay in the
    status until it has (C10)."""
    return frozenset(
        test.name for test, threshold in planned_thresholds(plan) if threshold.relative_to
    )


def _text(entry: Mapping[str, Any], key: str) -> str:
    value = entry.get(key)
    return value if isinstance(value, str) else ""


def lint_test(test: PlannedTest) -> list[GateFinding]:
    """Every finding on ``test``'s thresholds, in threshold order.

    Unreadable thresholds (wrong JSON types) are findings too, Malformed, so a plan
    read back from an annotation can be reviewed without raising.
    """
    try:
        entries = specs.thresholds(test.spec)
    except specs.SpecError as err:
        return [_malformed(test, metric="", reason=str(err))]
    findings: list[GateFinding] = []
    for index, entry in enumerate(entries):
        findings += [
            _malformed(
                test,
                metric=_text(entry, "metric"),
                reason=f"threshold {key} must be a string, got {entry[key]!r}",
                index=index,
            )
            for key in _TEXT_FIELDS
            if key in entry and not isinstance(entry[key], str)
        ]
        findings += [
            GateFinding(
                test=test.name,
                severity=str(f.severity),
                metric=f.metric,
                reason=f.reason,
                index=index,
            )
            for f in lint_thresholds(test.kind, [threshold_from_wire(entry)], scope=test.scope)
        ]
    return findings


def _malformed(
    test: PlannedTest, *, metric: str, reason: str, index: int | None = None
) -> GateFinding:
    return GateFinding(
        test=test.name, severity=MALFORMED, metric=metric, reason=reason, index=index
    )


def lint_tests(tests: Iterable[PlannedTest]) -> list[GateFinding]:
    """C4 over planned tests, after variant expansion: the one review ``glimmer lint``,
    ``glimmer run`` and the operator's plan builder share."""
    return [finding for test in tests for finding in lint_test(test)]


def unsound_findings(plan: PinnedPlan) -> list[GateFinding]:
    """The advisory findings behind ``ThresholdsSound=False/UnsoundThresholds``."""
    return [f for f in lint_tests(plan.tests) if f.severity == UNSOUND]


def name_some(items: Sequence[str], *, limit: int = NAMED_LIMIT, sep: str = "; ") -> str:
    """The first ``limit`` items joined, then ``and N more`` for the rest."""
    named = sep.join(items[:limit])
    rest = len(items) - limit
    return f"{named}{sep}and {rest} more" if rest > 0 else named


def describe_findings(findings: Sequence[GateFinding], *, limit: int = NAMED_LIMIT) -> str:
    """Findings for a refusal or condition message: at most ``limit`` named."""
    return name_some([f.describe() for f in findings], limit=limit)
