"""HIP compute through PyTorch's ROCm build, indexed like the management library.

Why a wrapper and not a second PyTorch path: a ROCm build of PyTorch answers the same
``torch.cuda`` API through HIP, so the GEMM, load and copy code of ``silicon/compute.py``
runs unchanged. Two things differ and are enforced here:

- the build must be ROCm's (``torch.version.hip`` set): a CUDA wheel on an AMD node
  sees no device, and its failure would read as a driver fault;
- HIP does not honour ``CUDA_DEVICE_ORDER=PCI_BUS_ID``, so HIP device *i* is not amdsmi
  device *i* in general. Each HIP device is matched to the seam's index by its PCI
  address (``torch.cuda.get_device_properties``); where the build cannot say, more than
  one device is refused (exit 3), as a count mismatch is in ``sdk/gpus.py``.

FP8 on gfx942 uses ``float8_e4m3fnuz`` (``silicon/compute.py:fp8_format``). ``tf32`` is
CDNA3's XF32, which hipBLASLt uses for float32 GEMMs only with ``HIPBLASLT_ALLOW_TF32=1``
(set in the gemm-sweep ROCm image); without it a ``tf32`` GEMM would silently be plain
FP32, so it is refused (``NotSupportedError`` naming the variable: a declared skip in
gemm-sweep) rather than measured under the wrong name.

Written against PyTorch's ROCm API; untested on AMD silicon here.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from runners.sdk.protocols import (
    DriverUnavailableError,
    GemmCheck,
    LoadHandle,
    NotSupportedError,
)
from runners.sdk.silicon.compute import TorchCompute


def hip_pci_address(props: Any) -> str | None:
    """``dddd:bb:dd.0`` from a device's properties, or None when the build does not say."""
    bus = getattr(props, "pci_bus_id", None)
    device = getattr(props, "pci_device_id", None)
    domain = getattr(props, "pci_domain_id", 0)
    if not isinstance(bus, int) or not isinstance(device, int) or not isinstance(domain, int):
        return None
    return f"{domain:04x}:{bus:02x}:{device:02x}.0"


#: What makes hipBLASLt run float32 GEMMs on the XF32 matrix path.
XF32_ENV = "HIPBLASLT_ALLOW_TF32"


def require_xf32(environ: Mapping[str, str]) -> None:
    """Refuse ``tf32`` unless this process asked hipBLASLt for XF32."""
    if environ.get(XF32_ENV) != "1":
        raise NotSupportedError(
            f"tf32 on ROCm is XF32 through hipBLASLt, which needs {XF32_ENV}=1 "
            "(unset here: a float32 GEMM would run as plain FP32)"
        )


def match_devices(*, seam_bdfs: Sequence[str], hip_bdfs: Sequence[str | None]) -> list[int]:
    """HIP index for each seam index (seam order = PCI order), or DriverUnavailableError."""
    if len(seam_bdfs) != len(hip_bdfs):
        raise DriverUnavailableError(
            f"amdsmi sees {len(seam_bdfs)} GPUs but HIP sees {len(hip_bdfs)}"
        )
    if len(seam_bdfs) == 1:
        return [0]
    if any(bdf is None for bdf in hip_bdfs):
        raise DriverUnavailableError(
            "this PyTorch build gives no PCI address per HIP device: HIP's order cannot be "
            "matched to amdsmi's on a multi-GPU node"
        )
    by_address = {str(bdf).lower(): hip for hip, bdf in enumerate(hip_bdfs)}
    mapping = []
    for bdf in seam_bdfs:
        hip = by_address.get(bdf.lower())
        if hip is None:
            raise DriverUnavailableError(f"GPU {bdf} (amdsmi) has no HIP device")
        mapping.append(hip)
    return mapping


class RocmCompute:
    """``TorchCompute`` on a ROCm build, device indices translated to HIP's."""

    def __init__(self, *, seam_bdfs: Sequence[str]) -> None:
        # torch is imported by TorchCompute alone (the import contract names that one
        # module); its handle is read back from it, inside this package.
        try:
            self._inner = TorchCompute()
        except DriverUnavailableError as error:
            raise DriverUnavailableError(
                f"{error}; an AMD node needs PyTorch's ROCm build (torch.version.hip set)"
            ) from error
        torch: Any = self._inner.torch_module
        if getattr(torch.version, "hip", None) is None:
            raise DriverUnavailableError(
                "this PyTorch is not a ROCm build (torch.version.hip is None): an AMD node "
                "needs the ROCm wheel or a rocm/pytorch image"
            )
        count = self._inner.device_count()
        hip_bdfs = [hip_pci_address(torch.cuda.get_device_properties(i)) for i in range(count)]
        self._hip = match_devices(seam_bdfs=seam_bdfs, hip_bdfs=hip_bdfs)

    def device_count(self) -> int:
        return len(self._hip)

    def built_arch_list(self) -> list[str]:
        return self._inner.built_arch_list()

    def gemm_check(self, *, device: int, precision: str, size: int) -> GemmCheck:
        if precision == "tf32":
            require_xf32(os.environ)
        return self._inner.gemm_check(device=self._hip[device], precision=precision, size=size)

    def gemm_throughput_tflops(
        self, *, device: int, precision: str, size: int, seconds: float
    ) -> float:
        if precision == "tf32":
            require_xf32(os.environ)
        return self._inner.gemm_throughput_tflops(
            device=self._hip[device], precision=precision, size=size, seconds=seconds
        )

    def start_load(self, devices: Sequence[int]) -> LoadHandle:
        return _SeamLoad(
            inner=self._inner.start_load([self._hip[d] for d in devices]),
            seam_of={self._hip[d]: d for d in devices},
        )

    def copy_bandwidth_gbs(
        self, *, device: int, direction: str, nbytes: int, repeats: int
    ) -> float:
        return self._inner.copy_bandwidth_gbs(
            device=self._hip[device], direction=direction, nbytes=nbytes, repeats=repeats
        )

    def peer_bandwidth_gbs(
        self, *, src: int, dst: int, mode: str, nbytes: int, repeats: int
    ) -> float | None:
        return self._inner.peer_bandwidth_gbs(
            src=self._hip[src], dst=self._hip[dst], mode=mode, nbytes=nbytes, repeats=repeats
        )


class _SeamLoad:
    """A load whose per-device results come back under the seam's indices."""

    def __init__(self, *, inner: LoadHandle, seam_of: dict[int, int]) -> None:
        self._inner = inner
        self._seam_of = seam_of

    def stop(self) -> dict[int, float]:
        return {self._seam_of[hip]: tflops for hip, tflops in self._inner.stop().items()}
