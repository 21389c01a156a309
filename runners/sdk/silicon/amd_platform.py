"""Assembling the AMD silicon platform: amdsmi, HIP through ROCm PyTorch, the host sources.

The host's clock, sysfs, kernel log and fabric are the NVIDIA platform's (nothing of
them is vendor-specific); the management library is amdsmi (``silicon/amd_smi.py``), the
compute library PyTorch's ROCm build (``silicon/rocm_compute.py``), both loaded on first
use. DCGM is NVIDIA's: ``dcgmi`` is refused here as a missing tool (exit 3).
"""

from __future__ import annotations

from collections.abc import Mapping

from runners.sdk.protocols import (
    AMD_VENDOR,
    Compute,
    Dcgmi,
    Nvml,
    Platform,
    Sysfs,
    ToolMissingError,
)
from runners.sdk.silicon.amd_smi import AmdSmiLibrary, load_amdsmi
from runners.sdk.silicon.platform import open_silicon


def _no_dcgmi() -> Dcgmi:
    raise ToolMissingError("dcgmi is NVIDIA's DCGM: an AMD node has no DCGM to run")


def open_rocm(environ: Mapping[str, str]) -> Platform:
    host = open_silicon(environ)
    sysfs: Sysfs = host.sysfs
    opened: list[AmdSmiLibrary] = []

    def smi() -> AmdSmiLibrary:
        if not opened:
            opened.append(AmdSmiLibrary(load_amdsmi(), sysfs=sysfs))
        return opened[0]

    def nvml() -> Nvml:
        return smi()

    def compute() -> Compute:
        from runners.sdk.silicon.rocm_compute import RocmCompute

        library = smi()
        bdfs = [library.device(i).pci_bus_id() for i in range(library.device_count())]
        return RocmCompute(seam_bdfs=bdfs)

    return Platform(
        provenance="silicon",
        clock=host.clock,
        sysfs=sysfs,
        _nvml=nvml,
        _compute=compute,
        _kmsg=host.open_kmsg,
        _dcgmi=_no_dcgmi,
        _fabric=host.fabric,
        _vendor=lambda: AMD_VENDOR,
    )
