"""Pair and Group results: several runners' reports -> one combined report (F2, F3, F6-F9).

A link (a Pair's two ends, a Group's N ranks) is measured by several pods at once,
but it gets ONE result, judged once by :func:`glimmer.verdict.judge_attempt` like any
Node attempt. These rules decide what that one report says, and they exist because
a link verdict is easy to get wrong in both costly directions:

- a machinery failure at either end means the link was never measured, so Error
  outranks Fail, which outranks Skip and Pass, and the message names every side
  rather than indicting one endpoint (F3, F8);
- a server that ends before its client existed carried no traffic, so its Pass is
  an Error (F2);
- Skip and Pass are never concluded from a subset of ranks: a group would settle
  Passed around nodes that never ran (F6);
- one rank's ``n/a`` must never hide behind the others' values, no fold may invent a
  value no rank reported, and numbers that disagree are named (F7, F8).

Everything else a runner report carries is folded fail closed: provenance is the
weakest any side declared (nobody declaring is ``None``, never silicon), unreadable
lines add up (so one side's cut output still makes a Pass an Error), artifacts and
invalid names of every reporting side are kept.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from glimmer.contract.artifacts import Artifact, DroppedArtifact
from glimmer.contract.report import (
    PROVENANCE_SILICON,
    PROVENANCE_SIM,
    PROVENANCE_UNKNOWN,
    Outcome,
    RunnerReport,
)
from glimmer.verdict.dissent import (
    disagreed_notes,
    pair_summary,
    rank_summary,
)
from glimmer.verdict.group import elect, group_outcome
from glimmer.verdict.termination import NO_TERMINATED_RUNNER

#: Pair precedence when both sides reported (F3): the first level present decides.
PAIR_PRECEDENCE: Final = (Outcome.ERROR, Outcome.FAIL, Outcome.SKIP, Outcome.PASS)

_PROVENANCE_RANK: Final = {PROVENANCE_SIM: 0, PROVENANCE_UNKNOWN: 1, PROVENANCE_SILICON: 2}


@dataclass(frozen=True, slots=True)
class SideReport:
    """One pod of a link: its role as messages name it, its node, what it reported."""

    #: ``server``, ``client`` or ``rank 3``: exactly as it appears in messages.
    label: str
    node: str
    #: None: this side did not report (never terminated, or its log was unreadable).
    report: RunnerReport | None


def combine_pair(*, server: SideReport, client: SideReport | None) -> RunnerReport:
    """One report for a Pair attempt (F2, F3).

    ``client`` None: the server ended before the client existed (F2): its Pass is an
    Error (no traffic crossed), its Fail/Skip/Error stands. Otherwise the client
    settled the pair: both reported -> Error > Fail > Skip > Pass, client first at
    each level; only the client reported -> the client's verdict; the client did not
    report -> Error (the side that settles the link said nothing).
    """
    if client is None:
        return _early_server(server)
    sides = [s for s in (server, client) if s.report is not None]
    reports = [s.report for s in sides if s.report is not None]
    decider = _pair_decider(server=server, client=client)
    metrics: dict[str, str] = {}
    for report in reports:
        metrics.update(report.metrics)  # server first, so the client wins shared keys
    declared = frozenset().union(*(r.unmeasurable for r in reports))
    unmeasurable = frozenset(declared - metrics.keys())
    if decider is None:
        outcome, exit_code, skip_declared = Outcome.ERROR, NO_TERMINATED_RUNNER, False
        why = f"the {client.label} settled the link but did not report: no verdict"
    else:
        chosen = decider.report
        assert chosen is not None
        outcome, exit_code, skip_declared = chosen.outcome, chosen.exit_code, chosen.skip_declared
        why = ""
    message = pair_summary(outcome=outcome, sides=(server, client), decider=decider, why=why)
    return _combined(
        sides=sides,
        outcome=outcome,
        exit_code=exit_code,
        skip_declared=skip_declared,
        metrics=metrics,
        unmeasurable=unmeasurable,
        message=message,
    )


def _pair_decider(*, server: SideReport, client: SideReport) -> SideReport | None:
    if client.report is None:
        return None
    if server.report is None:
        return client
    for level in PAIR_PRECEDENCE:
        for side in (client, server):
            if side.report is not None and side.report.outcome is level:
                return side
    raise AssertionError("an Outcome outside the four verdicts")  # pragma: no cover


def _early_server(server: SideReport) -> RunnerReport:
    """F2: the server terminated before the client existed."""
    report = server.report
    if report is None:
        outcome, exit_code, skip_declared = Outcome.ERROR, NO_TERMINATED_RUNNER, False
        why = "the client was never created and the server did not report: no verdict"
        sides: list[SideReport] = []
        metrics: dict[str, str] = {}
        unmeasurable: frozenset[str] = frozenset()
        decider = None
    else:
        sides = [server]
        metrics, unmeasurable = dict(report.metrics), report.unmeasurable
        exit_code, skip_declared, decider = report.exit_code, report.skip_declared, server
        if report.outcome is Outcome.PASS:
            outcome = Outcome.ERROR
            why = (
                f"the {server.label} ended before the client existed, so no traffic "
                "crossed the link: its Pass is no verdict"
            )
        else:
            outcome = report.outcome
            why = f"the {server.label} ended before the client existed; its verdict stands"
    message = pair_summary(outcome=outcome, sides=(server, None), decider=decider, why=why)
    return _combined(
        sides=sides,
        outcome=outcome,
        exit_code=exit_code,
        skip_declared=skip_declared,
        metrics=metrics,
        unmeasurable=unmeasurable,
        message=message,
    )


def combine_group(ranks: Sequence[SideReport]) -> RunnerReport:
    """One report for a Group attempt (F6 verdict, F7 election, F8 message); rank i = ranks[i]."""
    reports = [side.report for side in ranks]
    verdict = group_outcome(reports)
    election = elect(reports)
    if verdict.decider is None:
        exit_code, skip_declared = NO_TERMINATED_RUNNER, False
    else:
        deciding = reports[verdict.decider]
        assert deciding is not None
        exit_code, skip_declared = deciding.exit_code, deciding.skip_declared
    message = " ".join(
        part
        for part in (
            rank_summary(ranks, outcome=verdict.outcome, why=verdict.why),
            disagreed_notes(ranks, election.contested),
        )
        if part
    )
    return _combined(
        sides=[side for side in ranks if side.report is not None],
        outcome=verdict.outcome,
        exit_code=exit_code,
        skip_declared=skip_declared,
        metrics=election.metrics,
        unmeasurable=election.unmeasurable,
        message=message,
    )


def _combined(
    *,
    sides: Sequence[SideReport],
    outcome: Outcome,
    exit_code: int,
    skip_declared: bool,
    metrics: dict[str, str],
    unmeasurable: frozenset[str],
    message: str,
) -> RunnerReport:
    """The fields every link folds the same way, from the sides that reported."""
    reports = [s.report for s in sides if s.report is not None]
    invalid_names, invalid_count = _invalid_names(reports)
    artifacts: list[Artifact] = []
    dropped: list[DroppedArtifact] = []
    in_order: list[Artifact | DroppedArtifact] = []
    overflow: list[str] = []
    for report in reports:
        artifacts.extend(report.artifacts)
        dropped.extend(report.dropped_artifacts)
        in_order.extend(report.artifacts_in_order)
        overflow.extend(n for n in report.overflow_names if n not in overflow)
    return RunnerReport(
        exit_code=exit_code,
        outcome=outcome,
        metrics=metrics,
        unmeasurable=unmeasurable,
        invalid_names=invalid_names,
        invalid_name_count=invalid_count,
        message=message,
        skip_declared=skip_declared,
        artifacts=tuple(artifacts),
        dropped_artifacts=tuple(dropped),
        overflow_names=tuple(overflow),
        unreadable_lines=sum(r.unreadable_lines for r in reports),
        declared_provenance=weakest_declared(r.declared_provenance for r in reports),
        artifacts_in_order=tuple(in_order),
    )


def _invalid_names(reports: Sequence[RunnerReport]) -> tuple[tuple[str, ...], int]:
    """A7 at link scope: the listed names deduped and sorted; the count is the distinct
    listed names plus what each side counted but could not list (never undercounted)."""
    names = sorted({n for r in reports for n in r.invalid_names})
    unlisted = sum(max(r.invalid_name_count - len(r.invalid_names), 0) for r in reports)
    return tuple(names), len(names) + unlisted


def weakest_declared(declared: Iterable[str | None]) -> str | None:
    """The weakest provenance any side declared (``sim < unknown < silicon``).

    A side that declared nothing reads ``unknown`` once any side declared something;
    when none did the result is None, which the verdict reads as ``unknown``.
    """
    values = list(declared)
    if all(v is None for v in values):
        return None
    return min(
        (v if v in _PROVENANCE_RANK else PROVENANCE_UNKNOWN for v in values),
        key=lambda v: _PROVENANCE_RANK[v],
    )
