"""The open units of a run: what a pass must look at, kept between its passes.

A pass used to walk every unit of the plan and decode every result of the status, so
a run of N units cost O(N) a pass and O(N^2) in all. What a pass can change is far
less: the units still unsettled (in flight, or pending a launch) and the results in
``status.results``. The settled results in ``status.packedResults`` (most of a large
run, docs/status-shards.md) are never stepped again; a pass only counts them. So this
index keeps, per run:

- ``pending``: per test, the positions of the units with no result anywhere in the
  status (ascending: plan order), and the attempt-1 pod name of each Node one (a pod
  under it makes the unit one to step, however the pod got there);
- ``packed``: the decoded state of every result only ``status.packedResults`` holds,
  with their D5 counts and D7 answer (decided by ``glimmer.verdict``, once per change);
- ``memo``: the decoded state of each ``status.results`` entry, reused only for an
  entry equal to the one it was decoded from (a pure cache: same JSON, same state).

It is a cache, never the checkpoint (E1, H): it is built from the status and trusted
only for the exact object it describes, the same run UID, resourceVersion and pinned
plan text. Each of these makes :meth:`OpenUnitsCache.get` build it again from the
status: another resourceVersion (a write by anyone else, a kubectl edit, a metadata
patch, the start, a cache showing an older version), another plan text, another UID,
a manager restart (nothing is kept). It is advanced only from this process's own
accepted status write (:meth:`OpenUnits.advanced`), from what that write sent and
the apiserver answered; a pass that raised, met a 409 or wrote nothing leaves it as it
was. A packed status that does not read cleanly (an unreadable group, a unit packed
twice or also listed in ``status.results``) packs nothing into the index: the pass then
reads every result, as before.
"""

from __future__ import annotations

import bisect
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from glimmer.api import status_layout
from glimmer.controllers.kit import names
from glimmer.controllers.kit.view import ObjectView, RunView
from glimmer.controllers.run import podstate, wire
from glimmer.plan import PinnedPlan, Unit, pod_name, units_of_test
from glimmer.verdict import Counters, TestResultState, count, fail_fast_stops

JSON = dict[str, Any]
#: What a result is the result of, as a pass indexes it: its test name and nodes.
Identity = tuple[str, tuple[str, ...]]

#: Runs whose index one manager keeps (most recently used); past it the oldest goes
#: and is built again from its status if its run comes back.
MAX_TRACKED_RUNS: Final = 64


def identity(result: Mapping[str, Any]) -> Identity:
    return (str(result.get("name", "")), tuple(str(n) for n in result.get("nodes") or []))


def listed_results(status: Mapping[str, Any]) -> list[JSON]:
    """``status.results`` as :func:`~glimmer.api.status_layout.status_results` reads it
    (each a dict; anything else dropped), without the packed records."""
    raw = status.get("results")
    return [r for r in raw if isinstance(r, dict)] if isinstance(raw, list) else []


def packed_member_count(status: Mapping[str, Any]) -> int:
    """How many members ``status.packedResults`` lists (readable or not)."""
    groups = status.get(status_layout.PACKED_KEY)
    if not isinstance(groups, list):
        return 0
    members = (g.get("nodes") for g in groups if isinstance(g, Mapping))
    return sum(len(nodes) for nodes in members if isinstance(nodes, list))


@dataclass(frozen=True)
class PlanShape:
    """A plan's units, decoded once per plan (module docstring)."""

    plan: PinnedPlan
    units: tuple[tuple[Unit, ...], ...]
    #: Per test: a unit's nodes -> its position in ``units``.
    positions: tuple[dict[tuple[str, ...], int], ...]

    @classmethod
    def of(cls, plan: PinnedPlan) -> PlanShape:
        units = tuple(units_of_test(plan, i) for i in range(len(plan.tests)))
        positions = tuple({u.nodes: p for p, u in enumerate(us)} for us in units)
        return cls(plan=plan, units=units, positions=positions)

    def locate(self, ident: Identity) -> tuple[int, int] | None:
        """(test index, position) of the planned unit ``ident`` names, if any."""
        name, nodes = ident
        for index, test in enumerate(self.plan.tests):
            if test.name == name:
                position = self.positions[index].get(nodes)
                return None if position is None else (index, position)
        return None


