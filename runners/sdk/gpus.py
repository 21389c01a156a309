"""The GPU preamble: which GPUs a runner measures, and NVML and CUDA agreeing on them.

Why one preamble: a runner names a device by its NVML identity (PCI bus id, name) but
drives it through CUDA, with CUDA's order forced to NVML's (``CUDA_DEVICE_ORDER=PCI_BUS_ID``).
If the two libraries count different GPUs, CUDA index *i* is not NVML device *i*: the
fold would blame (or clear) the wrong card, or a GPU would go unmeasured. That cannot be
measured around, so it is exit 3 (A16), written once here for every runner that uses CUDA.
"""

from __future__ import annotations

from dataclasses import dataclass

from runners.sdk.outcome import RunnerError
from runners.sdk.protocols import Compute, Nvml, Platform


@dataclass(frozen=True)
class DeviceSlot:
    """A device a runner measures: NVML index plus identity for the fold lines."""

    index: int
    pci_bus_id: str
    name: str


@dataclass(frozen=True)
class Gpus:
    """The GPUs a CUDA runner measures, through both libraries, agreed on."""

    nvml: Nvml
    compute: Compute
    slots: list[DeviceSlot]
    visible: int


def select_devices(*, nvml: Nvml, allocated: int | None) -> tuple[list[DeviceSlot], int]:
    """The devices to measure and how many are visible; refuses a short allocation (A17)."""
    visible = nvml.device_count()
    if visible == 0:
        raise RunnerError("no GPU visible")
    if allocated is not None and visible < allocated:
        raise RunnerError(f"{allocated} GPUs allocated but only {visible} visible")
    slots = []
    for index in range(visible):
        device = nvml.device(index)
        slots.append(DeviceSlot(index=index, pci_bus_id=device.pci_bus_id(), name=device.name()))
    return slots, visible


def open_gpus(*, platform: Platform, allocated: int | None) -> Gpus:
    """NVML's devices and the compute library, refused (exit 3) when their counts differ."""
    nvml = platform.nvml()
    slots, visible = select_devices(nvml=nvml, allocated=allocated)
    compute = platform.compute()
    cuda_count = compute.device_count()
    if cuda_count != visible:
        raise RunnerError(f"NVML sees {visible} GPUs but CUDA sees {cuda_count}")
    return Gpus(nvml=nvml, compute=compute, slots=slots, visible=visible)
