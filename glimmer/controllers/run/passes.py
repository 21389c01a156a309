"""One reconcile pass over a started run: what it read and what it will write.

A :class:`Pass` is rebuilt from the cluster every time (E1) and indexed so that a pass
stays linear in the size of the run, which may hold thousands of node results.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from glimmer.controllers.run import kube, podstate, wire
from glimmer.controllers.run.delivery import Delivery
from glimmer.controllers.run.view import RunView
from glimmer.plan import PinnedPlan, PlannedTest, Unit
from glimmer.plan import spec as specs
from glimmer.verdict import AttemptVerdict, Phase, TestResultState, fail_fast_stops

JSON = dict[str, Any]


@dataclass(frozen=True)
class Launch:
    """A pod the sweep decided to create this pass, after its node was cordoned.

    Creation waits for the pass's first status write, so the cordon is recorded in
    ``status.cordonedNodes`` before any pod that needs it exists (E10)."""

    test_index: int
    test: PlannedTest
    unit: Unit
    attempt: int
    manifest: JSON

    @property
    def pod_name(self) -> str:
        return str(self.manifest["metadata"]["name"])


@dataclass
class Pass:
    """One reconcile pass over a started run: what it read and what it will write."""

    run: JSON
    plan: PinnedPlan
    pods: dict[str, JSON]
    now: datetime
    results: list[JSON]
    delete_after_write: list[str] = field(default_factory=list)
    deliveries: list[Delivery] = field(default_factory=list)
    events: list[tuple[str, str, str]] = field(default_factory=list)
    launched: set[str] = field(default_factory=set)
    #: Pods to create once the cordons they need are written (see :class:`Launch`).
    planned: list[Launch] = field(default_factory=list)
    requeue: float = 300.0
    changed: bool = False
    #: time.monotonic() after which the pass stops taking on units (see RunOptions).
    deadline: float = math.inf
    #: ``pods`` came from the informer cache (it may lag a pod created a moment ago).
    pods_cached: bool = False
    #: ``run`` is known to be what the apiserver holds (a live read or a write's answer).
    confirmed: bool = False
    #: Pods found not to be ours this pass: never read, and holding nothing.
    foreign: set[str] = field(default_factory=set)
    _index: dict[tuple[str, tuple[str, ...]], int] = field(default_factory=dict)
    _required: dict[str, bool] = field(default_factory=dict)
    _busy: set[str] | None = None
    _stops: bool | None = None

    def __post_init__(self) -> None:
        # Indexes keep one pass linear in the run's size (thousands of node results).
        self._required = {test.name: test.required for test in self.plan.tests}
        for position, result in enumerate(self.results):
            self._index[self._identity(result)] = position

    @staticmethod
    def _identity(result: Mapping[str, Any]) -> tuple[str, tuple[str, ...]]:
        return (str(result.get("name", "")), tuple(str(n) for n in result.get("nodes") or []))

    @property
    def view(self) -> RunView:
        """Typed reads of the run as this pass holds it (after its writes, too)."""
        return RunView(self.run)

    @property
    def status(self) -> JSON:
        """The status dict this pass edits and writes."""
        return self.view.status

    def find(self, test: str, nodes: Sequence[str]) -> int | None:
        return self._index.get((test, tuple(nodes)))

    def put(self, result: JSON) -> None:
        identity = self._identity(result)
        index = self._index.get(identity)
        if index is None:
            self._index[identity] = len(self.results)
            self.results.append(result)
        else:
            self.results[index] = result
        self._busy = None
        self._stops = None
        self.changed = True

    def launch(self, node: str) -> None:
        self.launched.add(node)
        self._busy = None

    def abandon(self, node: str) -> None:
        """A planned launch that made no pod (refused, or met a foreign twin): the node
        is held only if its result is still open (E8)."""
        self.launched.discard(node)
        self._busy = None

    def out_of_time(self) -> bool:
        """Past the pass budget: commit what was done and come straight back."""
        if time.monotonic() < self.deadline:
            return False
        self.requeue = min(self.requeue, 0.1)
        return True

    def wait(self, seconds: float) -> None:
        self.requeue = min(self.requeue, max(seconds, 1.0))

    def required(self, name: str) -> bool:
        return self._required.get(name, True)

    def fail_fast_stops(self) -> bool:
        """D7 (decided by ``glimmer.verdict``), recomputed only after a result changed."""
        if not self.plan.fail_fast:
            return False
        if self._stops is None:
            self._stops = fail_fast_stops(self.states())
        return self._stops

    def add_pod(self, pod: JSON) -> None:
        self.pods[str(kube.meta(pod)["name"])] = pod
        self._busy = None

    def forget_pod(self, name: str) -> None:
        """A pod found not to be ours: it holds nothing for this run and is never read."""
        self.pods.pop(name, None)
        self.foreign.add(name)
        self._busy = None

    def replace_pods(self, pods: Sequence[JSON]) -> None:
        """The run's pods as a live list shows them (foreign ones stay forgotten)."""
        self.pods = {
            str(kube.meta(p)["name"]): p
            for p in pods
            if str(kube.meta(p)["name"]) not in self.foreign
        }
        self.pods_cached = False
        self._busy = None

    def states(self) -> list[TestResultState]:
        return [
            wire.state_from_wire(r, required=self.required(str(r.get("name"))))
            for r in self.results
        ]

    def busy(self) -> set[str]:
        """E8: nodes with a live owned pod plus every node of every open result."""
        if self._busy is not None:
            return set(self._busy)
        nodes = {podstate.pinned_node(p) for p in self.pods.values() if podstate.live(p)}
        for result in self.results:
            if result.get("phase") == str(Phase.RUNNING):
                nodes.update(result.get("nodes") or [])
        nodes |= self.launched
        nodes.discard("")
        self._busy = nodes
        return set(nodes)


def new_result(test: PlannedTest, unit: Unit) -> JSON:
    result: JSON = {
        "name": test.name,
        "kind": test.kind,
        "scope": test.scope,
        "phase": str(Phase.RUNNING),
        "nodes": list(unit.nodes),
        "repeatsRequired": specs.repeat_count(test.spec),
        "repeatsCompleted": 0,
        "errorRetries": 0,
    }
    if test.axes:
        result["variantAxes"] = dict(test.axes)
    return result


def error_verdict(
    message: str, *, exit_code: int = 0, metrics: Mapping[str, Any] | None = None
) -> AttemptVerdict:
    """An attempt the controller settles as Error (no verdict). ``metrics`` is evidence a
    checkpoint already read (H1): it is kept on the attempt and result, never judged."""
    return AttemptVerdict(
        phase=Phase.ERROR,
        message=message,
        exit_code=exit_code,
        metrics={str(k): str(v) for k, v in (metrics or {}).items()},
        unmeasurable=(),
    )
