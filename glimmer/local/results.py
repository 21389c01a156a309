"""The bare-host result document (``run.json``): run phase, results, provenance.

The same vocabulary as a BurnInRun's status, so reports and tools read both.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from glimmer.local.dispatcher import LocalResult, rfc3339
from glimmer.verdict import Phase, count, run_phase, run_provenance

DOCUMENT_KIND = "BurnInLocalRun"
API_VERSION = "burnin.glimmer.ai/v1alpha1"


def result_json(result: LocalResult) -> dict[str, Any]:
    state = result.state
    doc: dict[str, Any] = {
        "name": state.name,
        "kind": state.kind,
        "scope": result.scope,
        "phase": str(state.phase),
        "nodes": [result.node],
        "startedAt": rfc3339(result.started_at),
        "finishedAt": rfc3339(result.finished_at),
        "required": state.required,
        "metrics": dict(sorted(state.metrics.items())),
        "message": state.message,
        "violations": [
            {
                "index": v.index,
                "metric": v.metric,
                "kind": str(v.kind),
                "cause": str(v.cause),
                "reason": v.reason,
            }
            for v in state.violations
        ],
        "notEvaluated": [{"metric": n.metric, "reason": n.reason} for n in state.not_evaluated],
        "unmeasurable": list(state.unmeasurable),
        "artifacts": result.artifacts,
        "variantAxes": dict(result.variant_axes),
        "repeatsRequired": state.repeats_required,
        "repeatsCompleted": state.repeats_completed,
        "errorRetries": state.error_retries,
        "provenance": str(state.provenance),
        "suspect": state.suspect,
        "rawLogs": result.raw_logs,
        "attempts": [
            {
                "attempt": a.attempt,
                "trigger": str(a.trigger),
                "node": a.node,
                "phase": str(a.phase),
                "exitCode": a.exit_code,
                "startedAt": a.started_at,
                "finishedAt": a.finished_at,
                "metrics": dict(sorted(a.metrics.items())),
                "message": a.message,
                "provenance": str(a.provenance),
            }
            for a in state.attempts
        ],
    }
    if state.retry_trigger:
        doc["lastRetryTrigger"] = state.retry_trigger
    return {k: v for k, v in doc.items() if v is not None}


def run_document(
    results: Sequence[LocalResult],
    *,
    node: str,
    profile: str,
    sim: str | None,
    started_at: float,
    finished_at: float,
    stopped: str = "",
) -> dict[str, Any]:
    """The run.json document; ``stopped`` says why the run ended early ("" if it did not)."""
    states = [r.state for r in results]
    phase = run_phase(states)
    provenance = run_provenance(states, phase=phase)
    counters = count(states)
    document: dict[str, Any] = {
        "apiVersion": API_VERSION,
        "kind": DOCUMENT_KIND,
        "run": {"namespace": "local", "name": node, "profile": profile},
        "phase": str(phase),
        "startedAt": rfc3339(started_at),
        "finishedAt": rfc3339(finished_at),
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
    if stopped:
        document["stopped"] = stopped
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
