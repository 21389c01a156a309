"""Assembling the simulated platform: every protocol answered from one simulated state.

An NVIDIA profile gets the simulated NVML and CUDA. An AMD profile gets the simulated
*amdsmi library* (``simgpu/amdsmi.py``), read through the amdsmi adapter the platform
choice passes in as ``amd_library`` (the simulator may not import silicon code, and the
adapter is what this simulation exists to exercise), plus simulated HIP compute and an
AMD node's sysfs and kernel log. Either way the platform is ``provenance=sim``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from runners.sdk.protocols import (
    AMD_VENDOR,
    Dcgmi,
    DriverUnavailableError,
    Nvml,
    Platform,
    Sysfs,
    ToolMissingError,
)
from runners.sdk.simgpu.amd_compute import AmdSimCompute
from runners.sdk.simgpu.amd_host import AmdSimKmsg, AmdSimSysfs
from runners.sdk.simgpu.amdsmi import SimAmdSmi
from runners.sdk.simgpu.compute import SimCompute
from runners.sdk.simgpu.fabric import SimFabric
from runners.sdk.simgpu.host import SimDcgmi, SimKmsg, SimSysfs
from runners.sdk.simgpu.nvml import SimNvml
from runners.sdk.simgpu.spec import parse_spec
from runners.sdk.simgpu.state import SimState

#: Builds the seam's management library over an amdsmi-shaped object and a sysfs.
AmdLibraryFactory = Callable[[Any, Sysfs], Nvml]


def _no_dcgmi() -> Dcgmi:
    raise ToolMissingError("dcgmi is NVIDIA's DCGM: the simulated AMD node has none")


def open_simulated(spec_text: str, *, amd_library: AmdLibraryFactory | None = None) -> Platform:
    state = SimState(spec=parse_spec(spec_text))
    fabric = SimFabric(state)
    profile = state.spec.profile
    if profile.vendor == AMD_VENDOR:
        if amd_library is None:
            raise DriverUnavailableError(f"simulated {profile.key} needs the amdsmi adapter")
        factory = amd_library
        sysfs = AmdSimSysfs(state)
        return Platform(
            provenance="sim",
            clock=state.clock,
            sysfs=sysfs,
            _nvml=lambda: factory(SimAmdSmi(state), sysfs),
            _compute=lambda: AmdSimCompute(state),
            _kmsg=lambda: AmdSimKmsg(state),
            _dcgmi=_no_dcgmi,
            _fabric=lambda: fabric,
            _vendor=lambda: AMD_VENDOR,
        )
    return Platform(
        provenance="sim",
        clock=state.clock,
        sysfs=SimSysfs(state),
        _nvml=lambda: SimNvml(state),
        _compute=lambda: SimCompute(state),
        _kmsg=lambda: SimKmsg(state),
        _dcgmi=lambda: SimDcgmi(state),
        _fabric=lambda: fabric,
        _vendor=lambda: profile.vendor,
    )
