"""Link blame's re-pairs (F10-F13, docs/link-blame.md): the operator's side.

With ``spec.linkBlame`` set, once every planned unit of the run has settled (the run's
own verdict is then complete, so a re-pair can never change it nor delay a planned
test), each Pair unit that settled **Failed** gets an entry in ``status.linkBlame``:
each side is re-paired with a node whose own unit of the same test Passed
(:func:`~glimmer.verdict.blame.choose_partner`), the side as server and the partner as
client, and the two settled re-pairs are attributed by
:func:`~glimmer.verdict.blame.attribute` (the one rule; nothing is decided here).

A re-pair is an extra execution of the same Pair test, stepped by the very code that
steps a planned unit (:class:`~glimmer.controllers.run.links.Links`): its own Service
and pods (names tagged with its nodes), both nodes cordoned first and released after,
its evidence read and judged through ``judge_attempt``, its attempts recorded, Error
retried under the run's ``retryOnErrorLimit``. It is diagnostic: its test is a copy
named ``<test>_repair`` and never required, and its result is kept in its entry's
``repairs[].result``, never in ``status.results``, so the node verdict, the run's
phase, counters and certification never see it (a bad node failing again beside a
healthy partner does not fail the partner).

Bounded: at most ``maxExtraPairs`` re-pairs per run, planned two at a time (a Pair the
budget cannot cover whole is undetermined, never half-measured); none without a
partner; none that could still be running at the run's ``deadlineSeconds`` (checked
again at each launch, with the worst case: the pod's overdue point plus the server's
report grace). What was skipped, and why, is recorded on the entry.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from glimmer.api import format_time, parse_time
from glimmer.controllers.kit.view import ObjectView
from glimmer.controllers.run.links import Links, link_attempt
from glimmer.controllers.run.passes import REPAIR_SUFFIX, Pass, Step, repair_test
from glimmer.controllers.run.reads import RunReads
from glimmer.engine import NODES
from glimmer.plan import PinnedPlan, PlannedTest, Unit, overdue_after_seconds, units_of_test
from glimmer.verdict import Phase, Provenance
from glimmer.verdict.blame import (
    BUDGET,
    DEADLINE,
    NO_PARTNER,
    UNDETERMINED,
    Probe,
    Repair,
    attribute,
    bisect,
    choose_partner,
    healthy_partners,
)
from glimmer.verdict.links import SERVER_REPORT_GRACE_SECONDS

JSON = dict[str, Any]

STATUS_KEY: Final = "linkBlame"
#: The other side of a link whose own side could not be re-paired is not run: one
#: re-pair alone attributes nothing.
ALONE: Final = "the other side cannot be re-paired, and one re-pair alone attributes nothing"


def config(run_spec: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """``spec.linkBlame`` when set (an object), else None."""
    value = run_spec.get(STATUS_KEY)
    return value if isinstance(value, Mapping) else None


def max_extra_pairs(block: Mapping[str, Any]) -> int:
    value = block.get("maxExtraPairs", 2)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _phase(result: Mapping[str, Any] | None) -> Phase | None:
    if result is None:
        return None
    phase = Phase.parse_or_none(result.get("phase"))
    return None if phase in (None, Phase.RUNNING, Phase.PENDING) else phase


def _provenance(result: Mapping[str, Any] | None) -> Provenance:
    text = (result or {}).get("provenance")
    return Provenance(text) if text in tuple(Provenance) else Provenance.UNKNOWN


def rep_nodes(rep: Mapping[str, Any]) -> tuple[str, ...] | None:
    """The nodes a recorded re-pair (Pair: side, partner) or probe (Group: its ranks)
    ran over; None when it did not run."""
    if rep.get("skipped"):
        return None
    nodes = rep.get("nodes")
    if isinstance(nodes, list) and nodes:
        return tuple(str(n) for n in nodes)
    partner = rep.get("partner")
    return (str(rep.get("node")), str(partner)) if partner else None


def load(run_status: Mapping[str, Any], plan: PinnedPlan) -> tuple[list[JSON], list[Any]]:
    """The re-pair results stored in ``status.linkBlame`` (to sit among the pass's
    results) and their (diagnostic test, unit)s, in stored order."""
    results: list[JSON] = []
    units: list[tuple[PlannedTest, Unit]] = []
    by_name = {test.name: (index, test) for index, test in enumerate(plan.tests)}
    for entry in run_status.get(STATUS_KEY) or []:
        found = by_name.get(str(entry.get("test", "")))
        if found is None:
            continue
        index, test = found
        diag = repair_test(test)
        for rep in entry.get("repairs") or []:
            result = rep.get("result")
            nodes = rep_nodes(rep)
            if isinstance(result, Mapping) and nodes is not None:
                results.append(dict(result))
                units.append((diag, Unit(test_index=index, test_name=diag.name,
                                         scope=test.scope, nodes=nodes)))  # fmt: skip
    return results, units


def store(work: Pass) -> None:
    """Every entry's re-pair results refreshed from the pass, into ``status.linkBlame``
    (before each status write; ``status.results`` never holds them)."""
    entries = work.status.get(STATUS_KEY)
    if not entries:
        return
    for entry in entries:
        for rep in entry.get("repairs") or []:
            nodes = rep_nodes(rep)
            if nodes is None:
                continue
            result = work.result(str(entry["test"]) + REPAIR_SUFFIX, nodes)
            if result is not None:
                rep["result"] = result


def _used(entries: Sequence[Mapping[str, Any]]) -> int:
    """Re-pairs and probes this run has run or is running (the budget's count)."""
    return sum(
        1 for entry in entries for rep in entry.get("repairs") or [] if rep_nodes(rep) is not None
    )


class Repairs:
    """Plans, steps and attributes the re-pairs of a run's Failed Pair units."""

    def __init__(self, links: Links, reads: RunReads) -> None:
        self.links = links
        self.reads = reads

    # --- what is owed --------------------------------------------------------------------

    @staticmethod
    def _failed_units(work: Pass) -> list[tuple[int, PlannedTest, Unit]]:
        out: list[tuple[int, PlannedTest, Unit]] = []
        for index, test in enumerate(work.plan.tests):
            if test.scope not in ("Pair", "Group"):
                continue
            for unit in units_of_test(work.plan, index):
                if _phase(work.result(test.name, unit.nodes)) is Phase.FAILED:
                    out.append((index, test, unit))
        return out

    @staticmethod
    def _entries(work: Pass) -> list[JSON]:
        entries = work.status.get(STATUS_KEY)
        if not isinstance(entries, list):
            entries = []
            work.status[STATUS_KEY] = entries
        return entries

    def pending(self, work: Pass) -> bool:
        """Whether some Failed Pair still waits for its blame (the run is not done)."""
        if config(work.view.spec) is None:
            return False
        entries = {(e.get("test"), tuple(e.get("nodes") or [])): e
                   for e in work.status.get(STATUS_KEY) or []}  # fmt: skip
        for _, test, unit in self._failed_units(work):
            entry = entries.get((test.name, unit.nodes))
            if entry is None or not entry.get("blame"):
                return True
        return False

    # --- the step ------------------------------------------------------------------------

    async def step(self, work: Pass, *, launch: bool) -> bool:
        """Advance every owed blame; True once each has one."""
        block = config(work.view.spec)
        if block is None:
            return True
        failed = self._failed_units(work)
        if not failed:
            return True
        entries = self._entries(work)
        done = True
        for index, test, unit in failed:
            entry = next((e for e in entries if e.get("test") == test.name
                          and tuple(e.get("nodes") or []) == unit.nodes), None)  # fmt: skip
            if entry is None:
                entry = {"test": test.name, "nodes": list(unit.nodes)}
                entries.append(entry)
                work.changed = True
            if entry.get("blame"):
                continue
            if test.scope == "Group":
                if not await self._step_group(work, index, test, unit, entry, block, entries,
                                              launch=launch):  # fmt: skip
                    done = False
                continue
            diag = repair_test(test)
            if "repairs" not in entry:
                entry["repairs"] = await self._plan(work, index, test, unit, block, entries)
                work.changed = True
            settled = True
            for rep in entry["repairs"]:
                if not rep.get("partner") or rep.get("skipped"):
                    continue
                r_unit = Unit(test_index=index, test_name=diag.name, scope="Pair",
                              nodes=(str(rep["node"]), str(rep["partner"])))  # fmt: skip
                work.add_repair_unit(diag, r_unit)
                if not await self._advance(work, index, diag, r_unit, rep, launch=launch):
                    settled = False
            if settled:
                self._attribute(work, test, unit, entry)
            else:
                done = False
        return done

    async def _plan(
        self,
        work: Pass,
        index: int,
        test: PlannedTest,
        unit: Unit,
        block: Mapping[str, Any],
        entries: Sequence[Mapping[str, Any]],
    ) -> list[JSON]:
        """Both sides' re-pairs: partners chosen (F13), or each skipped with its reason."""
        a, b = unit.nodes
        sides: list[JSON] = [{"node": a}, {"node": b}]
        if repair_test(test).name not in work.diagnostic:
            why = f"a planned test is named {repair_test(test).name!r}; no re-pair can be named"
            return [dict(s, skipped=why) for s in sides]
        if max_extra_pairs(block) - _used(entries) < 2:
            return [dict(s, skipped=BUDGET) for s in sides]
        outcomes = [
            (u.nodes, _phase(work.result(test.name, u.nodes)))
            for u in units_of_test(work.plan, index)
        ]
        healthy = healthy_partners(outcomes)
        topology = await self._topology(block, (a, b, *healthy))
        partner_a = choose_partner(a, link=(a, b), healthy=healthy, topology=topology)
        partner_b = choose_partner(
            b, link=(a, b), healthy=healthy, topology=topology,
            avoid={partner_a} if partner_a else (),
        )  # fmt: skip
        if partner_a is None or partner_b is None:
            return [
                dict(side, skipped=NO_PARTNER if partner is None else ALONE)
                for side, partner in ((sides[0], partner_a), (sides[1], partner_b))
            ]
        return [dict(sides[0], partner=partner_a), dict(sides[1], partner=partner_b)]

    async def _topology(
        self, block: Mapping[str, Any], nodes: Sequence[str]
    ) -> dict[str, str] | None:
        label = block.get("topologyLabel")
        if not isinstance(label, str) or not label:
            return None
        values: dict[str, str] = {}
        for node in dict.fromkeys(nodes):
            found = await self.reads.get(NODES, node)
            value = ObjectView(found).labels.get(label) if found is not None else None
            if value:
                values[node] = str(value)
        return values

    def _deadline_short(self, work: Pass, test: PlannedTest) -> bool:
        """A re-pair launched now could still be running at the run's deadline."""
        deadline = work.view.deadline_seconds
        started = parse_time(work.view.started_at or "")
        if deadline <= 0 or started is None:
            return False
        left = deadline - (work.now - started).total_seconds()
        return left < overdue_after_seconds(test.spec) + SERVER_REPORT_GRACE_SECONDS

    async def _advance(
        self, work: Pass, index: int, diag: PlannedTest, unit: Unit, rep: JSON, *, launch: bool
    ) -> bool:
        """One step of a re-pair, as :meth:`Sweeper._unit` steps a planned link unit;
        True once it has settled (or was skipped for the deadline before it began)."""
        ex = work.execution(index, diag, unit)
        if not ex.open:
            return True
        if (
            ex.result is None
            and self._deadline_short(work, diag)
            and link_attempt(work, ex).lead.pod not in work.pods
        ):
            rep["skipped"] = DEADLINE
            work.changed = True
            return True
        for _ in range(3):
            step = await self.links.step(work, ex, launch=launch)
            if step is not Step.AGAIN:
                return step is Step.SETTLED
            ex = work.execution(index, diag, unit)
            if not ex.open:
                return True
        work.wait(1.0)
        return False

    async def _step_group(
        self,
        work: Pass,
        index: int,
        test: PlannedTest,
        unit: Unit,
        entry: JSON,
        block: Mapping[str, Any],
        entries: Sequence[Mapping[str, Any]],
        *,
        launch: bool,
    ) -> bool:
        """I44: one probe at a time, each asked of :func:`~glimmer.verdict.blame.bisect`
        once the ones before it settled; True once the entry has its blame."""
        diag = repair_test(test)
        reps: list[JSON] = entry.setdefault("repairs", [])
        for rep in reps:
            nodes = rep_nodes(rep)
            if nodes is None:
                continue
            probe = Unit(test_index=index, test_name=diag.name, scope="Group", nodes=nodes)
            work.add_repair_unit(diag, probe)
            if not await self._advance(work, index, diag, probe, rep, launch=launch):
                return False
        skipped = next((str(r["skipped"]) for r in reps if r.get("skipped")), "")
        if skipped:
            why = f"a probe was not run: {skipped}"
            original = _provenance(work.result(test.name, unit.nodes))
            self._conclude(work, test, unit, entry, UNDETERMINED, why, original)
            return True
        step = self._bisected(work, test, unit, entry)
        if step is None:
            return True
        if diag.name not in work.diagnostic:
            why = f"a planned test is named {diag.name!r}; no probe can be named"
            reps.append({"node": step[0], "nodes": list(step), "skipped": why})
        elif _used(entries) >= max_extra_pairs(block):
            reps.append({"node": step[0], "nodes": list(step), "skipped": BUDGET})
        else:
            reps.append({"node": step[0], "nodes": list(step)})
        work.changed = True
        return False  # launched (or skipped) next pass, after the write that records it

    def _bisected(
        self, work: Pass, test: PlannedTest, unit: Unit, entry: JSON
    ) -> tuple[str, ...] | None:
        """The next probe :func:`bisect` asks for, or None once it answered (recorded)."""
        probes = []
        for rep in entry.get("repairs") or []:
            nodes = rep_nodes(rep)
            if nodes is None:
                continue
            result = work.result(repair_test(test).name, nodes)
            probes.append(Probe(nodes, _phase(result), _provenance(result)))
        original = work.result(test.name, unit.nodes)
        got = bisect(unit.nodes, probes, provenance=_provenance(original))
        if isinstance(got, tuple):
            # (bisect asks each probe once: tests/unit/verdict/test_link_blame.py)
            return got
        self._conclude(work, test, unit, entry, got.blame, got.reason, got.provenance)
        return None

    @staticmethod
    def _conclude(
        work: Pass,
        test: PlannedTest,
        unit: Unit,
        entry: JSON,
        blame: str,
        reason: str,
        provenance: Provenance,
    ) -> None:
        entry.update(blame=blame, reason=reason, provenance=str(provenance))
        work.changed = True
        where = f"{test.name} on {'+'.join(unit.nodes)}"
        work.events.append(("Warning", "LinkBlamed", f"{where}: blame {blame}: {reason}"))

    def close(self, work: Pass, *, phase: Phase) -> None:
        """The run ends (``phase``) with blames still owed: each open re-pair is settled
        with the run's end (Cancelled, else Error: it was never judged), and each entry
        attributed from what settled, which names nobody (F12: unjudged evidence)."""
        by_name = {test.name: (index, test) for index, test in enumerate(work.plan.tests)}
        ended = Phase.CANCELLED if phase is Phase.CANCELLED else Phase.ERROR
        stamp = format_time(work.now)
        for entry in work.status.get(STATUS_KEY) or []:
            found = by_name.get(str(entry.get("test", "")))
            if found is None or entry.get("blame"):
                continue
            index, test = found
            nodes = tuple(str(n) for n in entry.get("nodes") or [])
            entry.setdefault("repairs", [])
            for rep in entry["repairs"]:
                rnodes = rep_nodes(rep)
                if rnodes is None:
                    continue
                name = repair_test(test).name
                result = work.result(name, rnodes)
                if result is not None and result.get("phase") == str(Phase.RUNNING):
                    settled = dict(result)
                    settled.update(phase=str(ended), finishedAt=stamp,
                                   message=f"the run ended {phase} before this re-pair "
                                   "settled; no verdict")  # fmt: skip
                    work.put(settled)
            unit = Unit(test_index=index, test_name=test.name, scope=test.scope, nodes=nodes)
            if test.scope == "Group":
                if self._bisected(work, test, unit, entry) is not None:
                    why = f"the run ended {phase} before the bisection finished"
                    original = _provenance(work.result(test.name, unit.nodes))
                    self._conclude(work, test, unit, entry, UNDETERMINED, why, original)
            elif len(nodes) == 2:
                self._attribute(work, test, unit, entry)

    def _attribute(self, work: Pass, test: PlannedTest, unit: Unit, entry: JSON) -> None:
        """F11 through the one rule; the evidence is what the entry records."""
        repairs: list[Repair] = []
        for rep in entry.get("repairs") or []:
            partner = rep.get("partner")
            result = (
                work.result(repair_test(test).name, (str(rep["node"]), str(partner)))
                if partner and not rep.get("skipped")
                else None
            )
            repairs.append(
                Repair(
                    node=str(rep.get("node", "")),
                    partner=str(partner) if partner else None,
                    phase=_phase(result),
                    provenance=_provenance(result),
                    skipped=str(rep.get("skipped") or ""),
                )
            )
        while len(repairs) < 2:
            repairs.append(Repair(node="", partner=None, phase=None, skipped=NO_PARTNER))
        original = work.result(test.name, unit.nodes)
        got = attribute(
            link=(unit.nodes[0], unit.nodes[1]),
            phase=_phase(original) or Phase.RUNNING,
            repairs=(repairs[0], repairs[1]),
            link_provenance=_provenance(original),
        )
        entry.update(blame=got.blame, reason=got.reason, provenance=str(got.provenance))
        work.changed = True
        where = f"{test.name} on {'+'.join(unit.nodes)}"
        work.events.append(("Warning", "LinkBlamed", f"{where}: blame {got.blame}: {got.reason}"))
