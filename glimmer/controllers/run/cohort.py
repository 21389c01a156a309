"""The run-level phase of judgement (D8): cohort-relative gates (C7-C10, docs/thresholds.md).

A relative gate compares a node with its cohort, so it cannot be judged when the node's
own result settles: its neighbours may still be running. It is judged once, when the
run's last result has settled, inside the very status write that records the verdict
(:meth:`glimmer.controllers.run.finish.Finisher.settle_verdict`), so no reader ever sees
a result that reads Passed in the verdict and Failed a moment later, and a restart
cannot see half of it. The outcome is checkpointed as ``status.cohortVerdicts``: a gate
found there is never judged again, so a re-settled verdict (a write refused for size,
then retried) keeps the judgement it made.

Every decision is :mod:`glimmer.verdict.cohort`'s; this module only gathers the
evidence (each node's NodeFingerprint digest, each settled result's metric), hands it
over and writes down what came back.

The digests are read from the (cached) NodeFingerprints on every pass of a run that has
a relative gate (:meth:`CohortJudge.observe`) and kept in memory until the verdict:
settling is synchronous, and a manager restarted between passes reads them again on
its first pass, before anything can settle.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from glimmer.api import format_time
from glimmer.api.status_layout import is_compact
from glimmer.controllers.kit import checkpoint, names
from glimmer.controllers.kit.names import fingerprint_name
from glimmer.controllers.kit.view import FingerprintView, RunView
from glimmer.controllers.run import wire
from glimmer.controllers.run.context import Part, RunContext
from glimmer.plan import PinnedPlan, PlannedTest
from glimmer.plan import spec as specs
from glimmer.verdict import Phase, TestResultState, run_phase
from glimmer.verdict.cohort import (
    CohortSpecError,
    RelativeGate,
    judge_states,
    relative_gate,
    verdict_record,
)

JSON = dict[str, Any]

#: The run status field that checkpoints every judged gate (C9).
VERDICTS_FIELD: Final = checkpoint.COHORT_VERDICTS
_NODE_SCOPE: Final = "Node"
#: Runs whose digests are kept in memory (a forgotten run's next pass reads them again).
MAX_TRACKED_RUNS: Final = 4096


@dataclass(frozen=True)
class PlannedGate:
    test: PlannedTest
    index: int
    gate: RelativeGate


def planned_gates(plan: PinnedPlan) -> list[PlannedGate]:
    """Every judgeable relative gate of the pinned plan, in plan order. A malformed one
    refused the run at start (C5), so one found here unreadable is skipped, never
    guessed at; a non-Node test's is refused the same way."""
    found: list[PlannedGate] = []
    for test in plan.tests:
        if test.scope != _NODE_SCOPE:
            continue
        try:
            entries = specs.thresholds(test.spec)
        except specs.SpecError:
            continue
        for index, entry in enumerate(entries):
            relative = entry.get("relativeTo")
            if not isinstance(relative, Mapping):
                continue
            metric, comparison = entry.get("metric"), entry.get("comparison")
            try:
                gate = relative_gate(metric=str(metric), comparison=str(comparison),
                                     relative_to=relative)  # fmt: skip
            except CohortSpecError:
                continue
            found.append(PlannedGate(test=test, index=index, gate=gate))
    return found


def judged_keys(status: Mapping[str, Any]) -> set[tuple[str, int]]:
    """(test, threshold index) of every gate ``status.cohortVerdicts`` already holds."""
    keys: set[tuple[str, int]] = set()
    for record in status.get(VERDICTS_FIELD) or []:
        if isinstance(record, Mapping):
            index = record.get("thresholdIndex")
            if isinstance(index, int):
                keys.add((str(record.get("test")), index))
    return keys


@dataclass
class Settled:
    """The results and their states after the cohort judgement, and the new records."""

    results: list[JSON]
    states: list[TestResultState]
    records: list[JSON]


