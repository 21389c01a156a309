"""What a runner needs to know about an AMD node beyond the shared seam.

Why a module: the seam's protocols are vendor-neutral (NVML's vocabulary, translated by
the amdsmi backend); the few AMD-only facts a runner prints — the gfx target, where ECC
and retired pages were read — are gathered here so each runner's AMD path is one call,
not a second implementation.
"""

from __future__ import annotations

from runners.sdk.protocols import (
    AMD_VENDOR,
    GfxTargetedDevice,
    GpuDevice,
    GpuLostError,
    NotSupportedError,
    Platform,
)
from runners.sdk.report import Report


def is_amd(platform: Platform) -> bool:
    """Whether the settled vendor is AMD (raises ``VendorUndeterminedError`` if unsettled)."""
    return platform.vendor() == AMD_VENDOR


def gfx_target(device: GpuDevice) -> str | None:
    """The device's gfx target, or None where the part has none or cannot say."""
    if not isinstance(device, GfxTargetedDevice):
        return None
    try:
        return device.gfx_target()
    except (NotSupportedError, GpuLostError):
        return None


def print_gfx_target(*, report: Report, device: GpuDevice) -> None:
    """``gfxTarget`` evidence for an AMD part (nothing printed when it cannot be read)."""
    target = gfx_target(device)
    if target:
        report.metric("gfxTarget", target)