@dataclass
class OpenUnits:
    """One run's index (module docstring): valid for ``uid`` at ``version`` only."""

    uid: str
    version: str
    plan_text: str
    shape: PlanShape
    #: Per test: ascending positions of the units with no result in the status.
    pending: list[list[int]]
    #: Attempt-1 pod name of each pending Node unit -> (test index, position).
    first_pods: dict[str, tuple[int, int]]
    #: Results only ``status.packedResults`` holds, decoded.
    packed: dict[Identity, TestResultState]
    #: ``status.results`` entries decoded: identity -> (the entry, its state).
    memo: dict[Identity, tuple[JSON, TestResultState]] = field(default_factory=dict)
    #: ``status.priorUnschedulable`` as read (it is written once, at the start).
    prior: dict[str, bool] = field(default_factory=dict)
    #: The packed status did not read cleanly: a pass reads every result.
    reads_all: bool = False
    #: Per pod name: (the pod object last seen, live, pinned node, a link member), so a
    #: pod the cache did not replace since is not looked into again (the informer
    #: replaces an object on each event, never edits it).
    pods: dict[str, tuple[Mapping[str, Any], bool, str, bool]] = field(default_factory=dict)
    _tally: Counters | None = None
    _stops: bool | None = None

    # --- building ------------------------------------------------------------------------

    @classmethod
    def build(cls, run: Mapping[str, Any], shape: PlanShape) -> OpenUnits:
        """From the status alone (the checkpoint): what a restarted manager would hold."""
        status = RunView(run).stored_status
        listed = listed_results(status)
        listed_ids = {identity(r) for r in listed}
        required = {t.name: t.required for t in shape.plan.tests}
        records = status_layout.unpack_records(status.get(status_layout.PACKED_KEY))
        packed: dict[Identity, TestResultState] = {}
        clean = len(records) == packed_member_count(status)
        for record in records:
            ident = identity(record)
            if not status_layout.packable(record) or ident in packed or ident in listed_ids:
                clean = False
            packed[ident] = wire.state_from_wire(record, required=required.get(ident[0], True))
        index = cls._over(run, shape, listed_ids | packed.keys())
        if clean:
            index.packed = packed
        else:
            index.reads_all = True  # a pass reads every result (status_results), as before
        return index

    @classmethod
    def over(cls, run: Mapping[str, Any], shape: PlanShape, results: Sequence[JSON]) -> OpenUnits:
        """For a pass given every result itself (``results``), nothing packed."""
        index = cls._over(run, shape, {identity(r) for r in results})
        index.version = ""  # never kept: it describes those results, not a stored status
        return index

    @classmethod
    def _over(cls, run: Mapping[str, Any], shape: PlanShape, held: set[Identity]) -> OpenUnits:
        view = RunView(run)
        pending = [
            [p for p, u in enumerate(units) if (u.test_name, u.nodes) not in held]
            for units in shape.units
        ]
        first_pods: dict[str, tuple[int, int]] = {}
        for test_index, positions in enumerate(pending):
            if shape.plan.tests[test_index].scope != "Node":
                continue
            units = shape.units[test_index]
            for position in positions:
                name = pod_name(run_name=view.name, run_uid=view.uid, test_index=test_index,
                                node=units[position].lead_node, attempt=1)  # fmt: skip
                first_pods[name] = (test_index, position)
        return cls(
            uid=view.uid,
            version=view.resource_version,
            plan_text=view.plan_text or "",
            shape=shape,
            pending=pending,
            first_pods=first_pods,
            packed={},
            prior=view.prior_unschedulable,
        )

    def describes(self, run: Mapping[str, Any]) -> bool:
        """Whether this index is for exactly ``run`` as read (module docstring)."""
        view = RunView(run)
        return (
            view.uid == self.uid
            and bool(self.version)
            and view.resource_version == self.version
            and (view.plan_text or "") == self.plan_text
        )

    # --- what a pass reads -------------------------------------------------------------

    def tally(self) -> Counters:
        """D5's counts of the packed results (``glimmer.verdict.count``)."""
        if self._tally is None:
            self._tally = count(self.packed.values())
        return self._tally

    def stops(self) -> bool:
        """D7 over the packed results (``glimmer.verdict.fail_fast_stops``)."""
        if self._stops is None:
            self._stops = fail_fast_stops(self.packed.values())
        return self._stops

    def state_of(self, result: JSON, *, required: bool) -> TestResultState:
        """``result``'s decoded state: the memo's when it is the very same JSON."""
        ident = identity(result)
        hit = self.memo.get(ident)
        if hit is not None and hit[0] == result and hit[1].required == required:
            return hit[1]
        state = wire.state_from_wire(result, required=required)
        self.memo[ident] = (result, state)
        return state

    def pod_facts(self, name: str, pod: Mapping[str, Any]) -> tuple[bool, str, bool]:
        """(live, pinned node, a Pair/Group member) of ``pod`` (named ``name``), looked
        into once per version of it."""
        seen = self.pods.get(name)
        if seen is not None and seen[0] is pod:
            return seen[1], seen[2], seen[3]
        labels = ObjectView(pod).labels
        linked = names.PAIR_ROLE_LABEL in labels or names.RANK_LABEL in labels
        facts = (podstate.live(pod), podstate.pinned_node(pod), linked)
        self.pods[name] = (pod, *facts)
        return facts

    # --- after an accepted write -------------------------------------------------------

    def advanced(
        self,
        answer: Mapping[str, Any],
        *,
        held: Mapping[Identity, tuple[JSON, TestResultState]],
        claimed: Iterable[Identity],
    ) -> OpenUnits | None:
        """This index after this process's write was accepted: ``answer`` is the
        apiserver's object, ``held`` every result the pass held as it sent the write
        (identity -> result, state; link blame's re-pairs left out), ``claimed`` the
        pending units the pass gave a result. None when the answer is not what that
        write can make of this index (the next pass then builds it from the status)."""
        if self.reads_all or not self.version:
            return None
        view = RunView(answer)
        status = view.stored_status
        listed = listed_results(status)
        listed_ids = {identity(r) for r in listed}
        if not listed_ids <= held.keys() or listed_ids & self.packed.keys():
            return None
        moved = {i: held[i][1] for i in held if i not in listed_ids and i not in self.packed}
        packed = {**self.packed, **moved} if moved else self.packed
        if packed_member_count(status) != len(packed):
            return None  # the write packed something else than what left the list
        pending = [list(p) for p in self.pending]
        first_pods = self.first_pods
        for ident in claimed:
            found = self.shape.locate(ident)
            if found is None:
                return None
            test_index, position = found
            at = bisect.bisect_left(pending[test_index], position)
            if at == len(pending[test_index]) or pending[test_index][at] != position:
                return None
            del pending[test_index][at]
        memo = {}
        for result in listed:
            ident = identity(result)
            mine = held[ident]
            if mine[0] == result:
                memo[ident] = (result, mine[1])
        index = OpenUnits(
            uid=self.uid,
            version=view.resource_version,
            plan_text=self.plan_text,
            shape=self.shape,
            pending=pending,
            first_pods=first_pods,
            packed=packed,
            memo=memo,
            prior=self.prior,
            pods=self.pods,
        )
        if packed is self.packed:
            index._tally, index._stops = self._tally, self._stops
        return index if index.version else None


