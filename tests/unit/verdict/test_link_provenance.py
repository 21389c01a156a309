"""A link result's provenance is decided over every side of the attempt (I14 at link
scope): each side as weak as its declaration and what its dispatcher knows of its node or
pod, a side that did not report ``unknown``, the weakest side wins. So a link reads
``silicon`` (and can certify its nodes) only when every side reported silicon.

The property drives every way a link attempt can end (a Pair settled by its client, a
server ending before the client existed, an overdue link; a Group whole, a Group whose
rank 0 ended before its workers, an overdue group) with members terminated or not, each
side sim / silicon / unknown / undeclared / not reporting, and checks the verdict and the
run's certification through the same ``judge_attempt`` and ``run_provenance`` both
dispatchers use, against an independent reading of the rule."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from glimmer.contract import RunnerReport
from glimmer.verdict import (
    Phase,
    Provenance,
    TestResultState,
    Threshold,
    judge_attempt,
    record_attempt,
    run_provenance,
)
from glimmer.verdict.links import (
    SideReport,
    combine_group,
    combine_pair,
    link_provenance,
    side_provenance,
)
from tests.unit.verdict.links_builders import report

PROPS = settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
DECLARED = st.sampled_from([None, "sim", "unknown", "silicon"])
GATES = st.sampled_from([(), (Threshold(metric="bw", comparison="GreaterThanOrEqual", value="1"),)])


@dataclass(frozen=True)
class Member:
    """What a generated member of an attempt is: whether its runner ended and reported,
    what it declared, and whether its dispatcher knows its node or pod is simulated."""

    terminated: bool
    reported: bool
    declared: str | None
    outcome: str
    simulated: bool

    def side(self, label: str, node: str) -> SideReport:
        rep: RunnerReport | None = None
        if self.terminated and self.reported:
            rep = report(self.outcome, metrics={"bw": "5"}, provenance=self.declared)
        return SideReport(label=label, node=node, report=rep, simulated=self.simulated)


MEMBERS = st.builds(
    Member,
    terminated=st.booleans(),
    reported=st.booleans(),
    declared=DECLARED,
    outcome=st.sampled_from(["Pass", "Pass", "Fail", "Skip", "Error"]),
    simulated=st.sampled_from([False, False, True]),
)


@dataclass(frozen=True)
class Attempt:
    scope: str  # Pair | Group
    path: str  # settled | early | overdue
    members: tuple[Member, ...]


@st.composite
def attempts(draw: st.DrawFn) -> Attempt:
    scope = draw(st.sampled_from(["Pair", "Group"]))
    count = 2 if scope == "Pair" else draw(st.integers(2, 6))
    return Attempt(
        scope=scope,
        path=draw(st.sampled_from(["settled", "settled", "early", "overdue"])),
        members=tuple(draw(MEMBERS) for _ in range(count)),
    )


def combined_of(attempt: Attempt) -> tuple[RunnerReport, list[SideReport]]:
    """The link's one report, and the sides exactly as the combination saw them."""
    if attempt.scope == "Pair":
        server = attempt.members[0].side("server", "n0")
        client = attempt.members[1].side("client", "n1")
        if attempt.path == "early":
            client = SideReport(label="client", node="n1", report=None, simulated=client.simulated)
            seen = [server, client]
            return combine_pair(server=server, client=client, early=True), seen
        if attempt.path == "overdue":
            seen = [SideReport(label=s.label, node=s.node, report=None, simulated=s.simulated)
                    for s in (server, client)]  # fmt: skip
            return combine_pair(server=server, client=client, overdue=True), seen
        return combine_pair(server=server, client=client), [server, client]
    sides = [m.side(f"rank {i}", f"n{i}") for i, m in enumerate(attempt.members)]
    if attempt.path == "early":
        sides = [sides[0]] + [
            SideReport(label=s.label, node=s.node, report=None, simulated=s.simulated)
            for s in sides[1:]
        ]
        return combine_group(sides, workers_created=False), sides
    if attempt.path == "overdue":
        silent = [SideReport(label=s.label, node=s.node, report=None, simulated=s.simulated)
                  for s in sides]  # fmt: skip
        return combine_group(sides, overdue=True), silent
    return combine_group(sides), sides


