"""The fingerprint digest (K4) and its classification against the stored one (K5).

The byte layout is the reference's: sha256 over NUL-terminated ``key\\0value\\0`` pairs,
in a fixed order. The scheme prefix is ours (``glimmer-v1``), as K4 recommends for a
re-implementation that is not bit-exact: a fingerprint written by the upstream
controller (``v1:``) then classifies as ``DigestSchemeChanged`` and is re-baselined
silently. Had we reused ``v1``, any difference in our observation (a label kept or
dropped differently) would read as a same-scheme mismatch and raise ``Drifted=True``
on every node of the fleet at once.
"""

from __future__ import annotations

import enum
import hashlib
from collections.abc import Iterator
from typing import Final

from glimmer.controllers.fingerprint.observe import GPU, NIC, Observation

SCHEME: Final = "glimmer-v1"


class Classification(enum.StrEnum):
    """K5's four outcomes; only DigestChanged is drift."""

    BASELINE_CAPTURED = "BaselineCaptured"
    DIGEST_STABLE = "DigestStable"
    DIGEST_SCHEME_CHANGED = "DigestSchemeChanged"
    DIGEST_CHANGED = "DigestChanged"


def _pairs(observation: Observation) -> Iterator[tuple[str, str]]:
    yield "scheme", SCHEME
    yield "osImage", observation.os_image
    yield "kernel", observation.kernel
    for key in sorted(observation.labels):
        yield f"label:{key}", observation.labels[key]
    for gpu in observation.gpus:
        yield "gpu", gpu_line(gpu)
    for nic in observation.nics:
        yield "nic", nic_line(nic)


def gpu_line(gpu: GPU) -> str:
    memory = "" if gpu.memory_bytes is None else str(gpu.memory_bytes)
    return "|".join((str(gpu.index), gpu.vendor, gpu.model, gpu.arch, memory, gpu.driver_version))


def nic_line(nic: NIC) -> str:
    speed = "" if nic.speed_mbps is None else str(nic.speed_mbps)
    mtu = "" if nic.mtu is None else str(nic.mtu)
    fields = (nic.name, nic.role, nic.pci_vendor, nic.model, nic.rdma_device, nic.link_layer)
    return "|".join((*fields, speed, mtu))


def digest_inputs(observation: Observation) -> list[tuple[str, str]]:
    """The pairs the digest covers, in order (``glimmer fingerprint`` shows them)."""
    return list(_pairs(observation))


def digest(observation: Observation) -> str:
    """``glimmer-v1:<hex sha256>`` of the observation."""
    hasher = hashlib.sha256()
    for key, value in _pairs(observation):
        hasher.update(key.encode("utf-8") + b"\0" + value.encode("utf-8") + b"\0")
    return f"{SCHEME}:{hasher.hexdigest()}"


def scheme_of(value: str) -> str:
    scheme, colon, _ = value.partition(":")
    return scheme if colon else ""


def classify(stored: str | None, new: str) -> Classification:
    """K5: stored empty is a baseline; another scheme is incomparable, never drift."""
    if not stored:
        return Classification.BASELINE_CAPTURED
    if stored == new:
        return Classification.DIGEST_STABLE
    if scheme_of(stored) != scheme_of(new):
        return Classification.DIGEST_SCHEME_CHANGED
    return Classification.DIGEST_CHANGED


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
