"""Simulated compute: GEMM checks, sustained load and copies answered from the profile.

No arithmetic is performed: errors and throughputs are nominal figures (and the injected
faults), so under simulation they show that the runner's *logic* reacts correctly, never
that a part computes correctly.

Precisions follow the part's tensor cores as PyTorch exposes them: FP8 needs sm_89+,
block-scaled FP4 sm_100+ (B200, GB200, GB10 at sm_121), TF32 sm_80+; BF16 and FP64 run
everywhere (BF16 below sm_80 without tensor cores, as PyTorch does). A precision the part
lacks raises ``NotSupportedError`` naming what is missing, as the silicon backend does.
"""

from __future__ import annotations

from collections.abc import Sequence

from runners.sdk.protocols import GemmCheck, GpuLostError, NotSupportedError
from runners.sdk.simgpu.load_faults import (
    SDC_EVERY_NTH_CHECK,
    SDC_FAULT,
    SDC_RELATIVE_ERROR,
    mean_sm_scale,
)
from runners.sdk.simgpu.spec import NVLINK_DOWN_FAULT, PCIE_DOWNTRAIN_FAULT
from runners.sdk.simgpu.state import SimState

#: The arch list a typical CUDA 12.8 PyTorch wheel is built for (static under simulation).
SIM_BUILT_ARCHES = ["sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120", "compute_120"]
#: Dense throughput relative to BF16 (datasheet ratios of Hopper/Blackwell class parts).
_PRECISION_SPEEDUP = {"fp64": 0.068, "tf32": 0.5, "bf16": 1.0, "fp8": 2.0, "fp4": 4.0}
#: Normwise error against a float64 reference from the same (quantised) operands.
_NOMINAL_ERROR = {"fp64": 2.0e-15, "tf32": 4.0e-4, "bf16": 3.9e-3, "fp8": 2.1e-2, "fp4": 2.4e-2}
#: The lowest compute capability whose tensor cores (as PyTorch exposes them) run it.
_MIN_CAPABILITY = {"fp64": (0, 0), "bf16": (0, 0), "tf32": (8, 0), "fp8": (8, 9), "fp4": (10, 0)}
_EFFICIENCY = 0.8
#: What a link trained x8 at Gen4 carries of x16 at Gen5 (half the lanes, half the rate).
PCIE_DOWNTRAIN_SCALE = 0.25


class SimLoad:
    def __init__(self, *, state: SimState, devices: Sequence[int]) -> None:
        self._state = state
        self._devices = list(devices)
        state.start_load(self._devices)

    def stop(self) -> dict[int, float]:
        state = self._state
        loaded_for_s = state.stop_load(self._devices)
        profile = state.spec.profile
        result = {}
        for device in self._devices:
            scale = 345 / profile.rated_boost_sm_mhz if self._pinned(device) else 1.0
            if device == state.spec.faulty_index:
                scale *= mean_sm_scale(state.spec.faults, loaded_for_s)
            result[device] = profile.dense_bf16_tflops * _EFFICIENCY * scale
        return result

    def _pinned(self, device: int) -> bool:
        return self._state.fault_on("low-clock", device)


