"""What one run says about one node: the node verdict (docs/invariants.md, "Node verdicts").

A node is Passed by a run only when every required unit of the run's pinned plan that
names it (every test, every variant cell; a unit's repeats are inside its one result)
has a settled Passed result, measured on silicon and not suspect. Everything else that
is not a Fail is "not judged", and says why: a planned unit with no result (a failFast
run stopped before it, a run cancelled or errored first), a Skipped, Error or still
open unit, a Pass nobody declared silicon. A run whose every required unit Passed but
some only on the simulated GPU reads Simulated: tested, but not on silicon, which a
fleet engineer must be able to tell from "never tested".

This is the one place the question is answered: the NodeFingerprint controller (the
``burnin.glimmer.ai/verdict`` label and the ``glimmer_node_verdict`` gauge), the sink
envelopes and the reports all call :func:`node_verdict`. Pure: the caller hands in the
planned units (``glimmer.plan.units.verdict_units``) and the results as recorded.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from glimmer.contract.kinds import judges_hardware
from glimmer.verdict.phases import Phase, Provenance


class NodeState(enum.StrEnum):
    """What one run established about one node."""

    PASSED = "Passed"
    FAILED = "Failed"
    #: Every required unit Passed, some only on the simulated GPU: nothing certified.
    SIMULATED = "Simulated"
    NOT_JUDGED = "NotJudged"

    @property
    def judged(self) -> bool:
        """A verdict a provisioning system may act on (Passed or Failed)."""
        return self in (NodeState.PASSED, NodeState.FAILED)


#: A unit's identity: its planned test, its nodes and its variant cell.
UnitKey = tuple[str, tuple[str, ...], tuple[tuple[str, str], ...]]


@dataclass(frozen=True, slots=True)
class PlannedUnit:
    """One unit of the pinned plan, as the node verdict needs it."""

    test: str
    nodes: tuple[str, ...]
    required: bool
    axes: tuple[tuple[str, str], ...] = ()
    #: The test's kind ("" when unknown: counted as judging).
    kind: str = ""

    @property
    def key(self) -> UnitKey:
        return (self.test, self.nodes, self.axes)


@dataclass(frozen=True, slots=True)
class NodeVerdict:
    """One run's verdict on one node, with the tests behind anything short of Passed."""

    node: str
    state: NodeState
    #: Required tests of the plan with no result naming the node.
    missing: tuple[str, ...] = ()
    #: Required tests whose result is open, Skipped, Error or Cancelled.
    unjudged: tuple[str, ...] = ()
    #: Required tests that Failed.
    failed: tuple[str, ...] = ()
    #: Required tests that Passed but not on silicon (sim, unknown or suspect).
    weak: tuple[str, ...] = ()
    #: Why nothing could be judged at all ("" when the units were read).
    why: str = ""

    @property
    def message(self) -> str:
        """One line for conditions, reports and logs."""
        if self.why:
            return self.why
        parts: list[str] = []
        if self.failed:
            parts.append(f"failed: {_names(self.failed)}")
        if self.missing:
            parts.append(f"never ran: {_names(self.missing)}")
        if self.unjudged:
            parts.append(f"unjudged (open, Skipped, Error or Cancelled): {_names(self.unjudged)}")
        if self.weak:
            parts.append(f"not measured on silicon: {_names(self.weak)}")
        if not parts:
            return "every required test Passed on silicon"
        return "; ".join(parts)


_MAX_NAMED: Final = 8


def _names(tests: tuple[str, ...]) -> str:
    shown = ", ".join(tests[:_MAX_NAMED])
    more = len(tests) - _MAX_NAMED
    return f"{shown} and {more} more" if more > 0 else shown


def result_key(result: Mapping[str, Any]) -> UnitKey:
    """What a recorded result is the result *of* (as :attr:`PlannedUnit.key`)."""
    nodes = result.get("nodes")
    axes = result.get("variantAxes")
    return (
        str(result.get("name") or ""),
        tuple(str(n) for n in nodes) if isinstance(nodes, list | tuple) else (),
        tuple(sorted((str(k), str(v)) for k, v in axes.items()))
        if isinstance(axes, Mapping)
        else (),
    )


def _passed_on_silicon(result: Mapping[str, Any]) -> bool:
    return result.get("provenance") == Provenance.SILICON and result.get("suspect") is not True


def _repeats_short(result: Mapping[str, Any]) -> bool:
    """A full record that says it Passed with fewer repeats than it required."""
    need, done = result.get("repeatsRequired"), result.get("repeatsCompleted")
    if not isinstance(need, int) or not isinstance(done, int):
        return False  # a compact record: it settled Passed, so its repeats completed
    return done < max(need, 1)


def node_verdict(
    node: str,
    *,
    planned: Iterable[PlannedUnit] | None,
    results: Iterable[Mapping[str, Any]],
    baseline: bool = False,
) -> NodeVerdict:
    """The verdict a finished run gives ``node`` (see the module docstring).

    ``planned`` is every unit of the run's pinned plan (None: the plan could not be
    read, so nothing can be judged); ``results`` every result the run recorded, in any
    form its status holds them (full, compact or expanded from packed records).
    ``baseline`` is the pinned plan's: a baseline run measures, it never judges.
    """
    if planned is None:
        return NodeVerdict(node, NodeState.NOT_JUDGED, why="the run's pinned plan is unreadable")
    if baseline:
        return NodeVerdict(
            node, NodeState.NOT_JUDGED, why="a baseline run measures and judges nothing"
        )
    required = [u for u in planned if u.required and node in u.nodes]
    if not required:
        return NodeVerdict(
            node, NodeState.NOT_JUDGED, why="the run's plan requires no test of this node"
        )
    if not any(judges_hardware(u.kind) for u in required):
        kinds = ", ".join(sorted({u.kind for u in required}))
        return NodeVerdict(
            node,
            NodeState.NOT_JUDGED,
            why=f"the run's required tests of this node only identify it ({kinds}); "
            "they judge nothing",
        )
    by_key: dict[UnitKey, list[Mapping[str, Any]]] = {}
    for result in results:
        if isinstance(result, Mapping) and result.get("kind"):
            by_key.setdefault(result_key(result), []).append(result)
    missing: list[str] = []
    unjudged: list[str] = []
    failed: list[str] = []
    weak: list[str] = []
    simulated = False
    for unit in required:
        recorded = by_key.get(unit.key)
        if not recorded:
            missing.append(unit.test)
            continue
        phases = {str(r.get("phase") or "") for r in recorded}
        if str(Phase.FAILED) in phases:
            failed.append(unit.test)
        elif phases != {str(Phase.PASSED)} or any(_repeats_short(r) for r in recorded):
            unjudged.append(unit.test)
        elif not all(_passed_on_silicon(r) for r in recorded):
            weak.append(unit.test)
            simulated = simulated or any(
                r.get("provenance") == Provenance.SIM or r.get("suspect") is True for r in recorded
            )
    if failed:
        state = NodeState.FAILED
    elif missing or unjudged:
        state = NodeState.NOT_JUDGED
    elif weak:
        state = NodeState.SIMULATED if simulated else NodeState.NOT_JUDGED
    else:
        state = NodeState.PASSED
    return NodeVerdict(
        node,
        state,
        missing=tuple(missing),
        unjudged=tuple(unjudged),
        failed=tuple(failed),
        weak=tuple(weak),
    )
