"""The GPU preamble: which GPUs a runner measures, and NVML and CUDA agreeing on them.

Why one preamble: a runner names a device by its NVML identity (PCI bus id, name) but
drives it through CUDA, with CUDA's order forced to NVML's (``CUDA_DEVICE_ORDER=PCI_BUS_ID``).
If the two libraries count different GPUs, CUDA index *i* is not NVML device *i*: the
fold would blame (or clear) the wrong card, or a GPU would go unmeasured. That cannot be
measured around, so it is exit 3 (A16), written once here for every runner that uses CUDA.

On an AMD node the same preamble holds with amdsmi and HIP (``platform.vendor()`` says
which pair the seam opened); the HIP side is matched to amdsmi's PCI order by the ROCm
compute backend itself (``sdk/silicon/rocm_compute.py``). A node's allocation is read
from the vendor's device-plugin resource (``nvidia.com/gpu``, ``amd.com/gpu``).
"""

from __future__ import annotations

from dataclasses import dataclass

from runners.sdk.env import RunnerEnv, parse_quantity
from runners.sdk.outcome import RunnerError
from runners.sdk.protocols import AMD_VENDOR, NVIDIA_VENDOR, Compute, Nvml, Platform

#: The device-plugin resource each vendor's GPUs are allocated under.
GPU_RESOURCE_BY_VENDOR: dict[str, str] = {
    NVIDIA_VENDOR: "nvidia.com/gpu",
    AMD_VENDOR: "amd.com/gpu",
}
#: What each vendor's management and compute libraries are called, for messages.
LIBRARY_NAMES: dict[str, tuple[str, str]] = {
    NVIDIA_VENDOR: ("NVML", "CUDA"),
    AMD_VENDOR: ("amdsmi", "HIP"),
}


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
    #: Whose GPUs these are (``GPU_VENDORS``).
    vendor: str = NVIDIA_VENDOR


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


def allocated_gpus(*, env: RunnerEnv, vendor: str) -> int | None:
    """GPUs the scheduler allocated under the vendor's resource (None on a bare host)."""
    resource = GPU_RESOURCE_BY_VENDOR.get(vendor)
    text = None if resource is None else env.resource_limits.get(resource)
    return None if text is None else int(parse_quantity(text))


def open_gpus(*, platform: Platform, allocated: int | None) -> Gpus:
    """The vendor's management library's devices and its compute library, refused
    (exit 3) when their counts differ or the vendor cannot be settled."""
    vendor = platform.vendor()
    management, compute_name = LIBRARY_NAMES[vendor]
    nvml = platform.nvml()
    slots, visible = select_devices(nvml=nvml, allocated=allocated)
    compute = platform.compute()
    compute_count = compute.device_count()
    if compute_count != visible:
        raise RunnerError(
            f"{management} sees {visible} GPUs but {compute_name} sees {compute_count}"
        )
    return Gpus(nvml=nvml, compute=compute, slots=slots, visible=visible, vendor=vendor)


def open_node_gpus(*, platform: Platform, env: RunnerEnv) -> Gpus:
    """:func:`open_gpus` with the allocation read from the settled vendor's resource:
    what a runner that may run on either vendor calls."""
    return open_gpus(platform=platform, allocated=allocated_gpus(env=env, vendor=platform.vendor()))
