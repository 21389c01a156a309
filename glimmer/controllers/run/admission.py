"""Which other run, if any, holds our targets first (E3), decided purely.

Two runs on one node double the load and corrupt both measurements, so a run that
overlaps an earlier holder is refused, never queued. The caller lists every run in
every namespace *uncached* (E22) and supplies each one's targets.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from glimmer.controllers.kit import names
from glimmer.controllers.kit.view import RunView

JSON = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Conflict:
    namespace: str
    name: str
    nodes: tuple[str, ...]

    def message(self) -> str:
        return (
            f"targets busy: run {self.namespace}/{self.name} already holds "
            f"{', '.join(self.nodes)}; refused, not queued (set spec.force to override)"
        )


def holds(run: JSON) -> bool:
    """A run holds nodes while it carries the cordon finalizer or is not terminal."""
    view = RunView(run)
    return names.FINALIZER in view.finalizers or not view.terminal


def precedence_key(run: JSON) -> tuple[int, str, str]:
    """Smaller precedes: started runs first, then older creation, then smaller UID."""
    view = RunView(run)
    return (0 if view.started_at else 1, str(view.created_at or ""), view.uid)


def find_conflict(
    run: JSON,
    *,
    targets: Sequence[str],
    others: Sequence[tuple[JSON, Sequence[str]]],
) -> Conflict | None:
    """The winning conflicter among holding runs that precede ``run``, or None.

    ``others`` pairs each other run with its targets (pinned, else re-resolved).
    """
    ours = precedence_key(run)
    uid = RunView(run).uid
    wanted = set(targets)
    candidates: list[tuple[tuple[int, str, str], Conflict]] = []
    for other, other_targets in others:
        view = RunView(other)
        if view.uid == uid or not holds(other):
            continue
        key = precedence_key(other)
        if key >= ours:
            continue
        overlap = [node for node in other_targets if node in wanted]
        if overlap:
            conflict = Conflict(
                namespace=view.namespace, name=view.name, nodes=tuple(sorted(set(overlap)))
            )
            candidates.append((key, conflict))
    if not candidates:
        return None
    return min(candidates, key=lambda item: item[0])[1]