def judge_results(
    plan: PinnedPlan,
    *,
    results: list[JSON],
    states: list[TestResultState],
    digests: Mapping[str, str | None],
    judged: set[tuple[str, int]],
    at: str,
) -> Settled:
    """Every relative gate not yet ``judged`` over the settled ``results`` (position for
    position with ``states``). A compact record (its evidence in a shard) is offered
    without a value and never rewritten: a record that disagreed with its shard would
    read Error (docs/status-shards.md)."""
    results, states = list(results), list(states)
    records: list[JSON] = []
    for planned in planned_gates(plan):
        if (planned.test.name, planned.index) in judged:
            continue
        where: dict[str, int] = {}
        members: dict[str, TestResultState | None] = {}
        for position, result in enumerate(results):
            nodes = result.get("nodes")
            if result.get("name") != planned.test.name or not isinstance(nodes, list):
                continue
            if len(nodes) != 1 or not isinstance(nodes[0], str):
                continue
            if is_compact(result):
                members[nodes[0]] = None
                continue
            where[nodes[0]] = position
            members[nodes[0]] = states[position]
        judgements, changed = judge_states(
            planned.gate, index=planned.index, states=members, digests=digests
        )
        records += [
            verdict_record(j, test=planned.test.name, index=planned.index, at=at)
            for j in judgements
        ]
        for node, after in changed.items():
            slot = where[node]
            states[slot] = after
            results[slot] = wire.state_to_wire(results[slot], after)
    return Settled(results=results, states=states, records=records)


def judged_phase(phase: Phase, *, before: Sequence[TestResultState],
                 after: Sequence[TestResultState]) -> Phase:  # fmt: skip
    """The run's phase after the judgement: D6 over the judged results where the phase
    was D6's to begin with; a phase some other rule imposed (a deadline's Error, a
    cancel) stands."""
    if phase is run_phase(before):
        return run_phase(after)
    return phase


class CohortJudge(Part):
    """Reads the digests a run's cohorts are made of, and judges them at the verdict."""

    def __init__(self, ctx: RunContext) -> None:
        super().__init__(ctx)
        #: Run UID -> node -> its NodeFingerprint digest ("" while uncaptured).
        self._digests: dict[str, dict[str, str]] = {}

    async def observe(self, run: Mapping[str, Any], plan: PinnedPlan) -> None:
        """Read each target's fingerprint digest, for a run with a relative gate."""
        if not planned_gates(plan):
            return
        view = RunView(run)
        seen: dict[str, str] = {}
        for node in plan.targets:
            fingerprint = await self.reads.get(
                names.FINGERPRINTS,
                fingerprint_name(node),
                namespace=self.options.operator_namespace,
            )
            seen[node] = FingerprintView(fingerprint).digest if fingerprint is not None else ""
        self._digests.pop(view.uid, None)
        self._digests[view.uid] = seen  # newest last
        while len(self._digests) > MAX_TRACKED_RUNS:  # bounded memory, oldest first
            self._digests.pop(next(iter(self._digests)))

    def forget(self, uid: str) -> None:
        self._digests.pop(uid, None)

    def settle(
        self, run: JSON, plan: PinnedPlan, *, results: list[JSON],
        states: list[TestResultState], phase: Phase,
    ) -> tuple[list[JSON], list[TestResultState], Phase]:  # fmt: skip
        """The results, states and phase after the run-level judgement (C9), with its
        records appended to ``status.cohortVerdicts``; a cancelled run is not judged."""
        if phase is Phase.CANCELLED:
            return results, states, phase
        view = RunView(run)
        status = view.status
        digests: dict[str, str | None] = dict(self._digests.get(view.uid, {}))
        settled = judge_results(plan, results=results, states=states, digests=digests,
                                judged=judged_keys(status),
                                at=format_time(self.now()))  # fmt: skip
        if not settled.records:
            return results, states, phase
        status[VERDICTS_FIELD] = [*(status.get(VERDICTS_FIELD) or []), *settled.records]
        return (settled.results, settled.states,
                judged_phase(phase, before=states, after=settled.states))  # fmt: skip