class SimCompute:
    def __init__(self, state: SimState) -> None:
        state.require_driver("CUDA driver not found (torch.cuda.is_available() is False)")
        self._state = state
        self._checks: dict[int, int] = {}

    def _require_precision(self, precision: str) -> None:
        if precision not in _MIN_CAPABILITY:
            raise ValueError(f"no implemented path for precision {precision!r}")
        capability = self._state.spec.profile.compute_capability
        need = _MIN_CAPABILITY[precision]
        if capability < need:
            raise NotSupportedError(
                f"{precision} GEMM needs sm_{need[0]}{need[1]}+, this part is "
                f"sm_{capability[0]}{capability[1]}"
            )

    def _corrupted(self, device: int) -> bool:
        """The ``sdc`` fault: every n-th check on the faulty device disagrees."""
        count = self._checks.get(device, 0) + 1
        self._checks[device] = count
        return self._state.fault_on(SDC_FAULT, device) and count % SDC_EVERY_NTH_CHECK == 0

    def _check(self, device: int) -> None:
        if not 0 <= device < self._state.spec.count:
            raise IndexError(device)
        if self._state.fault_on("fallen-off-bus", device):
            raise GpuLostError(f"CUDA error: GPU {device} has fallen off the bus", index=device)

    def device_count(self) -> int:
        return self._state.spec.count

    def built_arch_list(self) -> list[str]:
        return list(SIM_BUILT_ARCHES)

    def gemm_check(self, *, device: int, precision: str, size: int) -> GemmCheck:
        self._check(device)
        self._require_precision(precision)
        ref = 4.0 * size**0.5
        corrupted = self._corrupted(device)
        if self._state.fault_on("nan-compute", device):
            return GemmCheck(
                precision=precision,
                shape=(size, size, size),
                nonfinite=size * size // 64,
                max_abs_error=None,
                max_abs_ref=ref,
            )
        return GemmCheck(
            precision=precision,
            shape=(size, size, size),
            nonfinite=0,
            max_abs_error=ref * (SDC_RELATIVE_ERROR if corrupted else _NOMINAL_ERROR[precision]),
            max_abs_ref=ref,
        )

    def gemm_throughput_tflops(
        self, *, device: int, precision: str, size: int, seconds: float
    ) -> float:
        self._check(device)
        self._require_precision(precision)
        profile = self._state.spec.profile
        scale = 1.0
        if self._state.fault_on("low-clock", device):
            scale = profile.idle_sm_mhz / profile.rated_boost_sm_mhz
        self._state.clock.sleep(seconds)
        return profile.dense_bf16_tflops * _PRECISION_SPEEDUP[precision] * _EFFICIENCY * scale

    def start_load(self, devices: Sequence[int]) -> SimLoad:
        for device in devices:
            self._check(device)
        return SimLoad(state=self._state, devices=devices)

    def _bandwidth_scale(self, device: int) -> float:
        if self._state.fault_on("low-bandwidth", device):
            return 0.3
        return 1.0

    def _host_link_scale(self, device: int) -> float:
        """``pcie-downtrain``: x8 at Gen4 carries a quarter of x16 at Gen5."""
        if self._state.fault_on(PCIE_DOWNTRAIN_FAULT, device):
            return PCIE_DOWNTRAIN_SCALE
        return 1.0

    def _nvlink_scale(self, src: int, dst: int) -> float:
        """``nvlink-down``: peer traffic of the faulty device loses one link's share."""
        links = self._state.spec.profile.nvlinks
        if links and any(self._state.fault_on(NVLINK_DOWN_FAULT, d) for d in (src, dst)):
            return (links - 1) / links
        return 1.0

    def copy_bandwidth_gbs(
        self, *, device: int, direction: str, nbytes: int, repeats: int
    ) -> float:
        self._check(device)
        profile = self._state.spec.profile
        if direction == "d2d":
            nominal = profile.hbm_bandwidth_gbs * 0.9
        elif direction in ("h2d", "d2h"):
            nominal = profile.host_link_gbs * (1.0 if direction == "h2d" else 0.97)
            nominal *= self._host_link_scale(device)
        else:
            raise ValueError(f"unknown copy direction {direction!r}")
        gbs = nominal * self._bandwidth_scale(device)
        self._state.clock.sleep(nbytes * (repeats + 1) / (gbs * 1e9))
        return gbs

    def peer_bandwidth_gbs(
        self, *, src: int, dst: int, mode: str, nbytes: int, repeats: int
    ) -> float | None:
        self._check(src)
        self._check(dst)
        nvlink_gbs = 360.0 if self._state.spec.profile.compute_capability < (10, 0) else 720.0
        scale = min(self._bandwidth_scale(src), self._bandwidth_scale(dst))
        return nvlink_gbs * scale * self._nvlink_scale(src, dst)
