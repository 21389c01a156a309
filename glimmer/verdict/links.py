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

Provenance is decided over every side of the link, reported or not
(:func:`link_provenance`): each side is as weak as its own declaration and what its
dispatcher knows of it (a simulated node or pod spec is ``sim`` whatever it printed), a
side that did not report is ``unknown`` (absence is never a declaration), and the
weakest side wins, so a link reads ``silicon`` only when every side reported silicon.
The combined report carries that provenance, so both dispatchers judge it the same way
through :func:`~glimmer.verdict.judge_attempt`. Everything else is folded fail closed
too: unreadable lines add up (so one side's cut output still makes a Pass an Error),
artifacts and invalid names of every reporting side are kept.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Final

from glimmer.contract.artifacts import Artifact, DroppedArtifact
from glimmer.contract.report import Outcome, RunnerReport
from glimmer.verdict.dissent import DID_NOT_REPORT, disagreed_notes, pair_summary, rank_summary
from glimmer.verdict.group import NA_READING, Election, elect, group_outcome, outcome_of
from glimmer.verdict.phases import Provenance, resolve_provenance, weakest
from glimmer.verdict.termination import NO_TERMINATED_RUNNER

#: Pair precedence when both sides reported (F3): the first level present decides.
PAIR_PRECEDENCE: Final = (Outcome.ERROR, Outcome.FAIL, Outcome.SKIP, Outcome.PASS)
#: P9: a synthetic Error (an overdue link) records exit code 0.
SYNTHETIC_EXIT: Final = 0
#: How long a Pair's settle waits, after the client ended, for the server's own report
#: (both dispatchers: the operator requeues for the server pod's termination, the bare
#: host polls ``--server-record``). A server usually ends a moment after its client;
#: past the grace it "did not report", which makes the link ``unknown``, never silicon.
SERVER_REPORT_GRACE_SECONDS: Final = 30.0


@dataclass(frozen=True, slots=True)
class SideReport:
    """One pod of a link: its role as messages name it, its node, what it reported."""

    #: ``server``, ``client`` or ``rank 3``: exactly as it appears in messages.
    label: str
    node: str
    #: None: this side did not report (never terminated, or its log was unreadable).
    report: RunnerReport | None
    #: What the message says of a side with no report: ``did not report``, or on an
    #: overdue path ``never started`` / ``never finished`` (F5).
    absent: str = DID_NOT_REPORT
    #: The dispatcher itself knows this side ran (or was to run) against the simulated
    #: GPU: its node's simulator labels, its pod spec, its host's ``--sim`` (I14).
    #: Known whether or not the side reported, so a silent side can still be ``sim``.
    simulated: bool = False


def side_provenance(side: SideReport) -> Provenance:
    """One side's provenance: what it declared, weakened by what its dispatcher knows.

    A side that did not report declared nothing, so it is ``unknown`` (or ``sim`` when
    its node or pod is simulated); a reporting side resolves exactly as a Node attempt
    does (:func:`~glimmer.verdict.resolve_provenance`)."""
    dispatcher = Provenance.SIM if side.simulated else None
    if side.report is None:
        return dispatcher or Provenance.UNKNOWN
    return resolve_provenance(side.report.provenance, dispatcher=dispatcher)


def link_provenance(sides: Iterable[SideReport]) -> Provenance:
    """A link result's provenance over EVERY side of the attempt, reported or not.

    The weakest side wins (``sim < unknown < silicon``): the result reads ``silicon``
    only when every side reported and every side is silicon. A side that did not report
    (a server still running when its client settled, a rank missing from a merge) is
    ``unknown``: a link nobody measured at one end never certifies either node. No
    side at all is ``unknown``, never silicon.
    """
    return weakest(side_provenance(side) for side in sides)


def combine_pair(
    *,
    server: SideReport,
    client: SideReport | None,
    overdue: bool = False,
    early: bool = False,
) -> RunnerReport:
    """One report for a Pair attempt (F2, F3).

    ``early`` (or ``client`` None): the server ended before the client existed (F2):
    its Pass is an Error (no traffic crossed), its Fail/Skip/Error stands; the client
    given then is only the planned side (its node's provenance counts, it never
    reported; None: nothing is known of it, so it is ``unknown``). Otherwise the client
    settled the pair: both reported -> Error > Fail > Skip > Pass, client first at
    each level; only the client reported -> the client's verdict; the client did not
    report -> Error (the side that settles the link said nothing). ``overdue``: a
    side ran past its deadline (F2): Error, and nothing is harvested (F9).

    Provenance is :func:`link_provenance` over both sides either way.
    """
    planned_client = client or SideReport(label="client", node="", report=None)
    if overdue:
        message = pair_summary(
            outcome=Outcome.ERROR,
            sides=(server, client),
            decider=None,
            why="the link ran past its deadline: no verdict",
        )
        return _overdue(message, members=(server, planned_client))
    if early or client is None:
        return _early_server(server, planned_client=replace(planned_client, report=None))
    members = (server, client)
    reporting = [s for s in members if s.report is not None]
    reports = [s.report for s in reporting if s.report is not None]
    metrics: dict[str, str] = {}
    for report in reports:
        metrics.update(report.metrics)  # server first, so the client wins shared keys
    declared = frozenset[str]().union(*(r.unmeasurable for r in reports))
    decider = _pair_decider(server=server, client=client)
    if decider is None or decider.report is None:
        outcome, exit_code, skip_declared = Outcome.ERROR, NO_TERMINATED_RUNNER, False
        why = f"the {client.label} settles the link and did not report: no verdict"
    else:
        chosen = decider.report
        outcome, exit_code, skip_declared = (
            outcome_of(chosen),
            chosen.exit_code,
            chosen.skip_declared,
        )
        why = ""
    return _combined(
        sides=reporting,
        members=members,
        outcome=outcome,
        exit_code=exit_code,
        skip_declared=skip_declared,
        metrics=metrics,
        unmeasurable=declared - metrics.keys(),
        message=pair_summary(outcome=outcome, sides=(server, client), decider=decider, why=why),
    )


def _pair_decider(*, server: SideReport, client: SideReport) -> SideReport | None:
    """F3: the client when only it reported, else the first level present, client first."""
    if client.report is None:
        return None
    if server.report is None:
        return client
    for level in PAIR_PRECEDENCE:
        for side in (client, server):
            if side.report is not None and outcome_of(side.report) is level:
                return side
    return None  # pragma: no cover - outcome_of only yields the four levels


def _early_server(server: SideReport, *, planned_client: SideReport) -> RunnerReport:
    """F2: the server terminated before the client existed (which therefore never
    reported: the result is never silicon)."""
    members = (server, planned_client)
    report = server.report
    if report is None:
        return _combined(
            sides=(),
            members=members,
            outcome=Outcome.ERROR,
            exit_code=NO_TERMINATED_RUNNER,
            skip_declared=False,
            metrics={},
            unmeasurable=frozenset(),
            message=pair_summary(
                outcome=Outcome.ERROR,
                sides=(server, None),
                decider=None,
                why=f"the {server.label} ended before the client existed: no verdict",
            ),
        )
    own = outcome_of(report)
    if own is Outcome.PASS:
        outcome = Outcome.ERROR
        why = (
            f"the {server.label} ended before the client existed, so no traffic crossed: "
            "its Pass is no verdict"
        )
    else:
        outcome = own
        why = f"the {server.label} ended before the client existed; its verdict stands"
    return _combined(
        sides=(server,),
        members=members,
        outcome=outcome,
        exit_code=report.exit_code,
        skip_declared=report.skip_declared,
        metrics=dict(report.metrics),
        unmeasurable=report.unmeasurable,
        message=pair_summary(outcome=outcome, sides=(server, None), decider=server, why=why),
    )


def combine_group(
    ranks: Sequence[SideReport], *, overdue: bool = False, workers_created: bool = True
) -> RunnerReport:
    """One report for a Group attempt (F6 verdict, F7 election, F8 message); rank i = ranks[i].

    ``overdue``: a pod ran past its deadline while ranks were unfinished (F5): Error,
    nothing harvested. ``workers_created=False``: rank 0 ended before the workers
    existed (F5): F6 decides as usual, but no artifact is harvested (F9).
    """
    if overdue:
        return _overdue(
            rank_summary(
                ranks,
                outcome=Outcome.ERROR,
                why="a rank ran past its deadline while ranks were unfinished: no verdict",
            ),
            members=ranks,
        )
    reports = [side.report for side in ranks]
    verdict = group_outcome(reports)
    election = elect(reports)
    deciding = reports[verdict.decider] if verdict.decider is not None else None
    if deciding is None:
        exit_code, skip_declared = NO_TERMINATED_RUNNER, False
    else:
        exit_code, skip_declared = deciding.exit_code, deciding.skip_declared
    why = verdict.why
    if not workers_created:
        why = "; ".join(w for w in ("rank 0 ended before the workers existed", why) if w)
    message = " ".join(
        part
        for part in (
            rank_summary(ranks, outcome=verdict.outcome, why=why),
            disagreed_notes(ranks, election.contested),
        )
        if part
    )
    combined = _combined(
        sides=[side for side in ranks if side.report is not None],
        members=ranks,
        outcome=verdict.outcome,
        exit_code=exit_code,
        skip_declared=skip_declared,
        metrics=election.metrics,
        unmeasurable=election.unmeasurable,
        message=message,
    )
    combined = replace(combined, dropped_readings=_dropped_readings(ranks, election))
    if workers_created:
        return combined
    return replace(combined, artifacts=(), dropped_artifacts=(), artifacts_in_order=())


def _dropped_readings(
    ranks: Sequence[SideReport], election: Election
) -> tuple[tuple[str, tuple[tuple[str, str], ...]], ...]:
    """The measured readings of every key F7 dropped, named by side (see RunnerReport)."""
    out: list[tuple[str, tuple[tuple[str, str], ...]]] = []
    for elected in election.contested:
        if elected.value is not None:
            continue
        measured = tuple(
            (f"{ranks[i].label} ({ranks[i].node})", reading)
            for i, reading in elected.readings
            if reading != NA_READING
        )
        if measured:
            out.append((elected.name, measured))
    return tuple(out)


def _overdue(message: str, *, members: Sequence[SideReport]) -> RunnerReport:
    """An overdue link: Error with nothing harvested; nobody reported, so its provenance
    is ``unknown`` (``sim`` where a side's node or pod is simulated)."""
    return _combined(
        sides=(),
        members=[replace(m, report=None) for m in members],
        outcome=Outcome.ERROR,
        exit_code=SYNTHETIC_EXIT,
        skip_declared=False,
        metrics={},
        unmeasurable=frozenset(),
        message=message,
    )


def _combined(
    *,
    sides: Sequence[SideReport],
    members: Sequence[SideReport],
    outcome: Outcome,
    exit_code: int,
    skip_declared: bool,
    metrics: dict[str, str],
    unmeasurable: frozenset[str],
    message: str,
) -> RunnerReport:
    """The fields every link folds the same way: evidence from the ``sides`` that
    reported, provenance over every one of the link's ``members`` (reported or not)."""
    reports = [s.report for s in sides if s.report is not None]
    invalid_names, invalid_count = _invalid_names(reports)
    artifacts: list[Artifact] = []
    dropped: list[DroppedArtifact] = []
    in_order: list[Artifact | DroppedArtifact] = []
    overflow: dict[str, None] = {}
    for report in reports:
        artifacts.extend(report.artifacts)
        dropped.extend(report.dropped_artifacts)
        in_order.extend(report.artifacts_in_order)
        overflow.update(dict.fromkeys(report.overflow_names))
    return RunnerReport(
        exit_code=exit_code,
        outcome=outcome,
        metrics=metrics,
        unmeasurable=frozenset(unmeasurable),
        invalid_names=invalid_names,
        invalid_name_count=invalid_count,
        message=message,
        skip_declared=skip_declared,
        artifacts=tuple(artifacts),
        dropped_artifacts=tuple(dropped),
        overflow_names=tuple(overflow),
        unreadable_lines=sum(r.unreadable_lines for r in reports),
        # The link's provenance, not any one runner's word (link_provenance).
        declared_provenance=link_provenance(members).value,
        artifacts_in_order=tuple(in_order),
    )


def _invalid_names(reports: Sequence[RunnerReport]) -> tuple[tuple[str, ...], int]:
    """A7 at link scope: the listed names deduped and sorted; the count is the distinct
    listed names plus what each side counted but could not list (never undercounted)."""
    names = sorted({n for r in reports for n in r.invalid_names})
    unlisted = sum(max(r.invalid_name_count - len(r.invalid_names), 0) for r in reports)
    return tuple(names), len(names) + unlisted
