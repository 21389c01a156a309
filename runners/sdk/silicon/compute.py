"""Compute on silicon through PyTorch (choice argued in docs/runners.md).

Device indices are NVML's: ``CUDA_DEVICE_ORDER=PCI_BUS_ID`` is set before CUDA starts so
CUDA's numbering is the PCI order NVML uses. Timings use CUDA events (device-side), so
host scheduling noise does not lower a figure.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Sequence
from typing import Any

from runners.sdk.protocols import DriverUnavailableError, GemmCheck, NotSupportedError

#: Largest finite value of each FP8 (e4m3) format PyTorch offers.
FP8_MAX: dict[str, float] = {"float8_e4m3fn": 448.0, "float8_e4m3fnuz": 240.0}


def fp8_format(*, hip: bool, arch: str) -> str:
    """The e4m3 dtype the part's FP8 matrix path takes: OCP ``float8_e4m3fn``, except
    ROCm on gfx942 (MI300X/MI325X), whose matrix cores take ``float8_e4m3fnuz``.

    Why a rule: an fnuz part fed OCP bytes reads every value off by one exponent step (and
    0x80 as NaN), so a smoke test would fail healthy parts or measure a different GEMM.
    ``arch`` is ``gcnArchName`` (``gfx942:sramecc+:xnack-``), empty on a CUDA build.
    """
    if hip and arch.split(":", 1)[0] == "gfx942":
        return "float8_e4m3fnuz"
    return "float8_e4m3fn"


class TorchLoad:
    """One thread per device launching bf16 GEMMs until stopped."""

    def __init__(self, *, torch: Any, devices: Sequence[int], size: int = 8192) -> None:
        self._torch = torch
        self._stop = threading.Event()
        self._results: dict[int, float] = {}
        self._errors: list[BaseException] = []
        self._threads = [
            threading.Thread(target=self._run, args=(device, size), daemon=True)
            for device in devices
        ]
        for thread in self._threads:
            thread.start()

    def _run(self, device: int, size: int) -> None:
        torch = self._torch
        try:
            with torch.cuda.device(device):
                a = torch.randn(size, size, device=device, dtype=torch.bfloat16)
                b = torch.randn(size, size, device=device, dtype=torch.bfloat16)
                torch.cuda.synchronize(device)
                started = time.perf_counter()
                iterations = 0
                while not self._stop.is_set():
                    for _ in range(8):
                        torch.matmul(a, b)
                    iterations += 8
                    torch.cuda.synchronize(device)
                elapsed = time.perf_counter() - started
                self._results[device] = 2.0 * size**3 * iterations / elapsed / 1e12
        except BaseException as error:
            self._errors.append(error)

    def stop(self) -> dict[int, float]:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=60)
        if self._errors:
            raise RuntimeError(f"load failed: {self._errors[0]!r}") from self._errors[0]
        if any(thread.is_alive() for thread in self._threads):
            raise RuntimeError("load thread did not stop within 60 s")
        return dict(self._results)


class TorchCompute:
    def __init__(self) -> None:
        os.environ.setdefault("CUDA_DEVICE_ORDER", "PCI_BUS_ID")
        try:
            import torch
        except ImportError as error:
            raise DriverUnavailableError(f"PyTorch is not installed: {error}") from error
        if not torch.cuda.is_available():
            raise DriverUnavailableError(
                "CUDA is not available to PyTorch (no driver or no device)"
            )
        self._t = torch

    @property
    def torch_module(self) -> Any:
        """The imported torch (read-only): for the ROCm wrapper in this package, so torch
        is imported in this one module (the import contract) and nowhere else."""
        return self._t

    def _fp8_dtype(self, device: int) -> tuple[Any, float]:
        """The FP8 dtype of ``device`` and its largest finite value."""
        torch = self._t
        arch = str(getattr(torch.cuda.get_device_properties(device), "gcnArchName", ""))
        name = fp8_format(hip=getattr(torch.version, "hip", None) is not None, arch=arch)
        dtype = getattr(torch, name, None)
        if dtype is None:
            raise NotSupportedError(f"torch {torch.__version__} has no torch.{name}")
        return dtype, FP8_MAX[name]

    def device_count(self) -> int:
        return int(self._t.cuda.device_count())

    def built_arch_list(self) -> list[str]:
        return [str(arch) for arch in self._t.cuda.get_arch_list()]

    def _product(self, *, precision: str, a32: Any, b32: Any, device: int) -> tuple[Any, Any]:
        """The low-precision product and its float64 reference from the same operands."""
        torch = self._t
        if precision == "bf16":
            a, b = a32.to(torch.bfloat16), b32.to(torch.bfloat16)
            return torch.matmul(a, b), torch.matmul(a.double(), b.double())
        if precision == "fp8":
            fp8, fp8_max = self._fp8_dtype(device)
            scale_a = (a32.abs().max() / fp8_max).float()
            scale_b = (b32.abs().max() / fp8_max).float()
            a8 = (a32 / scale_a).to(fp8)
            # _scaled_mm wants the second operand column-major.
            b8 = (b32 / scale_b).to(fp8).t().contiguous().t()
            out = torch._scaled_mm(
                a8, b8, scale_a=scale_a, scale_b=scale_b, out_dtype=torch.bfloat16
            )
            if isinstance(out, tuple):  # torch < 2.5 also returned amax
                out = out[0]
            ref = torch.matmul(
                a8.float().double() * scale_a.double(), b8.float().double() * scale_b.double()
            )
            return out, ref
        if precision == "tf32":
            return self._tf32(a32, b32), torch.matmul(a32.double(), b32.double())
        if precision == "fp64":
            a, b = a32.double(), b32.double()
            # The reference is the same product through a different kernel (two half-K
            # GEMMs summed): no wider type exists on the device to check FP64 against.
            half = a.shape[1] // 2
            ref = torch.matmul(a[:, :half], b[:half]) + torch.matmul(a[:, half:], b[half:])
            return torch.matmul(a, b), ref
        if precision == "fp4":
            raise self._no_fp4()
        raise ValueError(f"no implemented path for precision {precision!r}")

    def _tf32(self, a32: Any, b32: Any) -> Any:
        """A float32 GEMM on the TF32 tensor cores (the global flag restored after)."""
        torch = self._t
        previous = torch.backends.cuda.matmul.allow_tf32
        torch.backends.cuda.matmul.allow_tf32 = True
        try:
            return torch.matmul(a32, b32)
        finally:
            torch.backends.cuda.matmul.allow_tf32 = previous

    def _no_fp4(self) -> NotSupportedError:
        """What this image lacks for a block-scaled FP4 GEMM, named for the declared skip."""
        torch = self._t
        missing = [
            name for name in ("float4_e2m1fn_x2", "float8_e8m0fnu") if not hasattr(torch, name)
        ]
        if missing:
            return NotSupportedError(
                f"torch {torch.__version__} has no {', '.join('torch.' + m for m in missing)} "
                "(block-scaled FP4 GEMMs need PyTorch >= 2.8 built with CUDA >= 12.8)"
            )
        return NotSupportedError(
            f"torch {torch.__version__} exposes FP4 dtypes but this backend has no validated "
            "block-scaled FP4 GEMM path yet (torch._scaled_mm with e8m0 block scales)"
        )

    def _operands(self, *, device: int, size: int) -> tuple[Any, Any]:
        torch = self._t
        generator = torch.Generator(device=f"cuda:{device}").manual_seed(20261129)
        shape = (size, size)
        kwargs = {"device": f"cuda:{device}", "dtype": torch.float32, "generator": generator}
        return torch.randn(*shape, **kwargs), torch.randn(*shape, **kwargs)

    def gemm_check(self, *, device: int, precision: str, size: int) -> GemmCheck:
        torch = self._t
        with torch.cuda.device(device):
            a32, b32 = self._operands(device=device, size=size)
            out, ref = self._product(precision=precision, a32=a32, b32=b32, device=device)
            finite = torch.isfinite(out)
            nonfinite = int((~finite).sum().item())
            max_abs_error = None
            if bool(finite.any().item()):
                diff = (out.double() - ref).abs()
                max_abs_error = float(diff[finite].max().item())
            max_abs_ref = float(ref.abs().max().item())
            torch.cuda.synchronize(device)
        return GemmCheck(
            precision=precision,
            shape=(size, size, size),
            nonfinite=nonfinite,
            max_abs_error=max_abs_error,
            max_abs_ref=max_abs_ref,
        )

    def gemm_throughput_tflops(
        self, *, device: int, precision: str, size: int, seconds: float
    ) -> float:
        torch = self._t
        with torch.cuda.device(device):
            a32, b32 = self._operands(device=device, size=size)
            if precision == "bf16":
                a, b = a32.to(torch.bfloat16), b32.to(torch.bfloat16)

                def step() -> None:
                    torch.matmul(a, b)
            elif precision == "fp8":
                one = torch.ones((), device=f"cuda:{device}", dtype=torch.float32)
                fp8, _ = self._fp8_dtype(device)
                a8 = a32.to(fp8)
                b8 = b32.to(fp8).t().contiguous().t()

                def step() -> None:
                    torch._scaled_mm(a8, b8, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
            elif precision == "tf32":

                def step() -> None:
                    self._tf32(a32, b32)
            elif precision == "fp64":
                a64, b64 = a32.double(), b32.double()

                def step() -> None:
                    torch.matmul(a64, b64)
            elif precision == "fp4":
                raise self._no_fp4()
            else:
                raise ValueError(f"no implemented path for precision {precision!r}")
            for _ in range(3):
                step()
            torch.cuda.synchronize(device)
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(10):
                step()
            end.record()
            end.synchronize()
            per_iter_s = start.elapsed_time(end) / 1e3 / 10
            iterations = max(10, int(seconds / max(per_iter_s, 1e-6)))
            start.record()
            for _ in range(iterations):
                step()
            end.record()
            end.synchronize()
            elapsed_s = start.elapsed_time(end) / 1e3
        return float(2.0 * size**3 * iterations / elapsed_s / 1e12)

    def start_load(self, devices: Sequence[int]) -> TorchLoad:
        return TorchLoad(torch=self._t, devices=devices)

    def copy_bandwidth_gbs(
        self, *, device: int, direction: str, nbytes: int, repeats: int
    ) -> float:
        torch = self._t
        with torch.cuda.device(device):
            dev = torch.empty(nbytes, dtype=torch.uint8, device=f"cuda:{device}")
            if direction == "d2d":
                other = torch.empty_like(dev)

                def op() -> None:
                    other.copy_(dev)
            elif direction in ("h2d", "d2h"):
                host = torch.empty(nbytes, dtype=torch.uint8, pin_memory=True)

                def op() -> None:
                    if direction == "h2d":
                        dev.copy_(host, non_blocking=True)
                    else:
                        host.copy_(dev, non_blocking=True)
            else:
                raise ValueError(f"unknown copy direction {direction!r}")
            op()
            torch.cuda.synchronize(device)
            best_ms = float("inf")
            for _ in range(repeats):
                start = torch.cuda.Event(enable_timing=True)
                end = torch.cuda.Event(enable_timing=True)
                start.record()
                op()
                end.record()
                end.synchronize()
                best_ms = min(best_ms, start.elapsed_time(end))
        # A device-to-device copy reads and writes every byte: count both (docs/runners.md).
        moved = 2 * nbytes if direction == "d2d" else nbytes
        return moved / (best_ms / 1e3) / 1e9

    def peer_bandwidth_gbs(
        self, *, src: int, dst: int, mode: str, nbytes: int, repeats: int
    ) -> float | None:
        torch = self._t
        if not torch.cuda.can_device_access_peer(src, dst):
            return None
        source = torch.empty(nbytes, dtype=torch.uint8, device=f"cuda:{src}")
        target = torch.empty(nbytes, dtype=torch.uint8, device=f"cuda:{dst}")
        # "read": the destination pulls from its peer; "write": the source pushes.
        driver = dst if mode == "read" else src
        best_s = float("inf")
        with torch.cuda.device(driver):
            target.copy_(source)
            for _ in range(repeats):
                torch.cuda.synchronize(src)
                torch.cuda.synchronize(dst)
                started = time.perf_counter()
                target.copy_(source)
                torch.cuda.synchronize(src)
                torch.cuda.synchronize(dst)
                best_s = min(best_s, time.perf_counter() - started)
        return nbytes / best_s / 1e9