class OpenUnitsCache:
    """The index of each run this process reconciles (bounded, most recent last)."""

    def __init__(self, *, limit: int = MAX_TRACKED_RUNS) -> None:
        self._runs: OrderedDict[str, OpenUnits] = OrderedDict()
        self._shapes: OrderedDict[str, PlanShape] = OrderedDict()
        self._limit = limit
        #: How many indexes were built from a status (what a test of the cache reads).
        self.built = 0

    def get(self, run: Mapping[str, Any], plan: PinnedPlan) -> OpenUnits:
        """``run``'s index: the kept one if it describes ``run`` exactly, else one built
        from its status (module docstring)."""
        uid = ObjectView(run).uid
        kept = self._runs.get(uid)
        if kept is not None and kept.describes(run):
            self._runs.move_to_end(uid)
            return kept
        text = RunView(run).plan_text or ""
        shape = self._shapes.get(text)
        if shape is None or shape.plan != plan:
            shape = PlanShape.of(plan)
            self._shapes[text] = shape
            while len(self._shapes) > self._limit:
                self._shapes.popitem(last=False)
        index = OpenUnits.build(run, shape)
        if kept is not None:
            # Both are checked on every use (equal JSON, the very pod object): safe to keep.
            index.memo, index.pods = kept.memo, kept.pods
        self.built += 1
        self.put(index)
        return index

    def put(self, index: OpenUnits) -> None:
        self._runs[index.uid] = index
        self._runs.move_to_end(index.uid)
        while len(self._runs) > self._limit:
            self._runs.popitem(last=False)

    def forget(self, uid: str) -> None:
        self._runs.pop(uid, None)
