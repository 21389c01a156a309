"""Cohort-relative gates (C7-C10): a node judged against its identical neighbours.

A fixed gate (C1) asks "is this GPU as fast as the spec sheet says?"; a relative gate
asks "is it as fast as the GPUs it is identical to?". A part 12 % slower than its
neighbours clears a spec-sheet gate and is still a part to pull. The cohort is the
run's nodes of one fingerprint digest (K4: same product, count, memory, driver, OS,
kernel), and its centre and spread are the median and the median absolute deviation,
because a mean and a standard deviation are dragged by the very outlier they should
expose.

The rules, each decided here and nowhere else:

- **Bad side only (C7).** ``GreaterThanOrEqual`` (higher is better) fails a low
  outlier, ``LessThanOrEqual`` a high one; a node better than its cohort is never
  failed for it. ``Equal``/``NotEqual`` have no bad side, so they are refused.
- **Allowed deviation (C8).** ``robustSigma: k`` allows ``k * 1.4826 * MAD`` (1.4826
  makes the MAD a standard deviation for normal data); ``percent: p`` allows ``p %``
  of ``|median|``. ``floorPercent`` raises either to at least that share of
  ``|median|``. With ``MAD == 0`` (at least half the cohort reads exactly the median)
  the sigma band is zero wide: nothing is divided, a node exactly at the median is
  within, a node any worse is an outlier unless the floor allows it. So an identical
  cohort never fails, a real outlier never passes through a division by zero, and
  the author who wants slack for a quantised metric says how much with the floor.
- **Only ever stricter (C9).** The relative gate runs after the absolute one and can
  only turn a Passed result into Failed; nothing here makes a Failed, Error or open
  result anything else.
- **Never by itself (C10).** Below ``minCohortSize`` counted members, or for a node
  with no fingerprint digest, the gate is not evaluated and says so; it passes
  nothing. Values that are missing, not numbers or not finite, and results that did
  not settle Passed or Failed, do not count: the size says how many did.

Pure: standard library and ``glimmer.contract`` only, so ``glimmer merge`` judges a
bare-host cohort with the same function the operator uses.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Final

from glimmer.contract.numbers import format_go_g, parse_go_float
from glimmer.verdict.phases import Phase
from glimmer.verdict.rollup import TestResultState
from glimmer.verdict.thresholds import (
    Cause,
    Comparison,
    NotEvaluated,
    Violation,
    ViolationKind,
)

#: The only cohort a gate can be relative to today: the fingerprint digest's.
COHORT_FINGERPRINT: Final = "fingerprint"
#: The MAD of a normal distribution times this is its standard deviation.
MAD_TO_SIGMA: Final = 1.4826
DEFAULT_MIN_COHORT_SIZE: Final = 3
#: The smallest minCohortSize accepted: a median of two is their mean, and a MAD of
#: two is half their gap, so each member alone would decide the other's band.
SMALLEST_MIN_COHORT_SIZE: Final = 3
#: The comparisons that have a bad side.
SIDED: Final = (Comparison.GREATER_THAN_OR_EQUAL, Comparison.LESS_THAN_OR_EQUAL)
#: Phases whose metrics are a measurement a cohort can be built from.
_MEASURED: Final = (Phase.PASSED, Phase.FAILED)


class DeviationForm(enum.StrEnum):
    ROBUST_SIGMA = "robustSigma"
    PERCENT = "percent"


class Outcome(enum.StrEnum):
    WITHIN = "Within"
    OUTLIER = "Outlier"
    NOT_EVALUATED = "NotEvaluated"


class CohortSpecError(ValueError):
    """A ``relativeTo`` that cannot be judged (the linter's Malformed, C5)."""


@dataclass(frozen=True, slots=True)
class RelativeGate:
    """One threshold's ``relativeTo``, with the threshold's metric and comparison."""

    metric: str
    comparison: str
    form: DeviationForm
    #: The allowed deviation as written: k for robustSigma, p for percent.
    amount: float
    floor_percent: float = 0.0
    min_cohort_size: int = DEFAULT_MIN_COHORT_SIZE
    cohort: str = COHORT_FINGERPRINT

    def describe(self) -> str:
        amount = format_go_g(self.amount)
        allowed = (
            f"{amount} robust sigma"
            if self.form is DeviationForm.ROBUST_SIGMA
            else (f"{amount}% of the median")
        )
        floor = (
            f" (at least {format_go_g(self.floor_percent)}% of the median)"
            if (self.floor_percent > 0)
            else ""
        )
        return f"{allowed}{floor}"


@dataclass(frozen=True, slots=True)
class CohortStats:
    """A cohort's centre and band, over the members whose value counted."""

    size: int
    median: float
    mad: float
    #: The allowed deviation on the bad side, in the metric's own units (>= 0).
    allowed: float

    @property
    def sigma(self) -> float:
        return MAD_TO_SIGMA * self.mad


@dataclass(frozen=True, slots=True)
class MemberJudgement:
    node: str
    outcome: Outcome
    reason: str
    #: The member's value, when it counted.
    value: float | None = None
    #: How far worse than the median, in the metric's units (negative: better).
    deviation: float | None = None


@dataclass(frozen=True, slots=True)
class CohortJudgement:
    """One gate over one cohort: its statistics (None when not evaluated) and each
    member's outcome, in node-name order."""

    gate: RelativeGate
    #: The cohort's fingerprint digest; "" for the nodes that have none.
    fingerprint: str
    #: Members offered whose value did not count (missing, not finite, unsettled).
    excluded: int
    stats: CohortStats | None
    members: tuple[MemberJudgement, ...]
    #: Why the cohort was not evaluated ("" when it was).
    reason: str = ""

    @property
    def outliers(self) -> tuple[str, ...]:
        return tuple(m.node for m in self.members if m.outcome is Outcome.OUTLIER)


def _decimal(raw: Any, *, what: str, minimum: float = 0.0) -> float:
    value = parse_go_float(raw) if isinstance(raw, str) else None
    if value is None or not math.isfinite(value):
        raise CohortSpecError(f'{what} {raw!r} is not a finite decimal: write e.g. "4"')
    if value < minimum:
        raise CohortSpecError(f"{what} {raw} is below {format_go_g(minimum)}")
    return value


def relative_gate(*, metric: str, comparison: str, relative_to: Mapping[str, Any]) -> RelativeGate:
    """The gate a threshold's ``relativeTo`` wire JSON describes, or
    :class:`CohortSpecError` saying which field is wrong and how to fix it."""
    cohort = relative_to.get("cohort", COHORT_FINGERPRINT)
    if cohort != COHORT_FINGERPRINT:
        raise CohortSpecError(
            f'relativeTo.cohort {cohort!r} is not known: the only cohort is "fingerprint"'
        )
    if comparison not in SIDED:
        raise CohortSpecError(
            f"relativeTo on a {comparison} gate has no bad side: use GreaterThanOrEqual "
            "(a low outlier fails) or LessThanOrEqual (a high outlier fails)"
        )
    deviation = relative_to.get("maxDeviation")
    if not isinstance(deviation, Mapping):
        raise CohortSpecError("relativeTo.maxDeviation is required: set robustSigma or percent")
    forms = [f for f in DeviationForm if f.value in deviation]
    if len(forms) != 1:
        raise CohortSpecError(
            "relativeTo.maxDeviation needs exactly one of robustSigma and percent"
        )
    form = forms[0]
    amount = _decimal(deviation[form.value], what=f"relativeTo.maxDeviation.{form.value}")
    floor = 0.0
    if "floorPercent" in deviation:
        floor = _decimal(deviation["floorPercent"], what="relativeTo.maxDeviation.floorPercent")
    size = relative_to.get("minCohortSize", DEFAULT_MIN_COHORT_SIZE)
    if not isinstance(size, int) or isinstance(size, bool) or size < SMALLEST_MIN_COHORT_SIZE:
        raise CohortSpecError(
            f"relativeTo.minCohortSize {size!r} must be an integer of at least "
            f"{SMALLEST_MIN_COHORT_SIZE}"
        )
    return RelativeGate(
        metric=metric,
        comparison=comparison,
        form=form,
        amount=amount,
        floor_percent=floor,
        min_cohort_size=size,
    )


def _median(values: list[float]) -> float:
    """The median of a non-empty list; order-independent (it sorts)."""
    ordered = sorted(values)
    mid = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[mid]
    return ordered[mid - 1] / 2 + ordered[mid] / 2  # no overflow for huge values


def cohort_stats(gate: RelativeGate, values: Iterable[float]) -> CohortStats:
    """Median, MAD and the allowed deviation of finite ``values`` (at least one)."""
    counted = [v for v in values if math.isfinite(v)]
    if not counted:
        raise ValueError("a cohort needs at least one finite value")
    median = _median(counted)
    mad = _median([abs(v - median) for v in counted])
    floor = gate.floor_percent / 100 * abs(median)
    if gate.form is DeviationForm.ROBUST_SIGMA:
        allowed = gate.amount * MAD_TO_SIGMA * mad
    else:
        allowed = gate.amount / 100 * abs(median)
    allowed = max(allowed, floor)
    if not math.isfinite(allowed):
        # An overflow of a huge spread: no band can be stated, so nobody is Within.
        allowed = 0.0
    return CohortStats(size=len(counted), median=median, mad=mad, allowed=allowed)


def bad_side_deviation(comparison: str, value: float, median: float) -> float:
    """How much worse than the median ``value`` is (C7): positive is worse."""
    if comparison == Comparison.GREATER_THAN_OR_EQUAL:
        return median - value
    return value - median


def member_value(state: TestResultState | None, metric: str) -> float | None:
    """The value a settled, measured result contributes to its cohort (C10), else None."""
    if state is None or state.phase not in _MEASURED:
        return None
    raw = state.metrics.get(metric)
    value = parse_go_float(raw) if raw is not None else None
    if value is None or not math.isfinite(value):
        return None
    return value


def explain(gate: RelativeGate, stats: CohortStats, *, value: float, deviation: float) -> str:
    """The violation reason: cohort size, median, MAD, this node's deviation."""
    low = (gate.comparison == Comparison.GREATER_THAN_OR_EQUAL) == (deviation >= 0)
    side = "below" if low else "above"
    share_of = abs(deviation) / abs(stats.median) * 100 if stats.median != 0 else math.nan
    share = f" ({share_of:.3g}%)" if math.isfinite(share_of) else ""
    ratio = abs(deviation) / stats.sigma if stats.mad > 0 else math.nan
    # Overflowing spreads (inf / inf) say no ratio rather than a NaN.
    sigmas = f", {ratio:.3g} robust sigma" if math.isfinite(ratio) else ""
    return (
        f"{gate.metric}: got {format_go_g(value)}, {format_go_g(abs(deviation))}{share}"
        f"{sigmas} {side} the median {format_go_g(stats.median)} of its cohort of "
        f"{stats.size} (MAD {format_go_g(stats.mad)}); allowed {format_go_g(stats.allowed)} "
        f"on the bad side ({gate.describe()})"
    )


def judge_cohort(
    gate: RelativeGate, members: Mapping[str, float | None], *, fingerprint: str
) -> CohortJudgement:
    """One cohort's members (node -> its counted value, None when it has none) judged.

    Order-independent: the statistics are over the multiset of values and the members
    come back in node-name order.
    """
    counted = {node: v for node, v in members.items() if v is not None and math.isfinite(v)}
    excluded = len(members) - len(counted)
    nodes = sorted(members)
    if len(counted) < gate.min_cohort_size:
        reason = (
            f"{gate.metric}: cohort of {len(counted)} measured node(s) (of {len(members)} "
            f"with this fingerprint) is below minCohortSize {gate.min_cohort_size}: the "
            "relative gate was not evaluated"
        )
        judged = tuple(
            MemberJudgement(
                node=n, outcome=Outcome.NOT_EVALUATED, reason=reason, value=counted.get(n)
            )
            for n in nodes
        )
        return CohortJudgement(
            gate=gate,
            fingerprint=fingerprint,
            excluded=excluded,
            stats=None,
            members=judged,
            reason=reason,
        )
    stats = cohort_stats(gate, counted.values())
    out: list[MemberJudgement] = []
    for node in nodes:
        value = counted.get(node)
        if value is None:
            out.append(
                MemberJudgement(
                    node=node,
                    outcome=Outcome.NOT_EVALUATED,
                    reason=f"{gate.metric}: no settled, finite value to compare with its cohort",
                )
            )
            continue
        deviation = bad_side_deviation(gate.comparison, value, stats.median)
        # Exact float64, as every gate (C6); NaN cannot reach here (finite inputs), and
        # an infinite deviation is worse than any band.
        outlier = not deviation <= stats.allowed
        reason = explain(gate, stats, value=value, deviation=deviation)
        out.append(
            MemberJudgement(
                node=node,
                outcome=Outcome.OUTLIER if outlier else Outcome.WITHIN,
                reason=reason,
                value=value,
                deviation=deviation,
            )
        )
    return CohortJudgement(
        gate=gate, fingerprint=fingerprint, excluded=excluded, stats=stats, members=tuple(out)
    )


NO_FINGERPRINT_REASON: Final = (
    "no fingerprint digest for this node: its cohort is unknown, the relative gate was "
    "not evaluated"
)


def judge_run(
    gate: RelativeGate,
    values: Mapping[str, float | None],
    digests: Mapping[str, str | None],
) -> tuple[CohortJudgement, ...]:
    """Every cohort of the run for one gate: nodes grouped by fingerprint digest (C10:
    a node with none is judged by nobody). Cohorts in digest order, the digest-less
    last."""
    by_digest: dict[str, dict[str, float | None]] = {}
    orphans: list[str] = []
    for node, value in values.items():
        digest = digests.get(node)
        if not digest:
            orphans.append(node)
            continue
        by_digest.setdefault(digest, {})[node] = value
    judged = [
        judge_cohort(gate, members, fingerprint=d) for d, members in sorted(by_digest.items())
    ]
    if orphans:
        members = tuple(
            MemberJudgement(
                node=n,
                outcome=Outcome.NOT_EVALUATED,
                reason=f"{gate.metric}: {NO_FINGERPRINT_REASON}",
                value=values[n],
            )
            for n in sorted(orphans)
        )
        judged.append(
            CohortJudgement(
                gate=gate,
                fingerprint="",
                excluded=len(orphans),
                stats=None,
                members=members,
                reason=NO_FINGERPRINT_REASON,
            )
        )
    return tuple(judged)


def apply_judgement(
    state: TestResultState, member: MemberJudgement, *, gate: RelativeGate, index: int
) -> TestResultState:
    """``state`` after its cohort's judgement (C9): a Passed result whose member is an
    outlier becomes Failed with a ``CohortOutlier`` violation that explains itself (and
    its message names it, D4); a not-evaluated gate is recorded as not evaluated on a
    Passed result. Nothing else changes: never a Fail, Error or open result."""
    if state.phase is not Phase.PASSED:
        return state
    if member.outcome is Outcome.OUTLIER:
        violation = Violation(
            index=index,
            metric=gate.metric,
            kind=ViolationKind.COHORT_OUTLIER,
            cause=Cause.MEASUREMENT,
            reason=member.reason,
        )
        return replace(
            state,
            phase=Phase.FAILED,
            message=member.reason,
            violations=(*state.violations, violation),
            suspect=False,
        )
    if member.outcome is Outcome.NOT_EVALUATED:
        item = NotEvaluated(metric=gate.metric, reason=member.reason)
        if item in state.not_evaluated:
            return state
        return replace(state, not_evaluated=(*state.not_evaluated, item))
    return state


def judge_states(
    gate: RelativeGate,
    *,
    index: int,
    states: Mapping[str, TestResultState | None],
    digests: Mapping[str, str | None],
) -> tuple[tuple[CohortJudgement, ...], dict[str, TestResultState]]:
    """One gate over a run's settled results, node -> its state (None: a member whose
    evidence cannot be read here, offered without a value): every cohort's judgement,
    and each result the judgement changed. The one function both dispatchers call."""
    values = {node: member_value(state, gate.metric) for node, state in states.items()}
    judgements = judge_run(gate, values, digests)
    changed: dict[str, TestResultState] = {}
    for judgement in judgements:
        for member in judgement.members:
            state = states.get(member.node)
            if state is None:
                continue
            after = apply_judgement(state, member, gate=gate, index=index)
            if after != state:
                changed[member.node] = after
    return judgements, changed


#: How many outliers one record names (the rest are counted; each outlier's own result
#: carries its full explanation).
NAMED_OUTLIERS: Final = 50


def verdict_record(judgement: CohortJudgement, *, test: str, index: int, at: str) -> dict[str, Any]:
    """One ``cohortVerdicts`` entry (the run status's and ``glimmer merge --cohort``'s):
    the cohort's numbers as decimals (never a float on the wire), its outliers and,
    when not evaluated, why."""
    gate = judgement.gate
    record: dict[str, Any] = {
        "test": test,
        "thresholdIndex": index,
        "metric": gate.metric,
        "comparison": gate.comparison,
        "fingerprint": judgement.fingerprint,
        "members": len(judgement.members),
        "excluded": judgement.excluded,
        "judgedAt": at,
    }
    stats = judgement.stats
    if stats is None:
        record["evaluated"] = False
        record["reason"] = judgement.reason
        return record
    outliers = judgement.outliers
    record.update(
        evaluated=True,
        size=stats.size,
        median=format_go_g(stats.median),
        mad=format_go_g(stats.mad),
        allowedDeviation=format_go_g(stats.allowed),
        outliers=list(outliers[:NAMED_OUTLIERS]),
    )
    if len(outliers) > NAMED_OUTLIERS:
        record["outliersNotNamed"] = len(outliers) - NAMED_OUTLIERS
    return record
