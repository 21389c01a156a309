"""Which other run, if any, holds our targets first (E3), decided purely.

Two runs on one node double the load and corrupt both measurements, so a run that
overlaps an earlier holder is refused, never queued. The caller lists every run in
every namespace *uncached* (E22) and supplies each one's targets.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from glimmer.controllers.run import labels
from glimmer.verdict import Phase

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


def _meta(run: Mapping[str, Any]) -> Mapping[str, Any]:
    return run.get("metadata") or {}


def terminal(run: Mapping[str, Any]) -> bool:
    phase = (run.get("status") or {}).get("phase") or ""
    try:
        return Phase(phase).terminal
    except ValueError:
        return False


def holds(run: Mapping[str, Any]) -> bool:
    """A run holds nodes while it carries the cordon finalizer or is not terminal."""
    return labels.FINALIZER in (_meta(run).get("finalizers") or []) or not terminal(run)


def precedence_key(run: Mapping[str, Any]) -> tuple[int, str, str]:
    """Smaller precedes: started runs first, then older creation, then smaller UID."""
    started = bool((run.get("status") or {}).get("startedAt"))
    meta = _meta(run)
    return (0 if started else 1, str(meta.get("creationTimestamp", "")), str(meta.get("uid", "")))


def find_conflict(
    run: Mapping[str, Any],
    *,
    targets: Sequence[str],
    others: Sequence[tuple[Mapping[str, Any], Sequence[str]]],
) -> Conflict | None:
    """The winning conflicter among holding runs that precede ``run``, or None.

    ``others`` pairs each other run with its targets (pinned, else re-resolved).
    """
    ours = precedence_key(run)
    uid = _meta(run).get("uid")
    wanted = set(targets)
    candidates: list[tuple[tuple[int, str, str], Conflict]] = []
    for other, other_targets in others:
        if _meta(other).get("uid") == uid or not holds(other):
            continue
        key = precedence_key(other)
        if key >= ours:
            continue
        overlap = [node for node in other_targets if node in wanted]
        if overlap:
            meta = _meta(other)
            conflict = Conflict(
                namespace=str(meta.get("namespace", "")),
                name=str(meta.get("name", "")),
                nodes=tuple(sorted(set(overlap))),
            )
            candidates.append((key, conflict))
    if not candidates:
        return None
    return min(candidates, key=lambda item: item[0])[1]