def reference(sides: list[SideReport]) -> Provenance:
    """An independent reading: sim anywhere (declared or known) is sim; else any side
    that did not report or did not declare silicon is unknown; else silicon."""
    if any(s.simulated or (s.report is not None and s.report.provenance == "sim") for s in sides):
        return Provenance.SIM
    if all(s.report is not None and s.report.provenance == "silicon" for s in sides):
        return Provenance.SILICON
    return Provenance.UNKNOWN


@PROPS
@given(attempt=attempts(), gates=GATES, kind=st.sampled_from(["custom", "nccl", "tcp-baseline"]))
def test_a_link_result_is_silicon_only_if_every_side_reported_silicon(
    attempt: Attempt, gates: tuple[Threshold, ...], kind: str
) -> None:
    combined, seen = combined_of(attempt)
    verdict = judge_attempt(combined, kind=kind, thresholds=gates)
    assert verdict.provenance is reference(seen) is link_provenance(seen)
    every_side_silicon = (
        all(
            m.terminated and m.reported and m.declared == "silicon" and not m.simulated
            for m in attempt.members
        )
        and attempt.path == "settled"
    )
    if verdict.provenance is Provenance.SILICON:
        assert every_side_silicon, attempt
    # ... and a result that is not silicon never certifies either node.
    state = record_attempt(TestResultState(name="link", kind=kind), verdict, retry_on_error_limit=0)
    run = run_provenance([state], phase=state.phase)
    if run.certifies_silicon:
        assert every_side_silicon and verdict.phase is Phase.PASSED, attempt


def test_a_side_that_did_not_report_is_unknown_and_a_simulated_one_sim() -> None:
    silicon = report(provenance="silicon")
    assert side_provenance(SideReport("server", "n0", silicon)) is Provenance.SILICON
    assert side_provenance(SideReport("server", "n0", None)) is Provenance.UNKNOWN
    assert side_provenance(SideReport("server", "n0", None, simulated=True)) is Provenance.SIM
    assert side_provenance(SideReport("server", "n0", silicon, simulated=True)) is Provenance.SIM
    assert link_provenance([]) is Provenance.UNKNOWN  # nothing at all never reads silicon


def test_a_pair_whose_silent_server_runs_on_a_simulated_node_reads_sim() -> None:
    combined = combine_pair(
        server=SideReport("server", "n0", None, simulated=True),
        client=SideReport("client", "n1", report(metrics={"bw": "9"}, provenance="silicon")),
    )
    verdict = judge_attempt(combined, kind="custom", thresholds=())
    assert verdict.phase is Phase.PASSED and verdict.provenance is Provenance.SIM


def test_a_pair_client_alone_never_reads_silicon() -> None:
    combined = combine_pair(
        server=SideReport("server", "n0", None),
        client=SideReport("client", "n1", report(metrics={"bw": "9"}, provenance="silicon")),
    )
    verdict = judge_attempt(combined, kind="custom", thresholds=())
    assert "did not report" in verdict.message
    assert verdict.provenance is Provenance.UNKNOWN


def test_an_early_servers_planned_client_on_a_simulated_node_makes_the_link_sim() -> None:
    combined = combine_pair(
        server=SideReport("server", "n0", report("Fail", provenance="silicon")),
        client=SideReport("client", "n1", None, simulated=True),
        early=True,
    )
    verdict = judge_attempt(combined, kind="custom", thresholds=())
    assert verdict.phase is Phase.FAILED and verdict.provenance is Provenance.SIM
    alone = combine_pair(server=SideReport("server", "n0", report("Fail")), client=None)
    assert judge_attempt(alone, kind="custom", thresholds=()).provenance is Provenance.UNKNOWN
