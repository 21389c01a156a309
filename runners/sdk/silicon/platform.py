"""Assembling the silicon platform: the host's clock, sysfs, kernel log, NVML, PyTorch, dcgmi."""

from __future__ import annotations

import time
from collections.abc import Mapping

from runners.sdk.protocols import Compute, Nvml, Platform


class SystemClock:
    def monotonic(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        time.sleep(max(seconds, 0.0))


def open_silicon(environ: Mapping[str, str]) -> Platform:
    from runners.sdk.silicon.fabric import HostFabric
    from runners.sdk.silicon.host import HostDcgmi, HostSysfs, open_kmsg

    kmsg_path = environ.get("BURNIN_KMSG_PATH", "").strip() or "/dev/kmsg"
    sysfs_root = environ.get("BURNIN_SYSFS_ROOT", "").strip() or "/sys"
    dcgmi_path = environ.get("BURNIN_DCGMI_PATH", "").strip() or None
    fabric = HostFabric(
        sysfs_root=sysfs_root,
        tools_dir=environ.get("BURNIN_FABRIC_TOOLS_DIR", "").strip() or None,
    )

    def nvml() -> Nvml:
        from runners.sdk.silicon.nvml import SiliconNvml

        return SiliconNvml()

    def compute() -> Compute:
        from runners.sdk.silicon.compute import TorchCompute

        return TorchCompute()

    return Platform(
        provenance="silicon",
        clock=SystemClock(),
        sysfs=HostSysfs(sysfs_root),
        _nvml=nvml,
        _compute=compute,
        _kmsg=lambda: open_kmsg(kmsg_path),
        _dcgmi=lambda: HostDcgmi(dcgmi_path),
        _fabric=lambda: fabric,
    )
