"""JSON shapes for what only the CLI prints: artifact refs, an evaluated attempt, lint.

Violations and notEvaluated entries are the result codec's
(:mod:`glimmer.verdict.codec`), so ``glimmer evaluate -o json``, ``run.json`` and a
BurnInRun's status spell them one way.
"""

from __future__ import annotations

from typing import Any

from glimmer.contract import Artifact, DropReason, RunnerReport, artifact_name_ok
from glimmer.verdict import AttemptVerdict, LintFinding
from glimmer.verdict.codec import not_evaluated_to_json, violation_to_json


def artifact_refs(report: RunnerReport) -> list[dict[str, Any]]:
    """ArtifactRef-shaped entries in the order the runner printed them, accepted and
    dropped interleaved (I31); a name A12 would refuse is shown as dropped."""
    refs: list[dict[str, Any]] = []
    for found in report.artifacts_in_order:
        ref: dict[str, Any] = {
            "name": found.name,
            "mediaType": found.media_type,
            "sizeBytes": found.size,
        }
        if not isinstance(found, Artifact):
            ref["dropped"] = str(found.reason)
        elif not artifact_name_ok(found.name):
            ref["dropped"] = str(DropReason.BAD_NAME)
        else:
            ref["digest"] = found.digest
        refs.append(ref)
    return refs


def verdict_json(
    verdict: AttemptVerdict, *, artifacts: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """``glimmer evaluate -o json``: every key always present (its documented shape)."""
    return {
        "phase": str(verdict.phase),
        "message": verdict.message,
        "exitCode": verdict.exit_code,
        "metrics": dict(sorted(verdict.metrics.items())),
        "unmeasurable": list(verdict.unmeasurable),
        "invalidNames": list(verdict.invalid_names),
        "violations": [violation_to_json(v) for v in verdict.violations],
        "notEvaluated": [not_evaluated_to_json(n) for n in verdict.not_evaluated],
        "artifacts": artifacts or [],
        "provenance": str(verdict.provenance),
        "suspect": verdict.suspect,
    }


def finding_json(finding: LintFinding, *, file: str, test: str) -> dict[str, Any]:
    return {
        "file": file,
        "test": test,
        "index": finding.index,
        "metric": finding.metric,
        "severity": str(finding.severity),
        "reason": finding.reason,
    }
