"""Execution units (E8, F1, F4) and time budgets (G1, E16, api §9.3/§10)."""

from __future__ import annotations

from typing import Any

import pytest

from glimmer.plan.pinned import PinnedPlan, PlannedTest
from glimmer.plan.units import (
    Unit,
    active_deadline_seconds,
    execution_window_seconds,
    group_ranks,
    heat_expiry_seconds,
    overdue_after_seconds,
    pair_roles,
    plan_units,
    segments_required,
    slots,
    units_of_test,
)


def _plan(*scopes: str, targets: tuple[str, ...] = ("n1", "n2", "n3")) -> PinnedPlan:
    tests = tuple(
        PlannedTest(name=f"t{i}", required=True, spec={"kind": "custom", "scope": scope})
        for i, scope in enumerate(scopes)
    )
    return PinnedPlan(targets=targets, tests=tests)


def test_E8_node_scope_has_one_unit_per_target_in_pinned_order() -> None:
    plan = _plan("Node", targets=("zeta", "alpha", "mid"))
    units = units_of_test(plan, 0)
    assert [u.nodes for u in units] == [("zeta",), ("alpha",), ("mid",)]
    assert all(slots(u) == 1 for u in units)


def test_F1_pair_is_one_unit_server_first_target_client_second() -> None:
    plan = _plan("Pair", targets=("b-node", "a-node"))
    (unit,) = units_of_test(plan, 0)
    assert pair_roles(unit) == (("server", "b-node"), ("client", "a-node"))
    assert unit.lead_node == "b-node"


def test_E9_pair_costs_two_slots() -> None:
    (unit,) = units_of_test(_plan("Pair", targets=("a", "b")), 0)
    assert slots(unit) == 2


def test_F4_group_is_one_unit_with_rank_equal_to_position() -> None:
    (unit,) = units_of_test(_plan("Group", targets=("x", "y", "z")), 0)
    assert group_ranks(unit) == ((0, "x"), (1, "y"), (2, "z"))
    assert slots(unit) == 3


def test_api11_test_index_is_position_in_the_expanded_plan() -> None:
    units = plan_units(_plan("Node", "Pair", targets=("a", "b")))
    assert [(u.test_index, u.test_name, u.nodes) for u in units] == [
        (0, "t0", ("a",)),
        (0, "t0", ("b",)),
        (1, "t1", ("a", "b")),
    ]


def test_L3_unit_key_joins_nodes_with_plus() -> None:
    assert Unit(test_index=0, test_name="link", scope="Pair", nodes=("a", "b")).key == "link/a+b"


def test_unsupported_scope_has_no_units() -> None:
    with pytest.raises(ValueError, match="unsupported scope"):
        units_of_test(_plan("Rack"), 0)


@pytest.mark.parametrize(
    ("spec", "window"),
    [
        ({"kind": "custom"}, 600),
        ({"kind": "custom", "durationSeconds": 0}, 600),
        ({"kind": "custom", "durationSeconds": 45}, 45),
        ({"kind": "custom", "durationSeconds": 3600, "soak": {"segmentSeconds": 900}}, 900),
    ],
)
def test_api10_execution_window_is_segment_else_duration_else_600(
    spec: dict[str, Any], window: int
) -> None:
    assert execution_window_seconds(spec) == window


@pytest.mark.parametrize(
    ("duration", "segment", "required"),
    [(3600, 900, 4), (3601, 900, 5), (900, 900, 1), (1000, 300, 4)],
)
def test_G1_segments_required_is_ceiling_of_duration_over_segment(
    duration: int, segment: int, required: int
) -> None:
    spec = {"kind": "custom", "durationSeconds": duration, "soak": {"segmentSeconds": segment}}
    assert segments_required(spec) == required


def test_G1_unsegmented_test_requires_no_segments() -> None:
    assert segments_required({"kind": "custom", "durationSeconds": 3600}) == 0


def test_E16_pod_deadline_is_window_plus_120_and_300_more_for_group() -> None:
    spec = {"kind": "custom", "durationSeconds": 100}
    assert active_deadline_seconds(spec, "Node") == 220
    assert active_deadline_seconds(spec, "Pair") == 220
    assert active_deadline_seconds(spec, "Group") == 520


def test_E16_segmented_pod_deadline_is_sized_to_the_segment() -> None:
    spec = {"kind": "custom", "durationSeconds": 86400, "soak": {"segmentSeconds": 3600}}
    assert active_deadline_seconds(spec, "Node") == 3720


def test_E16_pod_is_overdue_after_window_plus_120_plus_300() -> None:
    assert overdue_after_seconds({"kind": "custom"}) == 1020
    assert overdue_after_seconds({"kind": "custom", "durationSeconds": 60}) == 480


def test_E11_heat_marker_expires_window_plus_120_plus_300_plus_300_ahead() -> None:
    assert heat_expiry_seconds({"kind": "gpu-burn", "durationSeconds": 600}) == 1320
