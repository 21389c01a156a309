"""The fingerprint digest, its classification against the stored one (K5) and what
changed.

Classification and the drift decision are a node's state, so they live in
:mod:`glimmer.verdict.drift`; they are re-exported here for the controller's callers.

The digest itself (K4) lives in :mod:`glimmer.api.fingerprint`, so ``glimmer run``
digests the host it runs on with the very function this controller digests a Node
with; it is re-exported here for the controller's callers. Why the scheme is our own
(``glimmer-v1``, not the reference's ``v1``) is said there.
"""

from __future__ import annotations

from glimmer.api.fingerprint import (
    SCHEME,
    Observation,
    digest,
    digest_inputs,
    gpu_line,
    nic_line,
)
from glimmer.verdict import drift
from glimmer.verdict.drift import Classification, scheme_of

__all__ = [
    "SCHEME",
    "Classification",
    "classify",
    "describe_changes",
    "digest",
    "digest_inputs",
    "gpu_line",
    "nic_line",
    "scheme_of",
]


def classify(stored: str | None, new: str) -> Classification:
    """K5's classification of ``new`` against ``stored``, as glimmer.verdict decides it."""
    return drift.classify(stored, new)


def describe_changes(old: Observation, new: Observation) -> list[str]:
    """What differs, one phrase each (kernel, osImage, each GPU/NIC, each label)."""
    changes: list[str] = []
    if old.kernel != new.kernel:
        changes.append(f"kernel {old.kernel or '(none)'} -> {new.kernel or '(none)'}")
    if old.os_image != new.os_image:
        changes.append(f"osImage {old.os_image or '(none)'} -> {new.os_image or '(none)'}")
    old_gpus = [gpu_line(g) for g in old.gpus]
    new_gpus = [gpu_line(g) for g in new.gpus]
    if old_gpus != new_gpus:
        changes.append(f"gpus {_list(old_gpus)} -> {_list(new_gpus)}")
    old_nics = [nic_line(n) for n in old.nics]
    new_nics = [nic_line(n) for n in new.nics]
    if old_nics != new_nics:
        changes.append(f"nics {_list(old_nics)} -> {_list(new_nics)}")
    for key in sorted(set(old.labels) | set(new.labels)):
        before, after = old.labels.get(key), new.labels.get(key)
        if before != after:
            changes.append(f"label {key} {before or '(absent)'} -> {after or '(absent)'}")
    return changes


def _list(lines: list[str]) -> str:
    return "[" + ", ".join(lines) + "]" if lines else "(none)"
