"""The sweep and the facility interlock as pure functions (rules E8, E9).

``maxConcurrentNodes`` is a power/cooling bound on how many nodes one run loads at
once; it is read live every pass, so these functions take the cap as an argument and
keep no state. The controller supplies the busy set (nodes with a live pod of the run
plus every node of every open result, so the gaps between repeats, segments and
retries never release a node) and launches only what :func:`admit_launches` returns.

Two properties matter and are tested as such: a new launch never grows the busy set
past the cap, and a Pair or Group is admitted whole, once, at server/root launch, so a
half-started unit never strands its first pod waiting for a slot.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from glimmer.plan.pinned import PinnedPlan
from glimmer.plan.units import Unit, slots, units_of_test


def effective_cap(cap: int | None) -> int:
    """``maxConcurrentNodes`` as enforced: nil or < 1 means 1."""
    return 1 if cap is None or cap < 1 else cap


def can_launch(unit_nodes: Iterable[str], *, busy: frozenset[str], cap: int | None) -> bool:
    """Whether a unit over ``unit_nodes`` may launch now (E9).

    A Node execution launches if its node is already busy (it holds its slot) or a slot
    is free; a Pair/Group needs all its nodes to fit at once. Both are the single
    condition ``|busy ∪ nodes| ≤ cap``.
    """
    needed = busy | frozenset(unit_nodes)
    if len(needed) == len(busy):
        # Every node already holds a slot: launching adds no load, even when a live
        # lowering of the cap left the run above it.
        return True
    return len(needed) <= effective_cap(cap)


def admit_launches(
    candidates: Sequence[Unit], *, busy: frozenset[str], cap: int | None
) -> list[Unit]:
    """The candidates (in pinned order) that may launch this pass, each admission
    counting against the next."""
    admitted: list[Unit] = []
    held = busy
    for unit in candidates:
        if can_launch(unit.nodes, busy=held, cap=cap):
            admitted.append(unit)
            held = held | frozenset(unit.nodes)
    return admitted


def current_test(settled: Sequence[Sequence[bool]]) -> int | None:
    """The test the sweep works on: the first with any unit not yet settled (E8).

    ``settled[i][u]`` says whether unit ``u`` of test ``i`` has a settled result. Test
    *i+1* starts nowhere until test *i* has settled on every unit. ``None`` when every
    unit of every test has settled.
    """
    for index, units in enumerate(settled):
        if not all(units):
            return index
    return None


def wave_schedule(plan: PinnedPlan, cap: int | None) -> list[list[Unit]]:
    """How the plan would run under ``cap``, as waves of units launched together.

    For display (``glimmer run --dry-run``, reports): it assumes each wave finishes
    before the next starts, whereas the controller refills a slot as soon as a unit
    settles, so real runs can only be faster. Tests never share a wave. Raises
    ``ValueError`` for a unit that can never launch under ``cap``.
    """
    limit = effective_cap(cap)
    waves: list[list[Unit]] = []
    for index in range(len(plan.tests)):
        wave: list[Unit] = []
        wave_nodes: frozenset[str] = frozenset()
        for unit in units_of_test(plan, index):
            if slots(unit) > limit:
                raise ValueError(
                    f"{unit.scope} test {unit.test_name!r} needs {slots(unit)} nodes at once "
                    f"but maxConcurrentNodes is {limit}; it can never launch"
                )
            if not can_launch(unit.nodes, busy=wave_nodes, cap=limit):
                waves.append(wave)
                wave, wave_nodes = [], frozenset()
            wave.append(unit)
            wave_nodes |= frozenset(unit.nodes)
        if wave:
            waves.append(wave)
    return waves
