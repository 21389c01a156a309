"""One reconcile pass over a started run: what it read and what it will write.

A :class:`Pass` is rebuilt from the cluster every time (E1). It holds the results of
``status.results`` (and those it adds); the settled results only
``status.packedResults`` holds are counted through the run's index
(:mod:`~glimmer.controllers.run.openunits`), never decoded or walked, unless a caller
asks for one of them (then every result is read, as a restarted manager would). So a
pass costs what its open units and changed results cost, not the size of the run.
"""

from __future__ import annotations

import asyncio
import bisect
import enum
import math
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from glimmer.api import status_layout
from glimmer.controllers.kit import names
from glimmer.controllers.kit.view import ObjectView, RunView
from glimmer.controllers.run import soak, wire
from glimmer.controllers.run.delivery import Delivery
from glimmer.controllers.run.openunits import Identity, OpenUnits, PlanShape, identity
from glimmer.plan import PinnedPlan, PlannedTest, Unit, label_value, pod_name, units_of_test
from glimmer.plan import spec as specs
from glimmer.verdict import (
    AttemptVerdict,
    Counters,
    Phase,
    TestResultState,
    Trigger,
    count,
    fail_fast_stops,
)

JSON = dict[str, Any]


@dataclass(frozen=True)
class Execution:
    """One unit's current attempt as this pass sees it, every name computed once: the
    attempt number, its trigger (D3) and its pod's deterministic name (E13)."""

    test_index: int
    test: PlannedTest
    unit: Unit
    #: The unit's result as the pass holds it (None before its first attempt record).
    result: JSON | None
    #: ``result`` decoded by the codec (the in-flight attempt left out), once per pass.
    state: TestResultState | None
    attempt: int
    trigger: Trigger
    pod_name: str
    #: The attempt entry of a started, not yet harvested pod, if any.
    flight: JSON | None

    @property
    def node(self) -> str:
        return self.unit.lead_node

    @property
    def label(self) -> str:
        """``<test>/<node>[+<node>...]``: how deliveries and events name the unit."""
        return f"{self.test.name}/{'+'.join(self.unit.nodes)}"

    @property
    def open(self) -> bool:
        return self.result is None or self.result.get("phase") == str(Phase.RUNNING)


class Step(enum.Enum):
    """What one attempt step did to a unit, so the caller never infers it."""

    #: The unit's result is settled.
    SETTLED = "settled"
    #: A pod is live or planned, or launching is held back: nothing more this pass.
    WAITING = "waiting"
    #: An attempt was just settled as Error and the budget allows another: step again.
    AGAIN = "again"


def live_pod_settled(step: Step) -> Step:
    """An Error settled on a pod that is still live: its retry waits for the next pass,
    after the status write has let the old pod be deleted (never two on one node)."""
    return Step.SETTLED if step is Step.SETTLED else Step.WAITING


@dataclass(frozen=True)
class Launch:
    """A pod the sweep decided to create this pass, after its node was cordoned.

    Creation waits for the pass's first status write, so the cordon is recorded in
    ``status.cordonedNodes`` before any pod that needs it exists (E10).

    A Pair or Group member (F1, F4) also says how a twin found under its name is
    proven ours (``build``: the builder's manifest for a given image), which pod its
    attempt is recorded against (the server or rank 0, F9), and which other pods of
    its attempt go when it cannot be created (a half-made link measures nothing)."""

    execution: Execution
    manifest: JSON
    #: The manifest the builder makes for this pod with a given image (None: Node scope).
    build: Callable[[str], JSON] | None = None
    #: The pod the attempt is recorded against (None: this launch's own pod).
    lead_pod: str | None = None
    #: The attempt's other pods, deleted after the status write if this one fails.
    siblings: tuple[str, ...] = ()


