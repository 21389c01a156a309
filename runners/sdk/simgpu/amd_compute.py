"""Simulated HIP compute (PyTorch's ROCm build) for the AMD profiles.

The arithmetic stand-ins are the NVIDIA simulation's (``simgpu/compute.py``: nominal
errors and throughputs from the profile, the same faults); what differs is what a ROCm
build says about itself (gfx targets, not sm_ arches), its failure text, and the peer
path (Infinity Fabric between Instinct parts, not NVLink), and the precisions the part's
matrix cores lack: gfx942 has no FP4, refused with AMD's wording (the runners' own rule
declares the skip before asking; this keeps a direct call honest). The simulated ROCm
stack has XF32 (``tf32``) and ``float8_e4m3fnuz`` (``fp8``), as a gfx942 image built
from the runners' ``Containerfile.rocm`` does.
"""

from __future__ import annotations

from collections.abc import Sequence

from runners.sdk.protocols import GemmCheck, LoadHandle, NotSupportedError
from runners.sdk.simgpu.compute import SimCompute
from runners.sdk.simgpu.state import SimState

#: The gfx targets a typical ROCm 6.x PyTorch wheel is built for (static under simulation).
SIM_BUILT_GFX = ["gfx900", "gfx906", "gfx908", "gfx90a", "gfx942", "gfx1030", "gfx1100"]
#: One direction of one MI300-class xGMI (Infinity Fabric) link, GB/s.
SIM_XGMI_PEER_GBS = 64.0
#: What ``low-bandwidth`` leaves of a link, as in ``simgpu/compute.py``.
LOW_BANDWIDTH_SCALE = 0.3
#: Precisions each simulated gfx target's matrix cores do not have.
GFX_MISSING_PRECISIONS: dict[str, frozenset[str]] = {"gfx942": frozenset({"fp4"})}


class AmdSimCompute:
    """HIP through a simulated ROCm PyTorch: the NVIDIA stand-ins, AMD's self-description."""

    def __init__(self, state: SimState) -> None:
        state.require_driver("HIP: no ROCm device (torch.cuda.is_available() is False)")
        self._state = state
        self._inner = SimCompute(state)

    def device_count(self) -> int:
        return self._inner.device_count()

    def built_arch_list(self) -> list[str]:
        return list(SIM_BUILT_GFX)

    def _require_precision(self, precision: str) -> None:
        target = self._state.spec.profile.gfx_target
        if precision in GFX_MISSING_PRECISIONS.get(target, frozenset()):
            raise NotSupportedError(f"{target} has no {precision.upper()} matrix path")

    def gemm_check(self, *, device: int, precision: str, size: int) -> GemmCheck:
        self._require_precision(precision)
        return self._inner.gemm_check(device=device, precision=precision, size=size)

    def gemm_throughput_tflops(
        self, *, device: int, precision: str, size: int, seconds: float
    ) -> float:
        self._require_precision(precision)
        return self._inner.gemm_throughput_tflops(
            device=device, precision=precision, size=size, seconds=seconds
        )

    def start_load(self, devices: Sequence[int]) -> LoadHandle:
        return self._inner.start_load(devices)

    def copy_bandwidth_gbs(
        self, *, device: int, direction: str, nbytes: int, repeats: int
    ) -> float:
        return self._inner.copy_bandwidth_gbs(
            device=device, direction=direction, nbytes=nbytes, repeats=repeats
        )

    def peer_bandwidth_gbs(
        self, *, src: int, dst: int, mode: str, nbytes: int, repeats: int
    ) -> float | None:
        # The inner call refuses a lost device; its NVLink figure is not AMD's.
        self._inner.peer_bandwidth_gbs(src=src, dst=dst, mode=mode, nbytes=nbytes, repeats=repeats)
        slow = any(self._state.fault_on("low-bandwidth", device) for device in (src, dst))
        return SIM_XGMI_PEER_GBS * (LOW_BANDWIDTH_SCALE if slow else 1.0)
