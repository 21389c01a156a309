"""JSON shapes for verdicts, in the wire vocabulary of the status and the envelope."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from glimmer.contract import Artifact, DroppedArtifact, DropReason, artifact_name_ok
from glimmer.verdict import AttemptVerdict, LintFinding


def artifact_refs(
    artifacts: Sequence[Artifact], dropped: Sequence[DroppedArtifact]
) -> list[dict[str, Any]]:
    """ArtifactRef-shaped entries; a name A12 would refuse is shown as dropped."""
    refs: list[dict[str, Any]] = []
    for artifact in artifacts:
        if not artifact_name_ok(artifact.name):
            refs.append(
                {
                    "name": artifact.name,
                    "mediaType": artifact.media_type,
                    "sizeBytes": artifact.size,
                    "dropped": str(DropReason.BAD_NAME),
                }
            )
            continue
        refs.append(
            {
                "name": artifact.name,
                "mediaType": artifact.media_type,
                "sizeBytes": artifact.size,
                "digest": artifact.digest,
            }
        )
    for drop in dropped:
        refs.append(
            {
                "name": drop.name,
                "mediaType": drop.media_type,
                "sizeBytes": drop.size,
                "dropped": str(drop.reason),
            }
        )
    return refs


def verdict_json(
    verdict: AttemptVerdict, *, artifacts: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    return {
        "phase": str(verdict.phase),
        "message": verdict.message,
        "exitCode": verdict.exit_code,
        "metrics": dict(sorted(verdict.metrics.items())),
        "unmeasurable": list(verdict.unmeasurable),
        "invalidNames": list(verdict.invalid_names),
        "violations": [
            {
                "index": v.index,
                "metric": v.metric,
                "kind": str(v.kind),
                "cause": str(v.cause),
                "reason": v.reason,
            }
            for v in verdict.violations
        ],
        "notEvaluated": [{"metric": n.metric, "reason": n.reason} for n in verdict.not_evaluated],
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