@dataclass
class Pass:
    """One reconcile pass over a started run: what it read and what it will write."""

    run: JSON
    plan: PinnedPlan
    #: The run's pods by name. Cached ones are the informer store's own objects (I9,
    #: :meth:`RunReads.pods_of`): read them, never edit them (copy first).
    pods: dict[str, JSON]
    now: datetime
    results: list[JSON]
    delete_after_write: list[str] = field(default_factory=list)
    #: Rendezvous Services of settled Pair/Group attempts, deleted after the status write.
    services_after_write: list[str] = field(default_factory=list)
    deliveries: list[Delivery] = field(default_factory=list)
    events: list[tuple[str, str, str]] = field(default_factory=list)
    launched: set[str] = field(default_factory=set)
    #: Pods to create once the cordons they need are written (see :class:`Launch`).
    planned: list[Launch] = field(default_factory=list)
    #: Node-scope cordons the walk decided on, written together (bounded) at the commit,
    #: before the status write that records them (I9: a walk that awaited each
    #: cordon in turn held every settled result of the pass back by two patches a launch).
    cordons: list[tuple[PlannedTest, str]] = field(default_factory=list)
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
    #: The phase this pass ended the run with (its status write was the verdict).
    ended: Phase | None = None
    _index: dict[tuple[str, tuple[str, ...]], int] = field(default_factory=dict)
    #: ``results`` decoded, position for position: each result is parsed once per pass
    #: (and again only when the pass replaces it without a new state).
    _states: list[TestResultState] = field(default_factory=list)
    _required: dict[str, bool] = field(default_factory=dict)
    _busy: set[str] | None = None
    #: The plan's Pair/Group units by test label, built on first need (:meth:`busy`).
    _links: dict[str, tuple[Unit, ...]] | None = None
    _stops: bool | None = None
    #: Runner logs read ahead of the walk, concurrently (pod name -> (pod UID, read)):
    #: the walk judges each pod in order, but need not wait for each read in turn.
    prefetched: dict[str, tuple[str, asyncio.Task[Any]]] = field(default_factory=dict)
    #: Link blame's re-pairs this run has planned (``repairs.py``): (diagnostic test,
    #: unit). Their results sit among ``results`` only while a pass runs; every status
    #: write keeps them in ``status.linkBlame`` instead (:meth:`judged_results`).
    repair_units: list[tuple[PlannedTest, Unit]] = field(default_factory=list)
    #: The names a re-pair result may carry (never a planned test's): never required.
    diagnostic: frozenset[str] = frozenset()
    #: The run's index (``openunits.py``) as of this pass's start or its last accepted
    #: write; None: built here from ``results``, which then hold every result.
    index: OpenUnits | None = None
    #: The settled results this pass has not read (only ``status.packedResults`` holds
    #: them), decoded: never also in ``results``. Empty once :meth:`read_every_result`.
    _packed: Mapping[Identity, TestResultState] = field(default_factory=dict)
    #: Units pending in ``index`` that this pass gave a result.
    _claimed: set[Identity] = field(default_factory=set)
    #: Nodes of open results in ``results`` (count of results naming each).
    _open_nodes: Counter[str] = field(default_factory=Counter)
    #: Nodes each live pod holds (E8, F1/F4), and how many live pods hold each node.
    _pod_holds: dict[str, frozenset[str]] = field(default_factory=dict)
    _held_by_pods: Counter[str] = field(default_factory=Counter)
    #: ``results`` hold every result of the status (:meth:`read_every_result`).
    _read_all: bool = False

    def __post_init__(self) -> None:
        planned = {test.name for test in self.plan.tests}
        self.diagnostic = frozenset(
            repair_test(test).name
            for test in self.plan.tests
            if test.scope in ("Pair", "Group") and repair_test(test).name not in planned
        )
        self._required = {test.name: test.required for test in self.plan.tests}
        self._required.update(dict.fromkeys(self.diagnostic, False))
        if self.index is None:
            self.index = OpenUnits.over(self.run, PlanShape.of(self.plan), self.results)
        self._packed = self.index.packed
        self._read_all = self.index.reads_all
        self._reindex()
        self._count_pods()

    def _reindex(self) -> None:
        """``_index``, ``_states`` and the open nodes, from ``results``."""
        self._index = {identity(r): position for position, r in enumerate(self.results)}
        self._states = [self._decode(r) for r in self.results]
        self._open_nodes = Counter()
        for result in self.results:
            self._count_open(result, 1)
        self._busy = None
        self._stops = None

    def _count_open(self, result: Mapping[str, Any], sign: int) -> None:
        if result.get("phase") == str(Phase.RUNNING):
            for node in result.get("nodes") or []:
                self._open_nodes[str(node)] += sign
                if self._open_nodes[str(node)] <= 0:
                    del self._open_nodes[str(node)]

    def _decode(self, result: JSON) -> TestResultState:
        required = self.required(str(result.get("name")))
        if self.index is None:
            return wire.state_from_wire(result, required=required)
        return self.index.state_of(result, required=required)

    @staticmethod
    def _identity(result: Mapping[str, Any]) -> tuple[str, tuple[str, ...]]:
        return identity(result)

    @property
    def shape(self) -> PlanShape:
        """The plan's units (decoded once per plan, by the index)."""
        assert self.index is not None
        return self.index.shape

    @property
    def prior(self) -> Mapping[str, bool]:
        """``status.priorUnschedulable`` (E12's restore record), read once per index."""
        assert self.index is not None
        return self.index.prior

    def read_every_result(self) -> None:
        """Hold every result of the status, packed ones included (as a restarted manager
        reads them): for a caller that asks about a settled unit, or settles the rest."""
        self._read_all = True
        if not self._packed:
            return
        packed = self.view.stored_status.get(status_layout.PACKED_KEY)
        records = status_layout.unpack_records(packed)
        held = set(self._index)
        self.results = [dict(r) for r in records if identity(r) not in held] + self.results
        self._packed = {}
        self._reindex()

    @property
    def reads_every_result(self) -> bool:
        """Whether ``results`` hold every result of the status (read as before)."""
        return self._read_all

    def held(self) -> dict[Identity, tuple[JSON, TestResultState]]:
        """Every result this pass holds, link blame's re-pairs left out (what a status
        write sends): identity -> (result, state)."""
        return {
            identity(r): (r, s)
            for r, s in zip(self.results, self._states, strict=True)
            if str(r.get("name", "")) not in self.diagnostic
        }

    def rebase(self, index: OpenUnits) -> None:
        """After an accepted write: ``index`` is the run's index now. Results it packed
        leave ``results`` (the status holds them packed: a later write of this pass
        need not send them again), and nothing is claimed any more."""
        self.index = index
        self._packed = index.packed
        self._claimed = set()
        if any(identity(r) in index.packed for r in self.results):
            self.results = [r for r in self.results if identity(r) not in index.packed]
            self._reindex()

    @property
    def view(self) -> RunView:
        """Typed reads of the run as this pass holds it (after its writes, too)."""
        return RunView(self.run)

    @property
    def status(self) -> JSON:
        """The status dict this pass edits and writes."""
        return self.view.status

    def find(self, test: str, nodes: Sequence[str]) -> int | None:
        key = (test, tuple(nodes))
        position = self._index.get(key)
        if position is None and key in self._packed:
            self.read_every_result()  # a settled unit asked about: read it, as before
            position = self._index.get(key)
        return position

    def result(self, test: str, nodes: Sequence[str]) -> JSON | None:
        position = self.find(test, nodes)
        return self.results[position] if position is not None else None

    def execution(self, index: int, test: PlannedTest, unit: Unit) -> Execution:
        """The unit's current attempt, from the result and state this pass holds."""
        position = self.find(test.name, unit.nodes)
        result = self.results[position] if position is not None else None
        state = self._states[position] if position is not None else None
        # G5: elided segment attempts keep their numbers, so a pod name is never reused.
        attempt = wire.next_attempt_number(result)
        view = self.view
        return Execution(
            test_index=index,
            test=test,
            unit=unit,
            result=result,
            state=state,
            attempt=attempt,
            trigger=(
                state.next_trigger(segmented=soak.segmented(test))
                if state is not None
                else Trigger.INITIAL
            ),
            pod_name=pod_name(
                run_name=view.name,
                run_uid=view.uid,
                test_index=index,
                node=unit.lead_node,
                attempt=attempt,
            ),
            flight=wire.in_flight(result) if result is not None else None,
        )

    def put(self, result: JSON, state: TestResultState | None = None) -> None:
        """Keep ``result``; ``state`` is its decoded form when the caller has it (the
        verdict package's answer), else it is decoded here, once."""
        key = identity(result)
        if key not in self._index and key in self._packed:
            self.read_every_result()
        decoded = state if state is not None else self._decode(result)
        index = self._index.get(key)
        before: TestResultState | None = None
        if index is None:
            self._index[key] = len(self.results)
            self.results.append(result)
            self._states.append(decoded)
            if self.pending_in_index(key):
                self._claimed.add(key)
        else:
            self._count_open(self.results[index], -1)
            before = self._states[index]
            self.results[index] = result
            self._states[index] = decoded
        if self._stops is not None:
            # D7 is "any required result Failed": decided again only when the result
            # replaced was one that stopped the run.
            if before is not None and fail_fast_stops([before]):
                self._stops = None
            elif fail_fast_stops([decoded]):
                self._stops = True
        self._count_open(result, 1)
        self._busy = None
        self.changed = True

    def pending_in_index(self, key: Identity) -> bool:
        """Whether the index has ``key`` as a planned unit with no result in the status."""
        assert self.index is not None
        found = self.shape.locate(key)
        if found is None:
            return False
        pending = self.index.pending[found[0]]
        at = bisect.bisect_left(pending, found[1])
        return at < len(pending) and pending[at] == found[1]

    def _pending(self, test_index: int) -> list[int]:
        """Ascending positions of the units of ``test_index`` with no result: pending in
        the index, and given none by this pass."""
        assert self.index is not None
        pending = self.index.pending[test_index]
        if not self._claimed:
            return pending
        name = self.plan.tests[test_index].name
        positions = self.shape.positions[test_index]
        claimed = {positions.get(nodes) for test, nodes in self._claimed if test == name}
        return [p for p in pending if p not in claimed]

    def unsettled(self, test_index: int) -> list[int]:
        """Ascending positions of the units of ``test_index`` not settled now: with no
        result, or with an open result here (a packed result is settled)."""
        merged = list(self._pending(test_index))
        for position in self.open_positions(test_index):
            at = bisect.bisect_left(merged, position)
            if at == len(merged) or merged[at] != position:
                merged.insert(at, position)
        return merged

    def has_unsettled(self, test_index: int) -> bool:
        return bool(self._pending(test_index)) or bool(self.open_positions(test_index))

    def open_positions(self, test_index: int) -> list[int]:
        """Ascending positions of the units of ``test_index`` whose result here is open."""
        test = self.plan.tests[test_index]
        positions = self.shape.positions[test_index]
        found = (
            positions.get(tuple(str(n) for n in r.get("nodes") or []))
            for r in self.results
            if r.get("name") == test.name and r.get("phase") == str(Phase.RUNNING)
        )
        return sorted({p for p in found if p is not None})

    def pending_with_pods(self, test_index: int) -> list[int]:
        """Ascending positions of the Node units of ``test_index`` with no result whose
        first attempt's pod this pass holds: units to step, not to launch."""
        assert self.index is not None
        first = self.index.first_pods
        found = (first.get(name) for name in self.pods)
        hits = {hit[1] for hit in found if hit is not None and hit[0] == test_index}
        if not hits:
            return []
        pending = self._pending(test_index)
        out = []
        for position in sorted(hits):
            at = bisect.bisect_left(pending, position)
            if at < len(pending) and pending[at] == position:
                out.append(position)
        return out

    def settled_everywhere(self) -> bool:
        """No planned unit is open or without a result (D6's "nothing is left")."""
        return not any(self.has_unsettled(i) for i in range(len(self.plan.tests)))

    def judged_results(self) -> list[JSON]:
        """``results`` without link blame's re-pairs: what ``status.results`` holds, so
        the node verdict, the run's phase, its counters and certification never see a
        diagnostic execution (F10)."""
        return [r for r in self.results if str(r.get("name", "")) not in self.diagnostic]

    def judged_states(self) -> list[TestResultState]:
        """:meth:`states` of :meth:`judged_results` and of the packed results."""
        return [*self._packed.values(), *self._judged_held()]

    def _judged_held(self) -> list[TestResultState]:
        return [
            state
            for result, state in zip(self.results, self._states, strict=True)
            if str(result.get("name", "")) not in self.diagnostic
        ]

    def tally(self) -> Counters:
        """D5's counts over every judged result (``glimmer.verdict.count``): the packed
        results' counts, kept by the index, plus those of the results held here."""
        assert self.index is not None
        held = count(self._judged_held())
        if not self._packed:
            return held
        packed = self.index.tally()
        return Counters(
            passed=packed.passed + held.passed, failed=packed.failed + held.failed,
            errored=packed.errored + held.errored, skipped=packed.skipped + held.skipped,
        )  # fmt: skip

    def add_repair_unit(self, test: PlannedTest, unit: Unit) -> None:
        """A re-pair this pass planned or found: its pods hold its nodes (:meth:`busy`)."""
        if (test, unit) not in self.repair_units:
            self.repair_units.append((test, unit))
            self._links = None
            self._count_pods()

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
            assert self.index is not None
            # D7 is "any required result Failed": the packed results' answer (kept by
            # the index) or that of the results held here.
            packed = bool(self._packed) and self.index.stops()
            self._stops = packed or fail_fast_stops(self._states)
        return self._stops

    def add_pod(self, pod: JSON) -> None:
        name = ObjectView(pod).name
        if self.pods.get(name) is pod:
            return
        self.pods[name] = pod
        self._hold(name, pod)

    def forget_pod(self, name: str) -> None:
        """A pod found not to be ours: it holds nothing for this run and is never read."""
        self.pods.pop(name, None)
        self.foreign.add(name)
        self._hold(name, None)

    def replace_pods(self, pods: Sequence[JSON]) -> None:
        """The run's pods as a live list shows them (foreign ones stay forgotten)."""
        named = ((ObjectView(p).name, p) for p in pods)
        self.pods = {name: p for name, p in named if name not in self.foreign}
        self.pods_cached = False
        self._count_pods()

    def _count_pods(self) -> None:
        """Every pod's hold (E8), from ``pods``."""
        self._pod_holds = {}
        self._held_by_pods = Counter()
        for name, pod in self.pods.items():
            self._hold(name, pod)

    def _hold(self, name: str, pod: Mapping[str, Any] | None) -> None:
        """``name``'s hold is now ``pod``'s (None: it holds nothing)."""
        before = self._pod_holds.pop(name, frozenset())
        for node in before:
            self._held_by_pods[node] -= 1
            if self._held_by_pods[node] <= 0:
                del self._held_by_pods[node]
        nodes = self._holds(name, pod) if pod is not None else frozenset()
        if nodes:
            self._pod_holds[name] = nodes
            self._held_by_pods.update(nodes)
        if nodes or before:
            self._busy = None

    def _holds(self, name: str, pod: Mapping[str, Any]) -> frozenset[str]:
        """The nodes a live ``pod`` holds: its own, and a link unit's others (E8)."""
        assert self.index is not None
        live, node, linked = self.index.pod_facts(name, pod)
        if not live:
            return frozenset()
        nodes = {node, *self._link_unit_nodes(pod, node)} if linked else {node}
        nodes.discard("")
        return frozenset(nodes)

    def _link_unit_nodes(self, pod: Mapping[str, Any], node: str) -> set[str]:
        """Every node of the Pair or Group unit ``pod`` is a member of (its role or rank
        label says it is one), found by its test label and node; none for a Node pod."""
        pod_labels = ObjectView(pod).labels
        if names.PAIR_ROLE_LABEL not in pod_labels and names.RANK_LABEL not in pod_labels:
            return set()
        if self._links is None:
            self._links = _link_units(self.plan)
            for test, unit in self.repair_units:
                key = label_value(test.name)
                self._links[key] = (*self._links.get(key, ()), unit)
        held: set[str] = set()
        for unit in self._links.get(str(pod_labels.get(names.TEST_LABEL, "")), ()):
            if node in unit.nodes:
                held.update(unit.nodes)
        return held

    def states(self) -> list[TestResultState]:
        """Every result's decoded state, packed ones included (no parsing: kept in step
        by ``put``, and by the index for the packed results)."""
        return [*self._packed.values(), *self._states]

    def busy(self) -> set[str]:
        """E8: nodes with a live owned pod plus every node of every open result.

        A live pod of a Pair or Group unit holds every node of its unit (F1, F4): the
        unit's result opens only once its lead pod has started, so between the lead's
        creation and its start (and while a settled unit's last pods are going) the
        client's or workers' nodes would otherwise look idle, be released and be
        counted free by ``maxConcurrentNodes`` (E9) while the unit is in flight."""
        if self._busy is not None:
            return set(self._busy)
        # Kept in step by put/add_pod/forget_pod (a packed result is settled: it holds
        # nothing), so this costs the nodes held, not the run's pods and results.
        nodes = {*self._held_by_pods, *self._open_nodes, *self.launched}
        nodes.discard("")
        self._busy = nodes
        return set(nodes)


def _link_units(plan: PinnedPlan) -> dict[str, tuple[Unit, ...]]:
    """The Pair and Group units of ``plan`` by the test label their pods carry."""
    units: dict[str, tuple[Unit, ...]] = {}
    for index, test in enumerate(plan.tests):
        if test.scope in ("Pair", "Group"):
            key = label_value(test.name)
            units[key] = units.get(key, ()) + units_of_test(plan, index)
    return units


#: What a link-blame re-pair's result is named: its test's name and this suffix (a
#: ConfigMap-key character no Kubernetes object name has, so never a planned name).
REPAIR_SUFFIX = "_repair"


def repair_test(test: PlannedTest) -> PlannedTest:
    """The diagnostic copy of a Pair (Group) test a re-pair (probe) runs (F10, I44): the
    same spec, its own name, never required."""
    return PlannedTest(name=test.name + REPAIR_SUFFIX, required=False, spec=test.spec,
                       axes=test.axes, parent=test.parent)  # fmt: skip


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
    soak.pin(result, test)
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
