"""Storing runner artifacts in the run's ConfigMap (A12), decided purely.

One bad artifact must not lose other tests' evidence, and a repeat must not
overwrite an earlier attempt's evidence: keys carry the test and the pod, the
run-wide budget counts what is already stored, and every refusal is recorded as a
dropped reference with its true size. An artifact never changes a phase.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from glimmer.contract import Artifact, DroppedArtifact, DropReason, artifact_name_ok

#: Run-wide budget over keys + values already in the ConfigMap.
BUDGET_BYTES: Final = 921_600
MAX_KEY_BYTES: Final = 253


def configmap_name(run_name: str) -> str:
    return f"{run_name}-artifacts"


@dataclass
class StorePlan:
    """What to add to the ConfigMap and the references to append to the result."""

    data: dict[str, str] = field(default_factory=dict)
    binary_data: dict[str, str] = field(default_factory=dict)
    refs: list[dict[str, Any]] = field(default_factory=list)


def _stored_bytes(data: Mapping[str, str], binary_data: Mapping[str, str]) -> int:
    total = sum(len(k.encode()) + len(v.encode()) for k, v in data.items())
    total += sum(len(k.encode()) + len(base64.b64decode(v)) for k, v in binary_data.items())
    return total


def _dropped_ref(name: str, media_type: str, size: int, reason: DropReason) -> dict[str, Any]:
    return {"name": name, "mediaType": media_type, "sizeBytes": size, "dropped": str(reason)}


def plan_store(
    *,
    configmap: str,
    data: Mapping[str, str],
    binary_data: Mapping[str, str],
    test: str,
    pod: str,
    found: Sequence[Artifact | DroppedArtifact],
) -> StorePlan:
    """``found`` in document order (``RunnerReport.artifacts_in_order``): the refs
    follow it, accepted and dropped interleaved as printed (I31). The budget is
    spent in the same order, so an earlier artifact is stored before a later one."""
    plan = StorePlan()
    used = _stored_bytes(data, binary_data)
    for artifact in found:
        if isinstance(artifact, DroppedArtifact):
            plan.refs.append(
                _dropped_ref(artifact.name, artifact.media_type, artifact.size, artifact.reason)
            )
            continue
        if not artifact_name_ok(artifact.name):
            plan.refs.append(
                _dropped_ref(artifact.name, artifact.media_type, artifact.size, DropReason.BAD_NAME)
            )
            continue
        key = f"{test}.{pod}.{artifact.name}"
        if len(key.encode()) > MAX_KEY_BYTES:
            plan.refs.append(
                _dropped_ref(artifact.name, artifact.media_type, artifact.size, DropReason.BAD_NAME)
            )
            continue
        if key in plan.data or key in plan.binary_data:
            # A second fence of the same name in one output: the first payload is the one
            # stored and referenced (as on a bare host), so a ref's digest always matches
            # what its key holds.
            continue
        cost = len(key.encode()) + artifact.size
        already = key in data or key in binary_data
        if not already and used + cost > BUDGET_BYTES:
            plan.refs.append(
                _dropped_ref(artifact.name, artifact.media_type, artifact.size, DropReason.BUDGET)
            )
            continue
        if not already:
            try:
                plan.data[key] = artifact.payload.decode("utf-8")
            except UnicodeDecodeError:
                plan.binary_data[key] = base64.b64encode(artifact.payload).decode("ascii")
            used += cost
        plan.refs.append(
            {
                "name": artifact.name,
                "mediaType": artifact.media_type,
                "sizeBytes": artifact.size,
                "digest": artifact.digest,
                "configMap": configmap,
                "key": key,
            }
        )
    return plan


def merge_refs(
    existing: Sequence[Mapping[str, Any]], new: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """Append, de-duplicated by key (stored) or by name + drop reason (dropped)."""

    def identity(ref: Mapping[str, Any]) -> tuple[str, str]:
        if ref.get("key"):
            return ("key", str(ref["key"]))
        return (str(ref.get("name", "")), str(ref.get("dropped", "")))

    merged = [dict(r) for r in existing]
    seen = {identity(r) for r in merged}
    for ref in new:
        if identity(ref) not in seen:
            merged.append(dict(ref))
            seen.add(identity(ref))
    return merged


def store_failed(refs: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """A store failure turns the stored refs of this write into drops."""
    out: list[dict[str, Any]] = []
    for ref in refs:
        if ref.get("key"):
            out.append(
                _dropped_ref(
                    str(ref["name"]),
                    str(ref.get("mediaType", "")),
                    int(ref.get("sizeBytes", 0)),
                    DropReason.STORE_FAILED,
                )
            )
        else:
            out.append(dict(ref))
    return out
