"""compute-smoke: one FP4 GEMM per GPU, compared with a float64 reference.

Burst-only: ``BURNIN_DURATION_SECONDS`` is ignored (A15). Fails on any non-finite output
element or on a normwise error above the tolerance; the throughput is evidence only.

A test named FP4 passes only on a path that ran FP4 (``precision.py``): the rule is read
for every allocated GPU before anything runs, and when any of them has no FP4 matrix
units the whole test is a declared skip naming that architecture (A3), never an FP8 or
BF16 GEMM reported under the FP4 marker, and never a pass over the GPUs that do have
them. Reading every GPU first also keeps a lost GPU an Error rather than a skip. On an
AMD node the rule reads the gfx target, ``gfxTarget`` is printed and ``computeCap`` is
``n/a`` (AMD parts have no CUDA capability); ``builtCudaArch`` then lists the ROCm
build's gfx targets.
"""

from __future__ import annotations

from dataclasses import dataclass

from runners.compute_smoke.precision import (
    PRECISION,
    TOLERANCE,
    gfx_no_fp4_reason,
    image_runs_on,
    image_runs_on_gfx,
    no_fp4_reason,
)
from runners.sdk.entry import RunnerContext
from runners.sdk.fold import print_fold, settle_concurrency
from runners.sdk.gpus import DeviceSlot, open_node_gpus
from runners.sdk.outcome import DeclaredSkip, Failed, Passed, RunnerError, Verdict
from runners.sdk.protocols import AMD_VENDOR, Compute, GemmCheck, GpuDevice, NotSupportedError
from runners.sdk.report import Report
from runners.sdk.rocm import gfx_target

CHECK_SIZE = 4096
THROUGHPUT_SIZE = 8192
THROUGHPUT_SECONDS = 1.0


@dataclass(frozen=True)
class DeviceRule:
    """What the FP4 rule read from one GPU."""

    slot: DeviceSlot
    #: ``sm_90`` or ``gfx942``.
    arch: str
    #: The CUDA capability; None on an AMD part (it has a gfx target instead).
    capability: tuple[int, int] | None
    #: Why this GPU cannot be tested in FP4; None when it can.
    no_fp4: str | None


@dataclass(frozen=True)
class DeviceResult:
    rule: DeviceRule
    check: GemmCheck
    tflops: float

    @property
    def slot(self) -> DeviceSlot:
        return self.rule.slot

    @property
    def relative_error(self) -> float | None:
        if self.check.max_abs_error is None or not self.check.max_abs_ref:
            return None
        return self.check.max_abs_error / self.check.max_abs_ref

    def badness(self) -> tuple[int, float]:
        """Sort key: non-finite output first, then the larger error."""
        rel = self.relative_error
        return (self.check.nonfinite, rel if rel is not None else float("inf"))


def _measure_device(*, compute: Compute, rule: DeviceRule) -> tuple[GemmCheck, float]:
    """The FP4 check and throughput; a library without the part's FP4 path is a declared
    skip naming what is missing."""
    index = rule.slot.index
    try:
        check = compute.gemm_check(device=index, precision=PRECISION, size=CHECK_SIZE)
        tflops = compute.gemm_throughput_tflops(
            device=index, precision=PRECISION, size=THROUGHPUT_SIZE, seconds=THROUGHPUT_SECONDS
        )
    except NotSupportedError as error:
        raise DeclaredSkip(
            f"{rule.arch} has FP4 matrix units but this image cannot run an FP4 GEMM: {error}"
        ) from error
    if check.precision != PRECISION:
        # The library answered in another precision: that is not an FP4 result.
        raise RunnerError(
            f"GPU {index}: asked for an {PRECISION} GEMM, the compute library ran "
            f"{check.precision!r}: refusing to report it as FP4"
        )
    return check, tflops


def _rule(*, slot: DeviceSlot, device: GpuDevice, vendor: str) -> DeviceRule:
    """The FP4 rule for one GPU (an unknown AMD target is refused, never guessed)."""
    if vendor == AMD_VENDOR:
        target = gfx_target(device)
        if target is None:
            raise RunnerError("an AMD GPU whose gfx target cannot be read: no FP4 rule")
        return DeviceRule(slot=slot, arch=target, capability=None, no_fp4=gfx_no_fp4_reason(target))
    capability = device.compute_capability()
    return DeviceRule(
        slot=slot,
        arch=f"sm_{capability[0]}{capability[1]}",
        capability=capability,
        no_fp4=no_fp4_reason(capability),
    )


def _refuse_wrong_arch_image(rule: DeviceRule, built: list[str]) -> None:
    runs = (
        image_runs_on_gfx(rule.arch, built)
        if rule.capability is None
        else image_runs_on(rule.capability, built)
    )
    if not runs:
        raise RunnerError(f"image not built for {rule.arch} (has {','.join(built)})")


def _print_identity(report: Report, rule: DeviceRule) -> None:
    report.metric("gpuName", rule.slot.name)
    if rule.capability is None:
        report.unmeasurable("computeCap")  # an AMD part: a gfx target, no CUDA capability
        report.metric("gfxTarget", rule.arch)
    else:
        report.metric("computeCap", f"{rule.capability[0]}.{rule.capability[1]}")
    report.metric("pciBusId", rule.slot.pci_bus_id)


def _skip_without_fp4(report: Report, rules: list[DeviceRule]) -> None:
    """A3: the declared skip of a node with a GPU that has no FP4 units, naming it."""
    lacking = [rule for rule in rules if rule.no_fp4 is not None]
    if not lacking:
        return
    first = lacking[0]
    _print_identity(report, first)
    which = f" ({len(lacking)} of {len(rules)} GPUs, first GPU {first.slot.index})"
    raise DeclaredSkip(f"{first.no_fp4}{which if len(rules) > 1 else ''}")


def measure(ctx: RunnerContext) -> Verdict:
    report = ctx.report
    platform = ctx.platform()
    # Compute first: builtCudaArch is printed on every path (the preamble reuses it).
    compute = platform.compute()
    built = compute.built_arch_list()
    report.metric("builtCudaArch", ",".join(built) if built else "none")
    gpus = open_node_gpus(platform=platform, env=ctx.env)
    nvml, slots = gpus.nvml, gpus.slots
    rules = [_rule(slot=slot, device=nvml.device(slot.index), vendor=gpus.vendor) for slot in slots]
    _skip_without_fp4(report, rules)
    for rule in rules:
        _refuse_wrong_arch_image(rule, built)
    results = []
    for rule in rules:
        check, tflops = _measure_device(compute=compute, rule=rule)
        result = DeviceResult(rule=rule, check=check, tflops=tflops)
        results.append(result)
        report.note(
            f"device {rule.slot.index} ({rule.slot.pci_bus_id}) {check.precision}: nonfinite "
            f"{check.nonfinite}, relative error {result.relative_error}, {tflops:.1f} TFLOP/s"
        )
    worst = max(results, key=DeviceResult.badness)
    _print_identity(report, worst.rule)
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
        rel = result.relative_error
        if rel is not None and rel > TOLERANCE:
            return Failed(
                f"GPU {result.slot.index} {result.check.precision} relative error {rel:.3g} "
                f"exceeds {TOLERANCE:g}"
            )
    return Passed()
