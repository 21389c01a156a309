"""gemm-sweep: one precision (axis ``precision``) on every GPU: throughput and error.

``BURNIN_VARIANT_PRECISION`` picks fp4/fp8/bf16/tf32/fp64 (default bf16; anything else
exits 3). Each GPU runs a reference check (GEMM against a float64 reference from the same
operands) before and after a throughput window; the window is ``BURNIN_GEMM_SWEEP_SECONDS``
(default 10 s, capped by the budget) per GPU, one GPU at a time so each gets the whole
host. The runner fails on non-finite output or an error above the precision's tolerance;
throughput is for thresholds (``achievedTflops``, the slowest GPU). On an AMD node the
precision table is the gfx target's (``precisions.require_gfx``) and ``gfxTarget`` is
printed; a ROCm stack without XF32 answers ``tf32`` with a declared skip naming it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from runners.gemm_sweep.precisions import PRECISIONS, TOLERANCE, require_capability, require_gfx
from runners.sdk.entry import RunnerContext
from runners.sdk.fold import print_fold, print_spread, settle_concurrency
from runners.sdk.gpus import DeviceSlot, Gpus, open_node_gpus
from runners.sdk.outcome import DeclaredSkip, Failed, Passed, RunnerError, Verdict
from runners.sdk.protocols import AMD_VENDOR, Compute, GemmCheck, NotSupportedError
from runners.sdk.report import Report
from runners.sdk.rocm import gfx_target

SIZE = 8192
CHECK_SIZE = 4096
DEFAULT_SECONDS = 10.0
BUDGET_MARGIN_S = 10.0


@dataclass
class DeviceSweep:
    slot: DeviceSlot
    checks: list[GemmCheck] = field(default_factory=list)
    tflops: float = 0.0

    @property
    def nonfinite(self) -> int:
        return sum(c.nonfinite for c in self.checks)

    @property
    def relative_error(self) -> float | None:
        values = [
            c.max_abs_error / c.max_abs_ref
            for c in self.checks
            if c.max_abs_error is not None and c.max_abs_ref
        ]
        return max(values) if values else None

    def badness(self) -> tuple[int, float, float]:
        rel = self.relative_error
        return (self.nonfinite, rel if rel is not None else float("inf"), -self.tflops)


#: Precisions whose missing library path is a declared skip naming it, per vendor: FP4
#: everywhere (the reference), and on AMD also tf32 (ROCm's XF32 is a stack option).
_SKIPPABLE_IN_IMAGE: dict[str, frozenset[str]] = {AMD_VENDOR: frozenset({"fp4", "tf32"})}


def _backend(
    precision: str, error: NotSupportedError, slot: DeviceSlot, *, vendor: str
) -> Exception:
    """The compute library has no path for a precision the part has.

    FP4 follows the reference (a library without block-scaled FP4 is a declared skip
    naming what is missing), and so does tf32 on AMD; any other precision the part has but
    the image cannot run is Error: unjudged, so a run cannot settle Passed on a precision
    nobody tested.
    """
    text = f"GPU {slot.index}: {error}"
    if precision in _SKIPPABLE_IN_IMAGE.get(vendor, frozenset({"fp4"})):
        return DeclaredSkip(f"{precision} GEMM not available in this image: {text}")
    return RunnerError(f"{precision} GEMM not available in this image: {text}")


def _require_part(*, report: Report, gpus: Gpus, precision: str) -> None:
    """A declared skip when any GPU lacks the precision (by capability or gfx target)."""
    for slot in gpus.slots:
        device = gpus.nvml.device(slot.index)
        if gpus.vendor != AMD_VENDOR:
            require_capability(precision, device.compute_capability())
            continue
        target = gfx_target(device)
        if target is None:
            raise RunnerError(f"GPU {slot.index}: an AMD part whose gfx target cannot be read")
        report.metric("gfxTarget", target)
        require_gfx(precision, target)


def _sweep_device(
    *, compute: Compute, slot: DeviceSlot, precision: str, seconds: float, vendor: str
) -> DeviceSweep:
    sweep = DeviceSweep(slot=slot)
    try:
        sweep.checks.append(
            compute.gemm_check(device=slot.index, precision=precision, size=CHECK_SIZE)
        )
        sweep.tflops = compute.gemm_throughput_tflops(
            device=slot.index, precision=precision, size=SIZE, seconds=seconds
        )
        sweep.checks.append(
            compute.gemm_check(device=slot.index, precision=precision, size=CHECK_SIZE)
        )
    except NotSupportedError as error:
        raise _backend(precision, error, slot, vendor=vendor) from error
    return sweep


def measure(ctx: RunnerContext) -> Verdict:
    report = ctx.report
    precision = ctx.env.choice("BURNIN_VARIANT_PRECISION", default="bf16", allowed=PRECISIONS)
    report.metric("gemmPrecision", precision)
    platform = ctx.platform()
    gpus = open_node_gpus(platform=platform, env=ctx.env)
    _require_part(report=report, gpus=gpus, precision=precision)
    budget = ctx.env.duration_budget_s
    seconds = ctx.env.number(
        "BURNIN_GEMM_SWEEP_SECONDS", default=DEFAULT_SECONDS, low=0.1, high=600
    )
    if budget is not None:
        seconds = min(seconds, max((budget - BUDGET_MARGIN_S) / len(gpus.slots), 0.1))
    concurrency = settle_concurrency(
        report=report, requested=ctx.env.device_concurrency, default="sequential"
    )
    sweeps = [
        _sweep_device(
            compute=gpus.compute,
            slot=slot,
            precision=precision,
            seconds=seconds,
            vendor=gpus.vendor,
        )
        for slot in gpus.slots
    ]
    for s in sweeps:
        report.note(
            f"device {s.slot.index} ({s.slot.pci_bus_id}) {precision}: {s.tflops:.1f} TFLOP/s, "
            f"relative error {s.relative_error}, non-finite {s.nonfinite}"
        )
    worst = max(sweeps, key=DeviceSweep.badness)
    report.metric("gemmShape", f"{SIZE}x{SIZE}x{SIZE}")
    report.metric("achievedTflops", min(s.tflops for s in sweeps))
    nonfinite = sum(s.nonfinite for s in sweeps)
    report.metric("nonfiniteCount", nonfinite)
    relative = [r for s in sweeps if (r := s.relative_error) is not None]
    if relative:
        report.metric("maxRelativeError", max(relative))
    # Derived from the measured rate and window (the library times the GEMMs itself).
    iterations = sum(round(s.tflops * 1e12 * seconds / (2.0 * SIZE**3)) for s in sweeps)
    report.metric("iterationsCompleted", iterations)
    report.metric("totalKernelMs", seconds * 1000.0 * len(sweeps))
    report.metric("sampleWindowS", seconds)
    print_spread(
        report=report,
        name="gemmThroughputSpreadPct",
        slots=gpus.slots,
        values=[s.tflops for s in sweeps],
    )
    print_fold(
        report=report, gpus=gpus, worst=worst.slot, concurrency=concurrency, window_s=seconds
    )
    if nonfinite:
        return Failed(f"GPU {worst.slot.index}: {nonfinite} non-finite {precision} GEMM elements")
    if len(relative) != len(sweeps):
        raise RunnerError("a GPU produced no comparable output")
    rel = worst.relative_error
    if rel is not None and rel > TOLERANCE[precision]:
        return Failed(
            f"GPU {worst.slot.index} {precision} relative error {rel:.3g} exceeds "
            f"{TOLERANCE[precision]:g}"
        )
    return Passed()
