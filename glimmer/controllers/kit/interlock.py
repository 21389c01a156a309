"""Which nodes each run is loading right now, shared by every reconciler.

One object per manager so that a schedule, or Pair/Group launching later, can ask
"is this node held?" without listing every run. It is only a view: the cluster is the
truth, so it is rebuilt at start from run statuses (their open results and cordons)
and from node cordon stamps, and every run pass overwrites its own entry.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from glimmer.controllers.kit.cordon import owner_of
from glimmer.controllers.kit.view import JSON, RunView


class Interlock:
    def __init__(self) -> None:
        self._by_run: dict[str, frozenset[str]] = {}
        self.rebuilt = False

    def set_run(self, run_key: str, nodes: Iterable[str]) -> None:
        held = frozenset(nodes)
        if held:
            self._by_run[run_key] = held
        else:
            self._by_run.pop(run_key, None)

    def drop_run(self, run_key: str) -> None:
        self._by_run.pop(run_key, None)

    def nodes_of(self, run_key: str) -> frozenset[str]:
        return self._by_run.get(run_key, frozenset())

    def holders(self, node: str) -> list[str]:
        return sorted(run for run, nodes in self._by_run.items() if node in nodes)

    def held(self) -> dict[str, list[str]]:
        """node -> runs holding it."""
        out: dict[str, list[str]] = {}
        for run, nodes in sorted(self._by_run.items()):
            for node in nodes:
                out.setdefault(node, []).append(run)
        return out

    def rebuild(self, *, runs: Iterable[JSON], nodes: Iterable[Mapping[str, Any]]) -> None:
        """From run statuses (open results + cordoned nodes) and node cordon stamps."""
        self._by_run.clear()
        key_by_uid: dict[str, str] = {}
        for run in runs:
            view = RunView(run)
            key_by_uid[view.uid] = view.key
            self.set_run(view.key, view.held_nodes())
        for node in nodes:
            stamp = owner_of(node)
            name = str((node.get("metadata") or {}).get("name", ""))
            if stamp is None or not name:
                continue
            owner = key_by_uid.get(stamp.uid)
            if owner is not None:
                self.set_run(owner, self.nodes_of(owner) | {name})
        self.rebuilt = True
