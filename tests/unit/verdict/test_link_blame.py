"""Link blame (F10-F13): the table, fail-closed answers, partner choice, and properties.

Properties: (a) a node is named only when its own re-pair settled Failed and the other
side's settled Passed (never on unjudged evidence); (b) swapping the two ends (and their
re-pairs) names the same node: the blame follows the evidence, never the position; (c)
the blame is never stronger than its evidence (provenance is the weakest); (d) a
chosen partner is never an end of the link, always healthy, and on the side's topology
value when one is configured.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from glimmer.verdict.blame import (
    BOTH_FAILED,
    LINK,
    NO_SINGLE,
    NOT_FAILED,
    TOO_FEW,
    UNDETERMINED,
    Probe,
    Repair,
    attribute,
    bisect,
    choose_partner,
    healthy_partners,
    node_blame,
)
from glimmer.verdict.phases import Phase, Provenance

A, B, C, D = "node-a", "node-b", "node-c", "node-d"


def blame(phase_ac: Phase | None, phase_bd: Phase | None, *, link: Phase = Phase.FAILED) -> str:
    return attribute(
        link=(A, B),
        phase=link,
        repairs=(
            Repair(A, C, phase_ac, Provenance.SILICON),
            Repair(B, D, phase_bd, Provenance.SILICON),
        ),
    ).blame


def test_F11_the_table() -> None:
    assert blame(Phase.PASSED, Phase.PASSED) == LINK
    assert blame(Phase.FAILED, Phase.PASSED) == node_blame(A)
    assert blame(Phase.PASSED, Phase.FAILED) == node_blame(B)
    assert blame(Phase.FAILED, Phase.FAILED) == UNDETERMINED


def test_F11_both_failing_says_why() -> None:
    got = attribute(
        link=(A, B),
        phase=Phase.FAILED,
        repairs=(Repair(A, C, Phase.FAILED), Repair(B, D, Phase.FAILED)),
    )
    assert got.blame == UNDETERMINED and got.reason.startswith(BOTH_FAILED)
    assert f"{A}+{C} Failed" in got.reason and f"{B}+{D} Failed" in got.reason


def test_F10_only_a_settled_fail_is_attributed() -> None:
    for phase in (Phase.ERROR, Phase.PASSED, Phase.SKIPPED, Phase.RUNNING, Phase.CANCELLED):
        got = attribute(
            link=(A, B),
            phase=phase,
            repairs=(Repair(A, C, Phase.FAILED), Repair(B, D, Phase.PASSED)),
        )
        assert got.blame == UNDETERMINED and got.reason == NOT_FAILED, phase


def test_F12_unjudged_or_missing_evidence_is_undetermined() -> None:
    for other in (None, Phase.ERROR, Phase.SKIPPED, Phase.RUNNING, Phase.CANCELLED):
        assert blame(Phase.FAILED, other) == UNDETERMINED, other
        assert blame(other, Phase.FAILED) == UNDETERMINED, other
        assert blame(Phase.PASSED, other) == UNDETERMINED, other
        # ... and says the evidence is unjudged (never "both ends fail").
        got = attribute(
            link=(A, B),
            phase=Phase.FAILED,
            repairs=(Repair(A, C, Phase.FAILED), Repair(B, D, other)),
        )
        assert got.reason.startswith("unjudged evidence"), (other, got.reason)
    skipped = attribute(
        link=(A, B),
        phase=Phase.FAILED,
        repairs=(Repair(A, None, None, skipped="no partner"), Repair(B, D, Phase.PASSED)),
    )
    assert skipped.blame == UNDETERMINED and "not run: no partner" in skipped.reason
    assert attribute(link=(A, B), phase=Phase.FAILED, repairs=(None, None)).blame == UNDETERMINED


def test_F12_a_re_pair_about_another_node_or_with_an_end_of_the_link_is_no_evidence() -> None:
    wrong_side = (Repair(C, D, Phase.FAILED), Repair(B, D, Phase.PASSED))
    assert attribute(link=(A, B), phase=Phase.FAILED, repairs=wrong_side).blame == UNDETERMINED
    with_b = (Repair(A, B, Phase.FAILED), Repair(B, D, Phase.PASSED))
    assert attribute(link=(A, B), phase=Phase.FAILED, repairs=with_b).blame == UNDETERMINED
    # A "skipped" re-pair that somehow carries a phase is still not evidence.
    odd = (Repair(A, C, Phase.FAILED, skipped="budget"), Repair(B, D, Phase.PASSED))
    assert attribute(link=(A, B), phase=Phase.FAILED, repairs=odd).blame == UNDETERMINED


def test_F11_provenance_is_the_weakest_of_the_evidence() -> None:
    got = attribute(
        link=(A, B),
        phase=Phase.FAILED,
        link_provenance=Provenance.SILICON,
        repairs=(
            Repair(A, C, Phase.FAILED, Provenance.SIM),
            Repair(B, D, Phase.PASSED, Provenance.SILICON),
        ),
    )
    assert got.blame == node_blame(A) and got.node == A
    assert got.provenance is Provenance.SIM


def test_F13_partner_is_healthy_not_an_end_and_prefers_a_free_one() -> None:
    healthy = healthy_partners(
        [((A, B), Phase.FAILED), ((C, D), Phase.PASSED), (("e", "f"), Phase.ERROR)]
    )
    assert healthy == (C, D)
    assert choose_partner(A, link=(A, B), healthy=healthy) == C
    assert choose_partner(B, link=(A, B), healthy=healthy, avoid={C}) == D
    assert choose_partner(B, link=(A, B), healthy=(C,), avoid={C}) == C  # shared, in turn
    assert choose_partner(A, link=(A, B), healthy=(A, B)) is None
    assert choose_partner(A, link=(A, B), healthy=()) is None


def test_F13_topology_label_restricts_partners_to_the_same_value() -> None:
    topology = {A: "leaf-1", B: "leaf-2", C: "leaf-2", D: "leaf-1"}
    assert choose_partner(A, link=(A, B), healthy=(C, D), topology=topology) == D
    assert choose_partner(B, link=(A, B), healthy=(C, D), topology=topology) == C
    # A side without the label, or no partner on its leaf: none (never a guess).
    assert choose_partner(A, link=(A, B), healthy=(C,), topology=topology) is None
    assert choose_partner(A, link=(A, B), healthy=(C, D), topology={C: "x", D: "x"}) is None


PHASES = st.sampled_from([None, *Phase])
PROVENANCES = st.sampled_from(list(Provenance))
NODES = st.sampled_from([A, B, C, D, "node-e"])


@st.composite
def repairs(draw: st.DrawFn, node: str) -> Repair | None:
    if draw(st.booleans()) and draw(st.booleans()):
        return None
    return Repair(
        node=draw(st.sampled_from([node, node, node, C])),
        partner=draw(st.one_of(st.none(), NODES)),
        phase=draw(PHASES),
        provenance=draw(PROVENANCES),
        skipped=draw(st.sampled_from(["", "", "", "no partner"])),
    )


def _settled_evidence(repair: Repair | None, *, node: str, phase: Phase) -> bool:
    return (
        repair is not None
        and not repair.skipped
        and repair.node == node
        and repair.partner not in (None, A, B)
        and repair.phase is phase
    )


@given(repairs(A), repairs(B), PHASES, PROVENANCES)
def test_F11_property_a_node_is_named_only_on_a_settled_fail_beside_a_settled_pass(
    ra: Repair | None, rb: Repair | None, phase: Phase | None, link_provenance: Provenance
) -> None:
    got = attribute(
        link=(A, B), phase=phase or Phase.FAILED, repairs=(ra, rb), link_provenance=link_provenance
    )
    if got.node == A:
        assert _settled_evidence(ra, node=A, phase=Phase.FAILED)
        assert _settled_evidence(rb, node=B, phase=Phase.PASSED)
    elif got.node == B:
        assert _settled_evidence(rb, node=B, phase=Phase.FAILED)
        assert _settled_evidence(ra, node=A, phase=Phase.PASSED)
    if got.blame != UNDETERMINED:
        assert (phase or Phase.FAILED) is Phase.FAILED
        assert got.blame in (LINK, node_blame(A), node_blame(B))
    # (c) never stronger than the link's own evidence, nor than a settled re-pair's.
    evidence = [link_provenance, *(r.provenance for r in (ra, rb) if r is not None and r.phase)]
    assert got.provenance.rank <= min(p.rank for p in evidence)


@given(repairs(A), repairs(B), PHASES)
def test_F11_property_swapping_the_ends_names_the_same_node(
    ra: Repair | None, rb: Repair | None, phase: Phase | None
) -> None:
    settled = phase or Phase.FAILED
    forward = attribute(link=(A, B), phase=settled, repairs=(ra, rb))
    # The same evidence seen from the other end (B's re-pair first) names the same node:
    # the blame follows the evidence, never the position.
    backward = attribute(link=(B, A), phase=settled, repairs=(rb, ra))
    assert backward.blame == forward.blame


@given(
    st.sampled_from([A, B]),
    st.lists(NODES, max_size=6),
    st.one_of(st.none(), st.dictionaries(NODES, st.sampled_from(["l1", "l2"]))),
    st.sets(NODES),
)
def test_F13_property_a_partner_is_healthy_never_an_end_and_on_the_same_leaf(
    side: str, healthy: list[str], topology: dict[str, str] | None, avoid: set[str]
) -> None:
    partner = choose_partner(side, link=(A, B), healthy=healthy, topology=topology, avoid=avoid)
    if partner is None:
        return
    assert partner in healthy and partner not in (A, B)
    if topology is not None:
        assert topology.get(side) and topology.get(partner) == topology[side]


# --- Group bisection (I44) ---------------------------------------------------------------


def run_bisection(ranks: list[str], fails: Callable[[tuple[str, ...]], Phase | None]) -> Any:
    """Drive :func:`bisect` to its answer, each probe settled by ``fails``."""
    probes: list[Probe] = []
    for _ in range(4 * len(ranks) + 4):
        step = bisect(ranks, probes, provenance=Provenance.SILICON)
        if not isinstance(step, tuple):
            return step, probes
        assert step not in [p.nodes for p in probes]  # never asks twice
        probes.append(Probe(step, fails(step), Provenance.SILICON))
    raise AssertionError("the bisection never ended")


def with_bad(node: str) -> Callable[[tuple[str, ...]], Phase]:
    return lambda group: Phase.FAILED if node in group else Phase.PASSED


def test_group_bisection_names_the_rank_that_drags_the_collective() -> None:
    ranks = ["r0", "r1", "r2", "r3"]
    got, probes = run_bisection(ranks, with_bad("r2"))
    assert got.blame == node_blame("r2"), got
    assert [p.nodes for p in probes] == [("r0", "r1"), ("r2", "r3"), ("r2", "r0"), ("r3", "r0")]


def test_group_bisection_halves_passing_is_the_link_and_unjudged_is_undetermined() -> None:
    ranks = ["r0", "r1", "r2", "r3"]
    got, _ = run_bisection(ranks, lambda group: Phase.PASSED)
    assert got.blame == LINK
    got, _ = run_bisection(ranks, lambda group: Phase.ERROR if "r3" in group else Phase.PASSED)
    assert got.blame == UNDETERMINED and got.reason.startswith("unjudged evidence")
    got, _ = run_bisection(ranks, lambda group: Phase.FAILED)
    assert got.blame == UNDETERMINED and got.reason.startswith(BOTH_FAILED)
    got, probes = run_bisection(["r0", "r1", "r2"], with_bad("r1"))
    assert got.blame == UNDETERMINED and got.reason == TOO_FEW and probes == []


@given(st.integers(min_value=4, max_value=16), st.data())
def test_group_bisection_property_one_bad_rank_is_found_and_only_on_settled_evidence(
    size: int, data: st.DataObject
) -> None:
    ranks = [f"r{i}" for i in range(size)]
    bad = data.draw(st.sampled_from(ranks))
    got, probes = run_bisection(ranks, with_bad(bad))
    assert got.blame == node_blame(bad)
    assert len(probes) <= 2 * size.bit_length() + 3  # about 2 log2(N) executions
    # Any probe left unsettled or Errored, anywhere, and nobody is named.
    spoil = data.draw(st.integers(min_value=0, max_value=len(probes) - 1))
    target = probes[spoil].nodes
    phase = data.draw(st.sampled_from([None, Phase.ERROR, Phase.SKIPPED, Phase.CANCELLED]))
    got, _ = run_bisection(ranks, lambda g: phase if g == target else with_bad(bad)(g))
    assert got.node is None


def test_group_bisection_two_bad_suspects_name_nobody() -> None:
    def fails(group: tuple[str, ...]) -> Phase:
        return Phase.FAILED if {"r2", "r3"} & set(group) else Phase.PASSED

    got, probes = run_bisection(["r0", "r1", "r2", "r3"], fails)
    assert got.blame == UNDETERMINED and got.reason.startswith(NO_SINGLE), got
    assert [p.nodes for p in probes][-2:] == [("r2", "r0"), ("r3", "r0")]
