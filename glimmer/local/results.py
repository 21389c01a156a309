"""The bare-host result document (``run.json``): run phase, results, provenance.

The same vocabulary as a BurnInRun's status, so reports and tools read both.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from glimmer.api import API_VERSION
from glimmer.local.dispatcher import LocalResult, rfc3339
from glimmer.plan import PinnedPlan
from glimmer.plan.gates import planned_thresholds
from glimmer.verdict import Phase, count, run_phase, run_provenance
from glimmer.verdict.codec import MAX_MESSAGE_BYTES, clamp_text, result_to_json

DOCUMENT_KIND = "BurnInLocalRun"


def rfc3339_ms(stamp: float | None) -> str | None:
    """M6: RFC3339 with milliseconds (``...T12:00:00.250Z``), kept beside the
    whole-second ``startedAt``/``finishedAt`` (the status's wire format) so JUnit and
    CTRF can state sub-second durations from the real start and finish."""
    if stamp is None:
        return None
    moment = datetime.fromtimestamp(stamp, tz=UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def result_json(result: LocalResult) -> dict[str, Any]:
    """One result in the BurnInRun status's ``TestResult`` shape, written by the one
    result codec (so both dispatchers serialise a verdict identically), plus what only
    a bare host records: ``required``, ``rawLogs``, ``lastRetryTrigger`` and each
    stored artifact's ``file``. Optional fields are omitted when empty, as in the
    status."""
    state = result.state
    base: dict[str, Any] = {
        "name": state.name,
        "kind": state.kind,
        "scope": result.scope,
        "phase": str(state.phase),
        "nodes": list(result.nodes or (result.node,)),
        "required": state.required,
        "rawLogs": list(result.raw_logs),
    }
    started = result.started_at
    if started is None and state.open:
        started = result.attempt_started_at  # a checkpoint of the first attempt
    optional: dict[str, Any] = {
        "startedAt": rfc3339(started),
        "finishedAt": rfc3339(result.finished_at),
        "startedAtPrecise": rfc3339_ms(started),
        "finishedAtPrecise": rfc3339_ms(result.finished_at),
        "artifacts": list(result.artifacts),
        "variantAxes": dict(result.variant_axes),
        "lastRetryTrigger": clamp_text(state.retry_trigger, MAX_MESSAGE_BYTES),
        # H1: as in the status, it stays once the result settles.
        "lastCheckpointAt": rfc3339(result.last_checkpoint_at),
    }
    base.update({key: value for key, value in optional.items() if value})
    out = result_to_json(state, base=base)
    if state.open:
        # H1: an open result shows what its last checkpoint read, until an attempt is
        # recorded; and it has no provenance until one is (the weakest of none).
        if result.checkpoint_metrics:
            out["metrics"] = dict(result.checkpoint_metrics)
        if not state.attempts:
            out.pop("provenance", None)
    return out


def plan_gates(plan: PinnedPlan) -> list[dict[str, Any]]:
    """M6: every threshold of the pinned plan, so a ``glimmer run`` report draws the
    plan's gates (not only those a violation names): ``test``, ``metric``,
    ``comparison``, ``value``, ``applicability`` as the plan wrote them, and
    ``relativeTo`` where it is set (what ``glimmer merge --cohort`` judges, C7-C10)."""
    gates: list[dict[str, Any]] = []
    for test, t in planned_thresholds(plan):
        gate: dict[str, Any] = {
            "test": test.name,
            "metric": t.metric,
            "comparison": t.comparison,
            "value": t.value,
            "applicability": t.applicability,
        }
        if t.relative_to is not None:
            gate["relativeTo"] = t.relative_to
        gates.append(gate)
    return gates


def run_document(
    results: Sequence[LocalResult],
    *,
    node: str,
    profile: str,
    sim: str | None,
    started_at: float,
    finished_at: float,
    stopped: str = "",
    baseline: bool = False,
) -> dict[str, Any]:
    """The run.json document; ``stopped`` says why the run ended early ("" if it did not).
    ``baseline`` is the pinned plan's: a baseline run measures and never certifies."""
    states = [r.state for r in results]
    phase = run_phase(states)
    provenance = run_provenance(states, phase=phase, baseline=baseline)
    counters = count(states)
    document: dict[str, Any] = {
        "apiVersion": API_VERSION,
        "kind": DOCUMENT_KIND,
        "run": {"namespace": "local", "name": node, "profile": profile},
        "phase": str(phase),
        "startedAt": rfc3339(started_at),
        "finishedAt": rfc3339(finished_at),
        "startedAtPrecise": rfc3339_ms(started_at),
        "finishedAtPrecise": rfc3339_ms(finished_at),
        "provenance": str(provenance.provenance),
        "certifiesSilicon": provenance.certifies_silicon,
        "simulatedGpu": sim,
        "suspectResults": list(provenance.suspect_results),
        "summary": {
            "passed": counters.passed,
            "failed": counters.failed,
            "errored": counters.errored,
            "skipped": counters.skipped,
        },
        "results": [result_json(r) for r in results],
    }
    skipped_here = [r.state.name for r in results if r.not_run_here]
    if skipped_here:
        # N5: the tests this run did not execute (Skipped, never a Pass): the phase and
        # exit status judge what ran here; a required one among them, and the run
        # certifies nothing (I16).
        document["notRunHere"] = skipped_here
    if stopped:
        document["stopped"] = stopped
    return document


def checkpoint_document(
    results: Sequence[LocalResult],
    *,
    node: str,
    profile: str,
    sim: str | None,
    started_at: float,
    baseline: bool = False,
) -> dict[str, Any]:
    """The run as a ``Checkpoint`` envelope carries it (H2): Running, every result so
    far (the open one with its checkpointed metrics), no run provenance and nothing
    certified yet, as a BurnInRun's status reads while it runs."""
    document = run_document(
        results,
        node=node,
        profile=profile,
        sim=sim,
        started_at=started_at,
        finished_at=started_at,
        baseline=baseline,
    )
    document["phase"] = str(Phase.RUNNING)
    document["provenance"] = ""
    document["certifiesSilicon"] = False
    document.pop("finishedAt", None)
    document.pop("finishedAtPrecise", None)
    return document


def exit_status(results: Sequence[LocalResult], *, stopped: str = "") -> int:
    """N4 over required results: Failed 1, else Error 3, else Passed 0, else 2 (nothing judged).

    A run that stopped early (interrupt, internal error) is 3 whatever it settled: it
    never happened in full, so neither 0 nor 1 may be claimed for it.
    """
    if stopped:
        return 3
    required = [r.state for r in results if r.state.required]
    phases = {s.phase for s in required}
    if Phase.FAILED in phases:
        return 1
    if Phase.ERROR in phases or any(s.open for s in required):
        return 3
    if Phase.PASSED in phases:
        return 0
    return 2


def write_document(document: dict[str, Any], report_dir: Path) -> Path:
    """Write run.json whole or not at all (a reader never sees half a verdict)."""
    report_dir.mkdir(parents=True, exist_ok=True)
    path = report_dir / "run.json"
    partial = report_dir / ".run.json.partial"
    partial.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    os.replace(partial, path)
    return path
