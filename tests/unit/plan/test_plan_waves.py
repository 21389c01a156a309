"""The sweep order (E8) and the facility interlock (E9)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from glimmer.plan.pinned import PinnedPlan, PlannedTest
from glimmer.plan.units import Unit
from glimmer.plan.waves import (
    admit_launches,
    can_launch,
    current_test,
    effective_cap,
    wave_schedule,
)


def _unit(*nodes: str, scope: str = "Node") -> Unit:
    return Unit(test_index=0, test_name="t", scope=scope, nodes=nodes)


@pytest.mark.parametrize("cap", [None, 0, -3])
def test_E9_nil_or_nonpositive_cap_means_one(cap: int | None) -> None:
    assert effective_cap(cap) == 1
    assert can_launch(["a"], busy=frozenset(), cap=cap)
    assert not can_launch(["b"], busy=frozenset({"a"}), cap=cap)


def test_E9_node_launches_when_a_slot_is_free() -> None:
    assert can_launch(["c"], busy=frozenset({"a", "b"}), cap=3)
    assert not can_launch(["c"], busy=frozenset({"a", "b"}), cap=2)


def test_E9_node_already_busy_launches_even_at_the_cap() -> None:
    assert can_launch(["a"], busy=frozenset({"a", "b"}), cap=2)


def test_E9_node_already_busy_launches_after_the_cap_is_lowered_live() -> None:
    assert can_launch(["a"], busy=frozenset({"a", "b", "c"}), cap=1)


def test_E9_pair_needs_both_nodes_admitted_at_once() -> None:
    assert can_launch(["a", "b"], busy=frozenset(), cap=2)
    assert not can_launch(["a", "b"], busy=frozenset(), cap=1)
    assert not can_launch(["a", "b"], busy=frozenset({"x"}), cap=2)
    assert can_launch(["a", "b"], busy=frozenset({"a"}), cap=2)


def test_E9_group_needs_all_ranks_admitted_at_root_launch() -> None:
    nodes = ["r0", "r1", "r2", "r3"]
    assert can_launch(nodes, busy=frozenset(), cap=4)
    assert not can_launch(nodes, busy=frozenset(), cap=3)


def test_E9_admissions_in_one_pass_count_against_each_other() -> None:
    candidates = [_unit("a"), _unit("b"), _unit("c"), _unit("a")]
    admitted = admit_launches(candidates, busy=frozenset(), cap=2)
    assert [u.nodes for u in admitted] == [("a",), ("b",), ("a",)]


def test_E8_next_test_starts_nowhere_until_the_current_one_settles_everywhere() -> None:
    assert current_test([[True, True], [False, False], [False]]) == 1
    assert current_test([[True, False], [False, False]]) == 0
    assert current_test([[True], [True]]) is None


def _plan(scopes: list[str], targets: tuple[str, ...]) -> PinnedPlan:
    tests = tuple(
        PlannedTest(name=f"t{i}", required=True, spec={"kind": "nccl", "scope": s})
        for i, s in enumerate(scopes)
    )
    return PinnedPlan(targets=targets, tests=tests)


def test_E8_wave_schedule_packs_node_units_up_to_the_cap_and_never_mixes_tests() -> None:
    plan = _plan(["Node", "Node"], ("a", "b", "c"))
    waves = wave_schedule(plan, 2)
    assert [[(u.test_name, u.nodes) for u in w] for w in waves] == [
        [("t0", ("a",)), ("t0", ("b",))],
        [("t0", ("c",))],
        [("t1", ("a",)), ("t1", ("b",))],
        [("t1", ("c",))],
    ]


def test_E9_wave_schedule_gives_a_pair_its_own_wave() -> None:
    waves = wave_schedule(_plan(["Pair"], ("a", "b")), 4)
    assert [[u.nodes for u in w] for w in waves] == [[("a", "b")]]


def test_E9_wave_schedule_refuses_a_unit_that_can_never_launch() -> None:
    with pytest.raises(ValueError, match="never launch"):
        wave_schedule(_plan(["Group"], ("a", "b", "c")), 2)


_nodes = st.sampled_from([f"n{i}" for i in range(8)])


@given(
    busy=st.frozensets(_nodes, max_size=8),
    unit=st.lists(_nodes, min_size=1, max_size=4, unique=True),
    cap=st.one_of(st.none(), st.integers(-2, 9)),
)
def test_E9_a_new_launch_never_takes_busy_past_the_cap(
    busy: frozenset[str], unit: list[str], cap: int | None
) -> None:
    if can_launch(unit, busy=busy, cap=cap):
        grown = busy | frozenset(unit)
        assert grown == busy or len(grown) <= effective_cap(cap)


@given(
    units=st.lists(st.lists(_nodes, min_size=1, max_size=3, unique=True), max_size=8),
    cap=st.integers(1, 8),
)
def test_E9_one_pass_of_admissions_stays_within_the_cap(units: list[list[str]], cap: int) -> None:
    admitted = admit_launches([_unit(*u) for u in units], busy=frozenset(), cap=cap)
    assert len({n for u in admitted for n in u.nodes}) <= cap
