"""A hardware identity and its digest (K4), whichever dispatcher observed it.

The NodeFingerprint controller observes a Node (``glimmer.controllers.fingerprint.
observe``: labels, ``nodeInfo``, allocatable); ``glimmer run`` observes the host it runs
on (``glimmer.local.host``: PCI functions in sysfs, the vendor tools). Both describe what
they saw as one :class:`Observation` and digest it here, with one function, so a digest
means the same thing whoever computed it: the bare host cannot import the controllers
(import-linter layers), and a second copy of the byte layout would drift.

The byte layout is the reference's: sha256 over NUL-terminated ``key\\0value\\0`` pairs,
in a fixed order. The scheme prefix is ours (``glimmer-v1``), as K4 recommends for a
re-implementation that is not bit-exact: a fingerprint written by the upstream
controller (``v1:``) then classifies as ``DigestSchemeChanged`` and is re-baselined
silently (K5, ``glimmer.controllers.fingerprint.digests.classify``). Had we reused
``v1``, any difference in our observation (a label kept or dropped differently) would
read as a same-scheme mismatch and raise ``Drifted=True`` on every node of the fleet at
once.

Standard library only: the wire shapes the NodeFingerprint status carries are
``glimmer.api.nodefingerprint.GPUInfo``/``NICInfo``; these are their in-memory twins.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

JSON = dict[str, Any]

SCHEME: Final = "glimmer-v1"


@dataclass(frozen=True, slots=True)
class GPU:
    """One accelerator (the wire shape is ``glimmer.api.GPUInfo``)."""

    index: int
    vendor: str = ""
    model: str = ""
    arch: str = ""
    memory_bytes: int | None = None
    driver_version: str = ""

    def to_json(self) -> JSON:
        out: JSON = {"index": self.index}
        for key, value in (("vendor", self.vendor), ("model", self.model), ("arch", self.arch),
                           ("memoryBytes", self.memory_bytes),
                           ("driverVersion", self.driver_version)):  # fmt: skip
            if value not in ("", None):
                out[key] = value
        return out


@dataclass(frozen=True, slots=True)
class NIC:
    """One network interface (the wire shape is ``glimmer.api.NICInfo``)."""

    name: str
    role: str = ""
    pci_vendor: str = ""
    model: str = ""
    rdma_device: str = ""
    link_layer: str = ""
    speed_mbps: int | None = None
    mtu: int | None = None

    def to_json(self) -> JSON:
        out: JSON = {"name": self.name}
        for key, value in (("role", self.role), ("pciVendor", self.pci_vendor),
                           ("model", self.model), ("rdmaDevice", self.rdma_device),
                           ("linkLayer", self.link_layer), ("speedMbps", self.speed_mbps),
                           ("mtu", self.mtu)):  # fmt: skip
            if value not in ("", None):
                out[key] = value
        return out


@dataclass(frozen=True, slots=True)
class Observation:
    """Everything the digest covers, in the order it covers it."""

    os_image: str = ""
    kernel: str = ""
    labels: Mapping[str, str] = field(default_factory=dict)
    gpus: tuple[GPU, ...] = ()
    nics: tuple[NIC, ...] = ()

    def status_fields(self) -> JSON:
        """The NodeFingerprint status fields this observation fills."""
        out: JSON = {}
        if self.os_image:
            out["osImage"] = self.os_image
        if self.kernel:
            out["kernel"] = self.kernel
        if self.labels:
            out["labels"] = dict(sorted(self.labels.items()))
        if self.gpus:
            out["gpus"] = [g.to_json() for g in self.gpus]
        if self.nics:
            out["nics"] = [n.to_json() for n in self.nics]
        return out


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


def first_gpu_vendor(observation: Observation) -> str | None:
    """The vendor image resolution (E14) is fed: the first GPU's, as the operator reads
    a captured fingerprint's ``status.gpus[0].vendor``; None for no GPU or no vendor
    word (``resolve_image`` reads ``unknown`` as none, too)."""
    return (observation.gpus[0].vendor or None) if observation.gpus else None
