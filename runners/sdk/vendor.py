"""Whose GPUs a node has: the rule that picks the NVIDIA or the AMD backend.

Why a rule of its own, and why it refuses: NVML on an AMD part (or amdsmi on an NVIDIA
one) reads nothing, and a runner that guessed the vendor would either crash into exit 3
for the wrong reason or, worse, read a library that answers for a different card. So the
vendor is *established*, from three sources, or the run is Error naming what was seen:

- ``BURNIN_GPU_VENDOR`` (``nvidia`` or ``amd``): what the image or the test author
  declares (ROCm images set it; an operator may inject it from the NodeFingerprint);
- the node's PCI functions in sysfs: display (class ``0x03``) and processing-accelerator
  (class ``0x12``) functions of vendor ``0x10de`` (NVIDIA) or ``0x1002`` (AMD/ATI) —
  never ``0x1022``, AMD's CPU and chipset id, which every EPYC host carries;
- the vendors' device nodes: ``/dev/nvidiactl`` (NVIDIA), ``/dev/kfd`` (AMD's compute
  driver), under ``BURNIN_DEV_ROOT`` (default ``/dev``; the simulated GPU has none).

A declaration is honoured only when the node does not contradict it (a node whose GPUs
are all of the other vendor is refused); without one, exactly one vendor must be seen.
Nothing seen, both seen, or an unknown word: :class:`VendorUndeterminedError` (exit 3).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Final

from runners.sdk.protocols import (
    AMD_VENDOR,
    GPU_VENDORS,
    NVIDIA_VENDOR,
    Sysfs,
    VendorUndeterminedError,
)

VENDOR_ENV: Final = "BURNIN_GPU_VENDOR"
DEV_ROOT_ENV: Final = "BURNIN_DEV_ROOT"
#: PCI vendor ids of GPU makers (0x1022 is AMD's CPU/chipset id, deliberately absent).
PCI_GPU_VENDORS: Final[Mapping[str, str]] = {"0x10de": NVIDIA_VENDOR, "0x1002": AMD_VENDOR}
#: PCI base classes of GPUs: display controllers (0x03) and processing accelerators (0x12,
#: what Instinct parts report).
PCI_GPU_CLASSES: Final = ("0x03", "0x12")
#: A device node only that vendor's driver creates.
DEVICE_NODES: Final[Mapping[str, str]] = {"nvidiactl": NVIDIA_VENDOR, "kfd": AMD_VENDOR}


def declared_vendor(environ: Mapping[str, str]) -> str | None:
    """``BURNIN_GPU_VENDOR``, refused (exit 3) when it names no backend we have."""
    text = environ.get(VENDOR_ENV, "").strip().lower()
    if not text:
        return None
    if text not in GPU_VENDORS:
        raise VendorUndeterminedError(
            f"{VENDOR_ENV}={text!r} names no GPU backend (known: {', '.join(GPU_VENDORS)})"
        )
    return text


def vendors_on_pci(sysfs: Sysfs) -> dict[str, str]:
    """PCI address -> vendor, for every GPU-class function of a GPU maker."""
    found: dict[str, str] = {}
    for address in sysfs.list_dir("bus/pci/devices") or []:
        base = f"bus/pci/devices/{address}"
        vendor = (sysfs.read_text(f"{base}/vendor") or "").strip().lower()
        klass = (sysfs.read_text(f"{base}/class") or "").strip().lower()
        if vendor in PCI_GPU_VENDORS and klass.startswith(PCI_GPU_CLASSES):
            found[address] = PCI_GPU_VENDORS[vendor]
    return found


def vendors_by_device_node(exists: Callable[[str], bool]) -> set[str]:
    """The vendors whose driver-created device node is present."""
    return {vendor for node, vendor in DEVICE_NODES.items() if exists(node)}


def host_device_nodes(environ: Mapping[str, str]) -> Callable[[str], bool]:
    """Whether ``<BURNIN_DEV_ROOT>/<name>`` exists on this host."""
    root = environ.get(DEV_ROOT_ENV, "").strip() or "/dev"
    return lambda name: os.path.exists(os.path.join(root, name))


def settle_vendor(*, declared: str | None, seen: Mapping[str, set[str]]) -> str:
    """The vendor whose backend may read this node, or :class:`VendorUndeterminedError`.

    ``seen`` maps each evidence source (``pci``, ``/dev``) to the vendors it showed.
    """
    found = set().union(*seen.values()) if seen else set()
    account = "; ".join(
        f"{source}: {', '.join(sorted(vendors)) or 'none'}" for source, vendors in seen.items()
    )
    if declared is not None:
        if found and declared not in found:
            raise VendorUndeterminedError(
                f"{VENDOR_ENV}={declared} but this node's GPUs are "
                f"{', '.join(sorted(found))} ({account}): refusing to read them through "
                f"the {declared} backend"
            )
        return declared
    if len(found) == 1:
        return next(iter(found))
    if not found:
        raise VendorUndeterminedError(
            f"cannot determine this node's GPU vendor ({account}; {VENDOR_ENV} unset): "
            f"set {VENDOR_ENV}=nvidia|amd, or mount /dev and /sys"
        )
    raise VendorUndeterminedError(
        f"this node shows GPUs of several vendors ({account}): set {VENDOR_ENV} to the "
        "one this test measures"
    )


def node_vendor(
    *, environ: Mapping[str, str], sysfs: Sysfs, device_node: Callable[[str], bool]
) -> str:
    """Settle the vendor from the declaration, sysfs and the device nodes."""
    declared = declared_vendor(environ)
    seen = {
        "pci": set(vendors_on_pci(sysfs).values()),
        "/dev": vendors_by_device_node(device_node),
    }
    return settle_vendor(declared=declared, seen=seen)
