"""``glimmer merge --cohort`` (N17): several hosts' ``run.json`` -> one cohort judgement.

In a cluster the run controller judges a relative gate over the run's nodes once the
run's results have settled. On bare hosts each ``glimmer run`` judged its own host
alone, against fixed numbers; the cohort is only visible once their documents are put
side by side. This module does that, with the operator's own rule
(:func:`glimmer.verdict.cohort.judge_states`): the cohort is the hosts of one
fingerprint digest (``run.json``'s ``host.fingerprint.digest``, digested by the
function the NodeFingerprint controller uses, K4), each gate's ``relativeTo`` is read
from the document's ``gates`` (M6), and the outcome is the records a BurnInRun's
``status.cohortVerdicts`` holds, beside every host's results as judged.

Refused before anything is judged (:class:`CohortInputError`): a file that is not a
finished ``glimmer run`` document, two documents for one host, and documents whose
gates disagree (not the same profile: one cohort, one rule). A document without a
digest is a host whose cohort is unknown: judged by nobody, and said so.
Nothing here passes a host: the inputs' own verdicts are the ceiling.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from glimmer.api import API_VERSION
from glimmer.local.results import DOCUMENT_KIND
from glimmer.verdict import Phase, TestResultState, count, run_phase
from glimmer.verdict.codec import result_from_json, result_to_json
from glimmer.verdict.cohort import CohortSpecError, judge_states, relative_gate, verdict_record

COHORT_KIND: Final = "BurnInLocalCohort"


class CohortInputError(ValueError):
    """The documents cannot be judged as one cohort; nothing is written."""


@dataclass(frozen=True)
class HostDocument:
    source: str
    node: str
    digest: str
    phase: str
    gates: tuple[Mapping[str, Any], ...]
    results: tuple[dict[str, Any], ...]


def read_host(path: Path) -> HostDocument:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise CohortInputError(f"{path}: cannot be read as JSON: {err}") from err
    if not isinstance(document, dict) or document.get("kind") != DOCUMENT_KIND:
        raise CohortInputError(f"{path}: not a glimmer run result (kind {DOCUMENT_KIND})")
    if document.get("apiVersion") != API_VERSION:
        raise CohortInputError(f"{path}: apiVersion {document.get('apiVersion')!r}")
    phase = str(document.get("phase") or "")
    if phase == str(Phase.RUNNING) or not document.get("finishedAt"):
        raise CohortInputError(f"{path}: the run has not finished; judge finished runs only")
    run = document.get("run")
    node = run.get("name") if isinstance(run, Mapping) else None
    if not isinstance(node, str) or not node:
        raise CohortInputError(f"{path}: names no host (run.name)")
    host = document.get("host")
    fingerprint = host.get("fingerprint") if isinstance(host, Mapping) else None
    digest = fingerprint.get("digest") if isinstance(fingerprint, Mapping) else None
    gates = document.get("gates")
    results = document.get("results")
    if not isinstance(gates, list) or not isinstance(results, list):
        raise CohortInputError(f"{path}: has no gates or results (written by an older glimmer?)")
    return HostDocument(
        source=str(path),
        node=node,
        digest=digest if isinstance(digest, str) else "",
        phase=phase,
        gates=tuple(g for g in gates if isinstance(g, Mapping)),
        results=tuple(dict(r) for r in results if isinstance(r, Mapping)),
    )


def read_hosts(paths: Sequence[Path]) -> list[HostDocument]:
    hosts = [read_host(p) for p in paths]
    seen: dict[str, str] = {}
    for host in hosts:
        if host.node in seen:
            raise CohortInputError(
                f"host {host.node} twice ({seen[host.node]}, {host.source}): one document a host"
            )
        seen[host.node] = host.source
    first = hosts[0]
    for host in hosts[1:]:
        if [dict(g) for g in host.gates] != [dict(g) for g in first.gates]:
            raise CohortInputError(
                f"{host.source}: its gates differ from {first.source}'s: not the same profile, "
                "so not one cohort rule"
            )
    return hosts


@dataclass(frozen=True)
class CohortMerge:
    document: dict[str, Any]
    states: list[TestResultState]


def merge_cohort(hosts: Sequence[HostDocument], *, at: str) -> CohortMerge:
    """Every relative gate of the hosts' (shared) gates, judged over the hosts."""
    digests = {h.node: h.digest or None for h in hosts}
    results: list[dict[str, Any]] = []
    owner: list[str] = []
    for host in hosts:
        for result in host.results:
            results.append(result)
            owner.append(host.node)
    states = [result_from_json(r, required=r.get("required") is not False) for r in results]
    records: list[dict[str, Any]] = []
    positions: dict[str, int] = {}
    for gate_entry in hosts[0].gates:
        test = str(gate_entry.get("test"))
        index = positions.get(test, 0)
        positions[test] = index + 1
        relative = gate_entry.get("relativeTo")
        if not isinstance(relative, Mapping):
            continue
        try:
            gate = relative_gate(metric=str(gate_entry.get("metric")),
                                 comparison=str(gate_entry.get("comparison")),
                                 relative_to=relative)  # fmt: skip
        except CohortSpecError as err:
            raise CohortInputError(f"test {test}: {err}") from err
        where: dict[str, int] = {}
        for slot, result in enumerate(results):
            if result.get("name") == test and result.get("scope", "Node") == "Node":
                where[owner[slot]] = slot
        members: dict[str, TestResultState | None] = {n: states[s] for n, s in where.items()}
        judgements, changed = judge_states(gate, index=index, states=members, digests=digests)
        records += [verdict_record(j, test=test, index=index, at=at) for j in judgements]
        for node, after in changed.items():
            slot = where[node]
            states[slot] = after
            results[slot] = result_to_json(after, base=results[slot])
    phase = run_phase(states)
    hosts_phase = {h.node: h.phase for h in hosts}
    worst = [p for p in hosts_phase.values() if p not in (str(Phase.PASSED), str(Phase.FAILED))]
    if worst and phase is not Phase.FAILED:
        phase = Phase.ERROR  # a host's run that ended Error stays unjudged here
    tally = count(states)
    document: dict[str, Any] = {
        "apiVersion": API_VERSION,
        "kind": COHORT_KIND,
        "phase": str(phase),
        "judgedAt": at,
        "hosts": [
            {"node": h.node, "source": h.source, "fingerprint": h.digest, "phase": h.phase}
            for h in hosts
        ],
        "summary": {
            "passed": tally.passed,
            "failed": tally.failed,
            "errored": tally.errored,
            "skipped": tally.skipped,
        },
        "cohortVerdicts": records,
        "results": results,
    }
    return CohortMerge(document=document, states=states)


def cohort_exit_status(merged: CohortMerge) -> int:
    """N4 over the judged required results: Failed 1, else Error 3, else Passed 0, else 2."""
    required = [s for s in merged.states if s.required]
    phases = {s.phase for s in required}
    if Phase.FAILED in phases:
        return 1
    unjudged = merged.document["phase"] == str(Phase.ERROR)
    if unjudged or Phase.ERROR in phases or any(s.open for s in required):
        return 3
    if Phase.PASSED in phases:
        return 0
    return 2
