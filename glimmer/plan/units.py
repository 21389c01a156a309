"""Execution units and their time budgets (rules E8, E16, F1, F4, G1).

A unit is what one result describes: a Node-scope test has one unit per target (in
pinned order), a Pair one unit over two nodes (server = first target, client =
second; with more targets, allowed only under spec.linkBlame, one unit per consecutive
pair, F10), a Group one unit over every target (rank = position). Units are derived
from the pinned plan every pass rather than stored, so a restarted controller recomputes
exactly the same set.

The time budgets live here because the pod builder, the overdue check and the heat
marker all need the same execution window: a disagreement between them would let a
pod outlive its deadline or be declared overdue while still inside it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from glimmer.plan import spec as specs
from glimmer.plan.pinned import PinnedPlan
from glimmer.verdict.nodes import PlannedUnit

#: Grace past the execution window before the kubelet kills a runner (A15, E16).
DEADLINE_GRACE_SECONDS: Final = 120
#: Extra rendezvous grace for every Group pod (F4).
GROUP_RENDEZVOUS_GRACE_SECONDS: Final = 300
#: Time past the kubelet deadline after which a non-terminated pod is overdue (E16).
OVERDUE_GRACE_SECONDS: Final = 300
#: Margin on the heat-expected marker beyond the overdue point (E11).
HEAT_MARGIN_SECONDS: Final = 300

SERVER: Final = "server"
CLIENT: Final = "client"


@dataclass(frozen=True)
class Unit:
    """One execution unit: a test over one node (Node), two (Pair) or all targets (Group)."""

    test_index: int
    test_name: str
    scope: str
    nodes: tuple[str, ...]

    @property
    def key(self) -> str:
        """Identity within a run: test name plus its nodes joined by ``+`` (as in L3)."""
        return f"{self.test_name}/{'+'.join(self.nodes)}"

    @property
    def lead_node(self) -> str:
        """The node an attempt is recorded against: the node, the server or rank 0."""
        return self.nodes[0]


def slots(unit: Unit) -> int:
    """Interlock slots the unit costs: 1 for Node, 2 for Pair, N for Group (E9)."""
    return len(unit.nodes)


def units_of_test(plan: PinnedPlan, test_index: int) -> tuple[Unit, ...]:
    """The units of one planned test, in launch order."""
    test = plan.tests[test_index]
    scope = test.scope
    if scope == "Node":
        return tuple(
            Unit(test_index=test_index, test_name=test.name, scope=scope, nodes=(node,))
            for node in plan.targets
        )
    if scope == "Pair" and len(plan.targets) > 2:
        # F10: several pairs, in target order: (t0, t1), (t2, t3), ...
        targets = plan.targets
        return tuple(
            Unit(test_index=test_index, test_name=test.name, scope=scope,
                 nodes=(targets[i], targets[i + 1]))
            for i in range(0, len(targets) - 1, 2)
        )  # fmt: skip
    if scope in ("Pair", "Group"):
        return (Unit(test_index=test_index, test_name=test.name, scope=scope, nodes=plan.targets),)
    raise ValueError(f"test {test.name!r} has unsupported scope {scope!r}")


def plan_units(plan: PinnedPlan) -> tuple[Unit, ...]:
    """Every unit of the plan, in plan order then launch order."""
    return tuple(unit for index in range(len(plan.tests)) for unit in units_of_test(plan, index))


def verdict_units(plan: PinnedPlan | None) -> tuple[PlannedUnit, ...] | None:
    """Every unit of the plan as the node verdict reads it (with required, variant cell
    and kind); None when there is no plan or one of its scopes cannot be read, so the
    node verdict judges nothing rather than guess at the units."""
    if plan is None:
        return None
    out: list[PlannedUnit] = []
    try:
        units = plan_units(plan)
    except ValueError:
        return None
    for unit in units:
        test = plan.tests[unit.test_index]
        axes = tuple(sorted((str(k), str(v)) for k, v in test.axes.items()))
        out.append(PlannedUnit(unit.test_name, unit.nodes, test.required, axes, test.kind))
    return tuple(out)


def pair_roles(unit: Unit) -> tuple[tuple[str, str], tuple[str, str]]:
    """``((server, node), (client, node))`` of a Pair unit: the target order decides."""
    if unit.scope != "Pair" or len(unit.nodes) != 2:
        raise ValueError(f"{unit.key} is not a two-node Pair unit")
    return (SERVER, unit.nodes[0]), (CLIENT, unit.nodes[1])


def group_ranks(unit: Unit) -> tuple[tuple[int, str], ...]:
    """``(rank, node)`` of a Group unit: rank = position in the pinned targets."""
    if unit.scope != "Group":
        raise ValueError(f"{unit.key} is not a Group unit")
    return tuple(enumerate(unit.nodes))


def rank_hostname(rank: int) -> str:
    return f"rank-{rank}"


def is_segmented(spec: Mapping[str, Any]) -> bool:
    return specs.soak(spec) is not None


def execution_window_seconds(spec: Mapping[str, Any]) -> int:
    """``BURNIN_DURATION_SECONDS``: the segment if segmented, else ``durationSeconds``, else 600.

    Every segment is a full window (G1), so the segment length is the window even for
    the last one.
    """
    segment = specs.segment_seconds(spec)
    if segment is not None:
        return segment
    return specs.duration_seconds(spec) or specs.DEFAULT_DURATION_SECONDS


def segments_required(spec: Mapping[str, Any]) -> int:
    """``ceil(durationSeconds / segmentSeconds)`` for a soak; 0 when not segmented (G1)."""
    segment = specs.segment_seconds(spec)
    if segment is None:
        return 0
    if segment <= 0:
        raise ValueError(f"soak.segmentSeconds must be positive, got {segment}")
    return math.ceil(specs.duration_seconds(spec) / segment)


def active_deadline_seconds(spec: Mapping[str, Any], scope: str) -> int:
    """The runner pod's ``activeDeadlineSeconds``: window + 120, plus 300 for Group pods."""
    deadline = execution_window_seconds(spec) + DEADLINE_GRACE_SECONDS
    if scope == "Group":
        deadline += GROUP_RENDEZVOUS_GRACE_SECONDS
    return deadline


def overdue_after_seconds(spec: Mapping[str, Any]) -> int:
    """Age since pod creation after which a non-terminated pod is overdue (E16)."""
    return execution_window_seconds(spec) + DEADLINE_GRACE_SECONDS + OVERDUE_GRACE_SECONDS


def heat_expiry_seconds(spec: Mapping[str, Any]) -> int:
    """How far ahead a ``heat-expected`` marker expires: window + 120 + 300 + 300 (E11).

    It outlives the overdue point, so a watchdog never drains a node mid-execution,
    yet expires on its own if the run vanishes.
    """
    return overdue_after_seconds(spec) + HEAT_MARGIN_SECONDS
