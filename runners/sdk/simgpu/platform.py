"""Assembling the simulated platform: every protocol answered from one simulated state."""

from __future__ import annotations

from runners.sdk.protocols import Platform
from runners.sdk.simgpu.compute import SimCompute
from runners.sdk.simgpu.fabric import SimFabric
from runners.sdk.simgpu.host import SimDcgmi, SimKmsg, SimSysfs
from runners.sdk.simgpu.nvml import SimNvml
from runners.sdk.simgpu.spec import parse_spec
from runners.sdk.simgpu.state import SimState


def open_simulated(spec_text: str) -> Platform:
    state = SimState(spec=parse_spec(spec_text))
    fabric = SimFabric(state)
    return Platform(
        provenance="sim",
        clock=state.clock,
        sysfs=SimSysfs(state),
        _nvml=lambda: SimNvml(state),
        _compute=lambda: SimCompute(state),
        _kmsg=lambda: SimKmsg(state),
        _dcgmi=lambda: SimDcgmi(state),
        _fabric=lambda: fabric,
    )
