"""Hypothesis properties of the link core (F3, F6, F7, F8), each against an independent
reading of the rule, and each through ``judge_attempt`` where the phase matters.

(a) the election never yields a value no rank reported (Collective: the lowest
    reporting rank's; unclassified: the unanimous reading), and a numeric fold equals
    the fold of the reported values, re-rendered;
(b) any ``n/a`` among the voting ranks makes the key unmeasurable and absent from the
    metrics; the two maps stay disjoint; nothing appears that no rank mentioned;
(c) the Group outcome does not depend on rank order, and the exit code is the lowest
    deciding rank's (F6's reference implementation below);
(d) Skip and Pass are never concluded from a subset of ranks;
(e) the rank summary is clamped for any N and any line length, the ranks-differed notes
    stay bounded after it;
(f) combining then judging never yields Passed when any side Errored or Failed, nor
    for a Pair whose server ended before the client existed.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from functools import reduce

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from glimmer.contract import Combination, Outcome, RunnerReport, format_go_plain, parse_go_float
from glimmer.contract.registry import combination_of
from glimmer.verdict import (
    Phase,
    SideReport,
    Threshold,
    combine_group,
    combine_pair,
    group_outcome,
    judge_attempt,
)
from glimmer.verdict.dissent import MAX_SUMMARY_BYTES, SUMMARY_SUFFIX, rank_summary
from tests.unit.verdict.links_builders import ranks, report

PROPS = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
HEAVY = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])

KEYS = [
    "busBandwidthGBs",  # Collective
    "miscompares",  # Sum
    "latencyUs",  # Max
    "bandwidthGbps",  # Min
    "peakBandwidthGbps",  # registered, unclassified
    "customThing",  # unregistered
]
NA = "n/a"
READINGS = st.one_of(
    st.just(NA),
    st.integers(-3, 50).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["5.0", "5", "1e3", "abc", "NaN", "Inf", "-0", "0x1p3", "2.50", ""]),
)
LEVELS = st.sampled_from(["Pass", "Fail", "Skip", "Error"])
PROVENANCE = st.sampled_from([None, "sim", "unknown", "silicon"])


@st.composite
def rank_reports(draw: st.DrawFn) -> RunnerReport:
    readings = draw(st.dictionaries(st.sampled_from(KEYS), READINGS, max_size=len(KEYS)))
    return report(
        draw(LEVELS),
        metrics={k: v for k, v in readings.items() if v != NA},
        na={k for k, v in readings.items() if v == NA},
        message=draw(st.sampled_from(["", "OK", "X_FAIL: low", "boom"])),
        provenance=draw(PROVENANCE),
        unreadable=draw(st.sampled_from([0, 0, 0, 1])),
    )


MAYBE_REPORT = st.one_of(st.none(), rank_reports())
GROUPS = st.lists(MAYBE_REPORT, min_size=0, max_size=7)
THRESHOLDS = st.lists(
    st.builds(
        Threshold,
        metric=st.sampled_from(KEYS),
        comparison=st.sampled_from(["GreaterThanOrEqual", "LessThanOrEqual"]),
        value=st.sampled_from(["0", "5", "100"]),
        applicability=st.sampled_from(["Required", "RequiredIfMeasurable"]),
    ),
    max_size=3,
)


def _reporting(group: Sequence[RunnerReport | None]) -> list[RunnerReport]:
    return [r for r in group if r is not None]


def _reference_fold(combination: Combination, values: list[float]) -> float:
    if any(math.isnan(v) for v in values):
        return math.nan
    if combination is Combination.SUM:
        return reduce(lambda a, b: a + b, values)
    best = max(values) if combination is Combination.MAX else min(values)
    if best == 0:  # +0 is the larger zero, -0 the smaller
        zeros = [math.copysign(1.0, v) for v in values if v == 0]
        sign = max(zeros) if combination is Combination.MAX else min(zeros)
        return math.copysign(0.0, sign)
    return best


@PROPS
@given(GROUPS)
def test_F7_property_election_never_invents_a_value_and_folds_equal_the_reported_fold(
    group: list[RunnerReport | None],
) -> None:
    combined = combine_group(ranks(*group))
    for key, value in combined.metrics.items():
        readings = [r.metrics[key] for r in _reporting(group) if key in r.metrics]
        assert readings, f"{key} kept though no rank reported a value"
        combination = combination_of(key)
        if combination is Combination.COLLECTIVE:
            assert value == readings[0]
        elif combination is Combination.UNCLASSIFIED:
            assert set(readings) == {value}
        else:
            parsed = [parse_go_float(x) for x in readings]
            assert None not in parsed
            numbers = [x for x in parsed if x is not None]
            assert value == format_go_plain(_reference_fold(combination, numbers))


@PROPS
@given(GROUPS)
def test_F7_property_any_na_among_voting_ranks_makes_the_key_unmeasurable(
    group: list[RunnerReport | None],
) -> None:
    combined = combine_group(ranks(*group))
    declared_na = {k for r in _reporting(group) for k in r.unmeasurable}
    mentioned = {k for r in _reporting(group) for k in (*r.metrics, *r.unmeasurable)}
    assert declared_na <= combined.unmeasurable
    assert not declared_na & combined.metrics.keys()
    assert not combined.unmeasurable & combined.metrics.keys()
    assert combined.unmeasurable | combined.metrics.keys() == mentioned


def _reference_group(group: Sequence[RunnerReport | None]) -> tuple[Outcome, int]:
    """F6 read literally."""
    if all(r is None for r in group):
        return Outcome.ERROR, -1
    for level in (Outcome.ERROR, Outcome.FAIL):
        hits = [r for r in group if r is not None and r.outcome is level]
        if hits:
            return level, hits[0].exit_code
    if any(r is None for r in group):
        return Outcome.ERROR, group[0].exit_code if group[0] is not None else -1
    skips = [r for r in group if r is not None and r.outcome is Outcome.SKIP]
    if skips:
        return Outcome.SKIP, skips[0].exit_code
    first = group[0]
    assert first is not None
    return Outcome.PASS, first.exit_code


@PROPS
@given(GROUPS, st.randoms(use_true_random=False))
def test_F6_property_outcome_is_order_invariant_and_exit_code_is_the_lowest_deciding_rank(
    group: list[RunnerReport | None], rnd: random.Random
) -> None:
    combined = combine_group(ranks(*group))
    assert (combined.outcome, combined.exit_code) == _reference_group(group)
    shuffled = list(group)
    rnd.shuffle(shuffled)
    assert combine_group(ranks(*shuffled)).outcome is combined.outcome


@PROPS
@given(GROUPS, THRESHOLDS)
def test_F6_property_skip_and_pass_never_from_a_subset(
    group: list[RunnerReport | None], thresholds: list[Threshold]
) -> None:
    combined = combine_group(ranks(*group))
    verdict = judge_attempt(combined, kind="custom", thresholds=thresholds)
    if not group or any(r is None for r in group):
        assert combined.outcome not in (Outcome.SKIP, Outcome.PASS)
        assert verdict.phase not in (Phase.SKIPPED, Phase.PASSED)


@PROPS
@given(GROUPS, THRESHOLDS)
def test_F6_property_combine_then_judge_never_passes_when_a_rank_errored_or_failed(
    group: list[RunnerReport | None], thresholds: list[Threshold]
) -> None:
    verdict = judge_attempt(combine_group(ranks(*group)), kind="custom", thresholds=thresholds)
    if any(r.outcome in (Outcome.ERROR, Outcome.FAIL) for r in _reporting(group)):
        assert verdict.phase in (Phase.ERROR, Phase.FAILED)


@PROPS
@given(MAYBE_REPORT, st.one_of(st.none(), MAYBE_REPORT), st.booleans(), THRESHOLDS)
def test_F3_property_combine_then_judge_never_passes_when_a_side_errored_or_failed(
    server_rep: RunnerReport | None,
    client_rep: RunnerReport | None,
    client_exists: bool,
    thresholds: list[Threshold],
) -> None:
    client = SideReport("client", "node-b", client_rep) if client_exists else None
    combined = combine_pair(server=SideReport("server", "node-a", server_rep), client=client)
    verdict = judge_attempt(combined, kind="custom", thresholds=thresholds)
    sides = [r for r in (server_rep, client_rep if client_exists else None) if r is not None]
    if any(r.outcome in (Outcome.ERROR, Outcome.FAIL) for r in sides):
        assert verdict.phase in (Phase.ERROR, Phase.FAILED)
    if client is None or client_rep is None:
        assert verdict.phase is not Phase.PASSED  # no traffic crossed, or nobody settled it
    assert not combined.unmeasurable & combined.metrics.keys()


@HEAVY
@given(
    n=st.integers(0, 3000),
    line_chars=st.integers(0, 200_000),
    char=st.sampled_from(["a", "é", "\U0001f600"]),
    node_chars=st.integers(1, 20_000),
    disagree=st.booleans(),
)
def test_F8_property_rank_summary_clamped_for_any_n_and_line(
    n: int, line_chars: int, char: str, node_chars: int, disagree: bool
) -> None:
    line = char * line_chars
    node = "n" * node_chars
    sides = [
        SideReport(
            f"rank {i}",
            node,
            report(
                "Fail" if i % 3 == 1 else "Pass",
                message=line,
                metrics={
                    f"custom{k}": (str(i) if disagree else "1") + char * 500 for k in range(6)
                },
            ),
        )
        for i in range(n)
    ]
    combined = combine_group(sides)
    verdict = group_outcome([s.report for s in sides])
    summary = rank_summary(sides, outcome=verdict.outcome, why=verdict.why)
    limit = MAX_SUMMARY_BYTES + len(SUMMARY_SUFFIX.encode())
    assert len(summary.encode()) <= limit
    assert combined.message.startswith(summary)
    notes = combined.message[len(summary) :]
    # Four keys, four ranks each, every field cut to 120 characters: bounded by N-free size.
    assert len(notes.encode()) <= 5 * 8192
    assert ("ranks differed" in notes) is (disagree and n > 1)
