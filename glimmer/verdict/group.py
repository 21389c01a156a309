"""A Group's verdict over its ranks (F6) and its metric election (F7).

Pure functions of the ranks' reports, rank i = ``reports[i]``, None = rank i did not
report. Shared by the operator and ``glimmer merge`` so both reach the same verdict.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from glimmer.contract.numbers import format_go_plain, parse_go_float
from glimmer.contract.registry import Combination, combination_of
from glimmer.contract.report import UNMEASURABLE, Outcome, RunnerReport

#: The reading a rank gave for a key it declared ``n/a`` (the reader keeps no spelling).
NA_READING: Final = UNMEASURABLE

_NUMERIC: Final = (Combination.SUM, Combination.MAX, Combination.MIN)


@dataclass(frozen=True, slots=True)
class GroupOutcome:
    outcome: Outcome
    #: The rank whose exit code (and skip declaration) the result carries; None = ``-1``.
    decider: int | None
    #: Why a verdict is not the ranks' own (a missing turnout); "" otherwise.
    why: str = ""


def group_outcome(reports: Sequence[RunnerReport | None]) -> GroupOutcome:
    """F6: none reported -> Error; any Error, else any Fail (lowest such rank) decides;
    else a missing rank -> Error (Skip and Pass never from a subset); else any Skip
    (lowest); else Pass (rank 0)."""
    reported = [i for i, r in enumerate(reports) if r is not None]
    if not reported:
        return GroupOutcome(Outcome.ERROR, None, "no rank reported: no verdict")
    for level in (Outcome.ERROR, Outcome.FAIL):
        lowest = _lowest(reports, level)
        if lowest is not None:
            return GroupOutcome(level, lowest)
    missing = len(reports) - len(reported)
    if missing:
        rank0 = 0 if reports[0] is not None else None
        return GroupOutcome(
            Outcome.ERROR,
            rank0,
            f"{missing} of {len(reports)} ranks did not report: "
            "no Pass or Skip is concluded from a subset, no verdict",
        )
    lowest_skip = _lowest(reports, Outcome.SKIP)
    if lowest_skip is not None:
        return GroupOutcome(Outcome.SKIP, lowest_skip)
    # Every rank reported, none Error/Fail/Skip: outcome_of leaves only Pass.
    return GroupOutcome(Outcome.PASS, 0)


def _lowest(reports: Sequence[RunnerReport | None], level: Outcome) -> int | None:
    for i, report in enumerate(reports):
        if report is not None and outcome_of(report) is level:
            return i
    return None


def outcome_of(report: RunnerReport) -> Outcome:
    """A side's verdict; anything outside the four words (a report decoded from a
    damaged rank record, say) is Error, never read as a Pass by elimination."""
    try:
        return Outcome(report.outcome)
    except ValueError:
        return Outcome.ERROR


@dataclass(frozen=True, slots=True)
class Elected:
    """How one key was combined, kept for the dissent note (F8)."""

    name: str
    combination: Combination
    #: The kept string; None = dropped and marked unmeasurable.
    value: str | None
    #: ``(rank, reading)`` of every rank that reported the key, lowest rank first.
    readings: tuple[tuple[int, str], ...]
    #: Why it was dropped ("" when kept).
    dropped_because: str = ""

    @property
    def dissenters(self) -> tuple[tuple[int, str], ...]:
        """The readings worth naming: for a kept key those that differ from the kept
        string; for a dropped one every reading, the offending ones first."""
        if self.value is not None:
            return tuple(r for r in self.readings if r[1] != self.value)
        offending = tuple(r for r in self.readings if _offends(self, r[1]))
        return offending + tuple(r for r in self.readings if r not in offending)

    @property
    def contested(self) -> bool:
        """Readings differ from what was kept; a key every rank declared n/a agreed."""
        if self.value is None:
            return any(reading != NA_READING for _, reading in self.readings)
        return bool(self.dissenters)


def _offends(elected: Elected, reading: str) -> bool:
    if NA_READING in (r for _, r in elected.readings):
        return reading == NA_READING
    if elected.combination in _NUMERIC:
        return parse_go_float(reading) is None
    return reading != elected.readings[0][1]


@dataclass(frozen=True, slots=True)
class Election:
    metrics: dict[str, str]
    unmeasurable: frozenset[str]
    #: Keys whose readings differed from the kept value (or that were dropped over a
    #: real disagreement), sorted by name.
    contested: tuple[Elected, ...]


def elect(reports: Sequence[RunnerReport | None]) -> Election:
    """F7: per key, over the ranks that reported it (silent ranks do not vote)."""
    votes: dict[str, list[tuple[int, str]]] = {}
    for rank, report in enumerate(reports):
        if report is None:
            continue
        for name, value in report.metrics.items():
            if name not in report.unmeasurable:  # the maps are disjoint (A9); else n/a wins
                votes.setdefault(name, []).append((rank, value))
        for name in report.unmeasurable:
            votes.setdefault(name, []).append((rank, NA_READING))
    metrics: dict[str, str] = {}
    unmeasurable: set[str] = set()
    contested: list[Elected] = []
    for name in sorted(votes):
        elected = elect_one(name, tuple(votes[name]))
        if elected.value is None:
            unmeasurable.add(name)
        else:
            metrics[name] = elected.value
        if elected.contested:
            contested.append(elected)
    return Election(metrics, frozenset(unmeasurable), tuple(contested))


def elect_one(name: str, readings: tuple[tuple[int, str], ...]) -> Elected:
    """One key's election from its ``(rank, reading)`` votes, lowest rank first."""
    combination = combination_of(name)

    def dropped(because: str) -> Elected:
        return Elected(name, combination, None, readings, because)

    if not readings:
        return dropped("no rank reported it")
    if any(reading == NA_READING for _, reading in readings):
        return dropped("a rank declared it n/a")
    if combination is Combination.COLLECTIVE:
        return Elected(name, combination, readings[0][1], readings)
    if combination in _NUMERIC:
        values = [parse_go_float(reading) for _, reading in readings]
        numbers = [v for v in values if v is not None]
        if len(numbers) != len(values):
            return dropped("a reading is not a number")
        return Elected(name, combination, format_go_plain(fold(combination, numbers)), readings)
    first = readings[0][1]
    if any(reading != first for _, reading in readings):
        return dropped("unclassified, so kept only when every rank agrees")
    return Elected(name, combination, first, readings)


def fold(combination: Combination, values: Sequence[float]) -> float:
    """``Sum``/``Max``/``Min`` of one key's readings, in rank order.

    A NaN reading makes the fold NaN (the gate then reads it NonFinite): a max or min
    that skipped it would certify a rank that printed garbage. ``Max`` prefers +0 and
    ``Min`` -0, so the result does not depend on rank order.
    """
    if not values:
        raise ValueError("fold of no readings")
    if any(math.isnan(v) for v in values):
        return math.nan
    if combination is Combination.SUM:
        total = values[0]
        for v in values[1:]:
            total += v
        return total
    if combination is Combination.MAX:
        return max(values, key=lambda v: (v, math.copysign(1.0, v)))
    if combination is Combination.MIN:
        return min(values, key=lambda v: (v, math.copysign(1.0, v)))
    raise ValueError(f"{combination!r} is not a numeric fold")
