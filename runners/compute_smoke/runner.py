"""compute-smoke: one arch-correct GEMM per GPU, compared with a float64 reference.

Burst-only: ``BURNIN_DURATION_SECONDS`` is ignored (A15). Fails on any non-finite output
element or on a normwise error above the precision's tolerance; the throughput is
evidence only. On an AMD node the precision follows the gfx target (``precision.py``),
``gfxTarget`` is printed and ``computeCap`` is ``n/a`` (AMD parts have no CUDA capability);
``builtCudaArch`` then lists the ROCm build's gfx targets.
"""

from __future__ import annotations

from dataclasses import dataclass

from runners.compute_smoke.precision import (
    TOLERANCE,
    choose_precision,
    gfx_precision,
    image_runs_on,
    image_runs_on_gfx,
)
from runners.sdk.entry import RunnerContext
from runners.sdk.fold import print_fold, settle_concurrency
from runners.sdk.gpus import DeviceSlot, open_node_gpus
from runners.sdk.outcome import DeclaredSkip, Failed, Passed, RunnerError, Verdict
from runners.sdk.protocols import AMD_VENDOR, Compute, GemmCheck, GpuDevice, NotSupportedError
from runners.sdk.rocm import gfx_target

CHECK_SIZE = 4096
THROUGHPUT_SIZE = 8192
THROUGHPUT_SECONDS = 1.0


@dataclass(frozen=True)
class DeviceResult:
    slot: DeviceSlot
    #: ``sm_90`` or ``gfx942``: what the precision rule read.
    arch: str
    #: The CUDA capability; None on an AMD part (it has a gfx target instead).
    capability: tuple[int, int] | None
    check: GemmCheck
    tflops: float

    @property
    def relative_error(self) -> float | None:
        if self.check.max_abs_error is None or not self.check.max_abs_ref:
            return None
        return self.check.max_abs_error / self.check.max_abs_ref

    def badness(self) -> tuple[int, float]:
        """Sort key: non-finite output first, then the larger error."""
        rel = self.relative_error
        return (self.check.nonfinite, rel if rel is not None else float("inf"))


def _measure_device(
    *, compute: Compute, slot: DeviceSlot, precision: str, arch: str
) -> tuple[GemmCheck, float]:
    """The check and the throughput; a library without the part's FP4 path is a declared
    skip naming what is missing (any other missing path is an Error, exit 3)."""
    try:
        check = compute.gemm_check(device=slot.index, precision=precision, size=CHECK_SIZE)
        tflops = compute.gemm_throughput_tflops(
            device=slot.index, precision=precision, size=THROUGHPUT_SIZE, seconds=THROUGHPUT_SECONDS
        )
    except NotSupportedError as error:
        if precision == "fp4":
            raise DeclaredSkip(
                f"{arch} has FP4 matrix units but this image cannot run an FP4 GEMM: {error}"
            ) from error
        raise RunnerError(f"{arch}: {precision} GEMM not available: {error}") from error
    return check, tflops


def _rule(
    *, device: GpuDevice, vendor: str, built: list[str]
) -> tuple[str, tuple[int, int] | None, str]:
    """``(arch, capability, precision)`` for one GPU, refusing an image without its code."""
    if vendor == AMD_VENDOR:
        target = gfx_target(device)
        if target is None:
            raise RunnerError("an AMD GPU whose gfx target cannot be read: no precision rule")
        precision = gfx_precision(target)
        if not image_runs_on_gfx(target, built):
            raise RunnerError(f"image not built for {target} (has {','.join(built)})")
        return target, None, precision
    capability = device.compute_capability()
    precision = choose_precision(capability)
    arch = f"sm_{capability[0]}{capability[1]}"
    if not image_runs_on(capability, built):
        raise RunnerError(f"image not built for {arch} (has {','.join(built)})")
    return arch, capability, precision


def measure(ctx: RunnerContext) -> Verdict:
    report = ctx.report
    platform = ctx.platform()
    # Compute first: builtCudaArch is printed on every path (the preamble reuses it).
    compute = platform.compute()
    built = compute.built_arch_list()
    report.metric("builtCudaArch", ",".join(built) if built else "none")
    gpus = open_node_gpus(platform=platform, env=ctx.env)
    nvml, slots = gpus.nvml, gpus.slots
    results = []
    for slot in slots:
        arch, capability, precision = _rule(
            device=nvml.device(slot.index), vendor=gpus.vendor, built=built
        )
        check, tflops = _measure_device(compute=compute, slot=slot, precision=precision, arch=arch)
        result = DeviceResult(
            slot=slot, arch=arch, capability=capability, check=check, tflops=tflops
        )
        results.append(result)
        report.note(
            f"device {slot.index} ({slot.pci_bus_id}) {precision}: nonfinite {check.nonfinite}, "
            f"relative error {result.relative_error}, {tflops:.1f} TFLOP/s"
        )
    worst = max(results, key=DeviceResult.badness)
    report.metric("gpuName", worst.slot.name)
    if worst.capability is None:
        report.unmeasurable("computeCap")  # an AMD part: a gfx target, no CUDA capability
        report.metric("gfxTarget", worst.arch)
    else:
        report.metric("computeCap", f"{worst.capability[0]}.{worst.capability[1]}")
    report.metric("pciBusId", worst.slot.pci_bus_id)
    report.metric("gemmPrecision", worst.check.precision)
    report.metric("gemmShape", "x".join(str(n) for n in worst.check.shape))
    nonfinite = sum(r.check.nonfinite for r in results)
    report.metric("nonfiniteCount", nonfinite)
    errors = [r.check.max_abs_error for r in results if r.check.max_abs_error is not None]
    if errors:
        report.metric("maxAbsError", max(errors))
    refs = [r.check.max_abs_ref for r in results if r.check.max_abs_ref is not None]
    if refs:
        report.metric("maxAbsRef", max(refs))
    relative = [r.relative_error for r in results if r.relative_error is not None]
    if relative:
        report.metric("maxRelativeError", max(relative))
    report.metric("throughputTflops", min(r.tflops for r in results))
    concurrency = settle_concurrency(
        report=report, requested=ctx.env.device_concurrency, default="sequential"
    )
    print_fold(report=report, gpus=gpus, worst=worst.slot, concurrency=concurrency)
    if nonfinite:
        return Failed(f"{nonfinite} non-finite GEMM output elements (worst GPU {worst.slot.index})")
    if len(relative) != len(results):
        raise RunnerError("a GPU produced no comparable output")
    for result in results:
        tolerance = TOLERANCE[result.check.precision]
        rel = result.relative_error
        if rel is not None and rel > tolerance:
            return Failed(
                f"GPU {result.slot.index} {result.check.precision} relative error {rel:.3g} "
                f"exceeds {tolerance:g}"
            )
    return Passed()
