"""Reading a finished BurnInRun for the node verdict; the verdict itself is decided in
``glimmer.verdict`` (:func:`~glimmer.verdict.nodes.node_verdict` per run and node,
:mod:`glimmer.verdict.expiry` for binding and expiry). This module only finds the inputs:
the run's pinned plan and its results, indexed by node once per run version.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from glimmer.controllers.kit import names
from glimmer.controllers.kit.view import RunView
from glimmer.plan.units import verdict_units
from glimmer.verdict.expiry import (
    VERDICT_CURRENT,
    Probe,
    RunVerdict,
    VerdictReason,
    VerdictState,
    VerdictStatus,
    evaluate,
    newest_unjudged,
    newest_verdict,
    next_verdict,
    note_unjudged,
    parse_optional_time,
    state_of_fingerprint,
    targeted,
)
from glimmer.verdict.nodes import NodeState, NodeVerdict, PlannedUnit, node_verdict
from glimmer.verdict.phases import Phase

__all__ = [
    "VERDICT_CURRENT",
    "Probe",
    "RunVerdict",
    "VerdictReason",
    "VerdictState",
    "VerdictStatus",
    "evaluate",
    "latest_verdict",
    "newest_unjudged",
    "newest_verdict",
    "next_verdict",
    "note_unjudged",
    "parse_optional_time",
    "run_node_results",
    "run_node_verdict",
    "run_probe",
    "run_verdict",
    "state_of_fingerprint",
    "targeted",
]

#: The pinned plan annotation (E5), as the run controller writes it.
PLAN_ANNOTATION: Final = names.PLAN_ANNOTATION
#: The fields of a result the node verdict reads.
_VERDICT_FIELDS: Final = (
    "name", "kind", "phase", "nodes", "variantAxes", "provenance", "suspect", "startedAt",
    "finishedAt", "repeatsRequired", "repeatsCompleted",
)  # fmt: skip
#: The kind whose results say which parts a node holds, and the metrics that do.
PROBE_KIND: Final = "fingerprint-probe"
_IDENTITY_METRICS: Final = ("hardwareIdentity", "gpuUuids")


@dataclass(slots=True)
class _RunFacts:
    """One run version's inputs to the node verdict, indexed by node."""

    #: Node -> the units of the plan naming it (None: the plan could not be read).
    units: dict[str, list[PlannedUnit]] | None
    baseline: bool
    results: dict[str, list[dict[str, Any]]] = field(default_factory=dict)


#: Per run version, its facts: a run is indexed once, not once per node it names (a
#: 5,000-node run read whole for each of its 5,000 nodes was O(N^2)).
_FACTS: OrderedDict[tuple[str, str], _RunFacts] = OrderedDict()
_FACTS_RUNS: Final = 8


def _facts(run: Mapping[str, Any]) -> _RunFacts:
    """Built as new values (nothing of ``run`` is held, so a cached run may be passed)."""
    view = RunView(run)
    key = (view.uid, view.resource_version)
    if all(key) and key in _FACTS:
        _FACTS.move_to_end(key)
        return _FACTS[key]
    pinned = view.readable_plan()
    planned = verdict_units(pinned)
    units: dict[str, list[PlannedUnit]] | None = None
    if planned is not None:
        units = {}
        for unit in planned:
            for node in unit.nodes:
                units.setdefault(node, []).append(unit)
    facts = _RunFacts(units=units, baseline=view.baseline or bool(pinned and pinned.baseline))
    for result in view.results:
        if not result.get("kind"):
            continue
        fields: dict[str, Any] = {k: result[k] for k in _VERDICT_FIELDS if k in result}
        metrics = result.get("metrics")
        if result.get("kind") == PROBE_KIND and isinstance(metrics, Mapping):
            fields["metrics"] = {k: metrics[k] for k in _IDENTITY_METRICS if k in metrics}
        for node in result.get("nodes") or ():
            facts.results.setdefault(str(node), []).append(fields)
    if all(key):
        _FACTS[key] = facts
        while len(_FACTS) > _FACTS_RUNS:
            _FACTS.popitem(last=False)
    return facts


def run_node_verdict(run: Mapping[str, Any], node: str) -> NodeVerdict | None:
    """What a terminal ``run`` says about ``node`` (None: the run is not terminal, or no
    result of it names the node)."""
    phase = RunView(run).phase
    if phase is None or not phase.terminal or phase is Phase.SKIPPED:
        return None
    facts = _facts(run)
    results = facts.results.get(node)
    if not results:
        return None
    planned = None if facts.units is None else facts.units.get(node, [])
    return node_verdict(node, planned=planned, results=results, baseline=facts.baseline)


def run_node_results(run: Mapping[str, Any], node: str) -> list[dict[str, Any]]:
    """The results of ``run`` naming ``node``, as the node verdict read them (the fields
    a signed verdict carries: test, kind, phase, provenance, suspect, nodes, axes)."""
    return [dict(r) for r in _facts(run).results.get(node) or ()]


def run_probe(run: Mapping[str, Any], node: str) -> Probe | None:
    """The hardware identity a terminal ``run``'s fingerprint-probe recorded on ``node``
    (a Passed result naming only that node, with a ``hardwareIdentity`` metric). A compact
    record keeps no metrics, so a run past its status budget shows no identity here."""
    view = RunView(run)
    phase = view.phase
    if phase is None or not phase.terminal:
        return None
    for result in reversed(_facts(run).results.get(node) or []):
        metrics = result.get("metrics") or {}
        identity = metrics.get("hardwareIdentity")
        if (
            result.get("kind") != PROBE_KIND
            or result.get("phase") != Phase.PASSED
            or result.get("nodes") != [node]
            or not isinstance(identity, str)
            or not identity
        ):
            continue
        ended = parse_optional_time(result.get("finishedAt")) or parse_optional_time(
            view.finished_at
        )
        if ended is None:
            continue
        return Probe(
            identity=identity,
            gpu_uuids=str(metrics.get("gpuUuids") or ""),
            run_namespace=view.namespace,
            run_name=view.name,
            observed_at=ended,
        )
    return None


def run_verdict(run: Mapping[str, Any], node: str) -> RunVerdict | None:
    """The verdict ``run`` gives ``node`` for its fingerprint: Passed, Failed or
    Simulated; NotJudged (with the reason) when the run named the node but judged nothing
    there (the earlier verdict stands); None when the run says nothing of it."""
    verdict = run_node_verdict(run, node)
    if verdict is None:
        return None
    view = RunView(run)
    finished = parse_optional_time(view.finished_at)
    if finished is None:
        return None
    results = _facts(run).results.get(node) or []
    starts = [
        t for t in (parse_optional_time(r.get("startedAt")) for r in results) if t is not None
    ]
    started = min(starts) if starts else parse_optional_time(view.started_at)
    return RunVerdict(
        run_namespace=view.namespace,
        run_name=view.name,
        run_uid=view.uid,
        phase=str(verdict.state),
        started_at=started,
        finished_at=finished,
        note=verdict.message if verdict.state is NodeState.NOT_JUDGED else "",
        identity=probe.identity if (probe := run_probe(run, node)) is not None else "",
    )


def latest_verdict(runs: Iterable[Mapping[str, Any]], node: str) -> RunVerdict | None:
    return newest_verdict(run_verdict(r, node) for r in runs)
