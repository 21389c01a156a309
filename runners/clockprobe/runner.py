"""clockprobe: run sustained GEMM load and sample NVML clocks while it runs.

Passive checks (temperature, ECC, P-state at idle) cannot see a part that never boosts;
only clocks read *under load* can. Fails when any GPU's mean SM clock under load is
below ``BURNIN_CLOCK_FLOOR_PCT`` (default 85) percent of its rated boost clock.

On an AMD node the load is HIP GEMMs through PyTorch's ROCm build and the clocks are
amdsmi's GFX clock against its ``max_clk``; the P-state is amdsmi's performance level and
the reasons its throttler bits, both translated by the seam (``sdk/silicon/amd_smi.py``).
Where a part publishes no throttler status, the throttle counts are not printed (a gate
on them then fails closed) rather than claimed zero. ``gfxTarget`` is printed as evidence.
"""

from __future__ import annotations

from runners.clockprobe.sampling import DeviceClocks, Sample, classify, reason_names
from runners.sdk.clocks import clock_event_reasons, optional_reading
from runners.sdk.entry import RunnerContext
from runners.sdk.fold import print_fold, print_spread, settle_concurrency
from runners.sdk.gpus import open_node_gpus
from runners.sdk.outcome import Failed, Passed, RunnerError, Verdict
from runners.sdk.protocols import Clock, ClockKind, Compute, GpuDevice
from runners.sdk.rocm import print_gfx_target

DEFAULT_WINDOW_S = 30.0
MAX_WINDOW_S = 300.0
#: Budget kept free for start-up, warm-up and printing (A15).
BUDGET_MARGIN_S = 20.0
WARMUP_S = 3.0
SAMPLE_INTERVAL_S = 0.5
MIN_SAMPLES = 4


def _sample(device: GpuDevice) -> Sample:
    """The SDK's readings (:mod:`runners.sdk.clocks`) plus the memory clock and P-state."""
    return Sample(
        sm_mhz=device.clock_mhz(ClockKind.SM),
        mem_mhz=device.clock_mhz(ClockKind.MEM),
        pstate=device.performance_state(),
        reasons=clock_event_reasons(device),
        temp_c=optional_reading(device.temperature_c),
        power_w=optional_reading(device.power_draw_w),
    )


def _load_and_sample(
    *,
    compute: Compute,
    clock: Clock,
    devices: dict[int, GpuDevice],
    window_s: float,
    samples: dict[int, list[Sample]],
) -> dict[int, float]:
    """Load ``devices``, sample them after the warm-up for ``window_s``; achieved TFLOP/s."""
    started = clock.monotonic()
    load = compute.start_load(list(devices))
    try:
        clock.sleep(WARMUP_S)
        while clock.monotonic() - started < WARMUP_S + window_s:
            for index, device in devices.items():
                samples[index].append(_sample(device))
            clock.sleep(SAMPLE_INTERVAL_S)
    finally:
        try:
            achieved = load.stop()
        except Exception as error:
            raise RunnerError(f"sustained load failed: {error}") from error
    return achieved


def _margin(ctx: RunnerContext) -> float:
    """Budget kept back: up to ``BUDGET_MARGIN_S``, a quarter of a short budget, and
    never less than the warm-up plus two seconds (so a 20 s budget still samples)."""
    budget = ctx.env.duration_budget_s
    if budget is None:
        return BUDGET_MARGIN_S
    return max(min(BUDGET_MARGIN_S, budget * 0.25), WARMUP_S + 2.0)


def measure(ctx: RunnerContext) -> Verdict:
    report = ctx.report
    platform = ctx.platform()
    gpus = open_node_gpus(platform=platform, env=ctx.env)
    nvml, compute, slots = gpus.nvml, gpus.compute, gpus.slots
    floor_pct = ctx.env.number("BURNIN_CLOCK_FLOOR_PCT", default=85.0, low=1.0, high=100.0)
    window_s = ctx.env.window_s(default=DEFAULT_WINDOW_S, cap=MAX_WINDOW_S, margin=_margin(ctx))
    window_s = ctx.env.number("BURNIN_CLOCKPROBE_WINDOW_SECONDS", default=window_s, low=1, high=600)
    devices = {slot.index: nvml.device(slot.index) for slot in slots}
    rated = {index: device.max_clock_mhz(ClockKind.SM) for index, device in devices.items()}
    clock = platform.clock
    concurrency = settle_concurrency(
        report=report,
        requested=ctx.env.device_concurrency,
        default="all",
        also=("sequential",),
    )
    samples: dict[int, list[Sample]] = {index: [] for index in devices}
    achieved: dict[int, float] = {}
    started = clock.monotonic()
    if concurrency == "all":
        groups, device_window_s = [list(devices)], window_s
    else:
        # One GPU at a time, sharing the window so the budget still holds.
        groups = [[index] for index in devices]
        shared = window_s - WARMUP_S * (len(groups) - 1)
        device_window_s = max(shared / len(groups), MIN_SAMPLES * SAMPLE_INTERVAL_S)
    for group in groups:
        achieved.update(
            _load_and_sample(
                compute=compute,
                clock=clock,
                devices={i: devices[i] for i in group},
                window_s=device_window_s,
                samples=samples,
            )
        )
    elapsed = clock.monotonic() - started
    if any(len(s) < MIN_SAMPLES for s in samples.values()):
        raise RunnerError(f"fewer than {MIN_SAMPLES} clock samples per GPU")
    clocks = {i: DeviceClocks(rated_boost_mhz=rated[i], samples=samples[i]) for i in devices}
    for slot in slots:
        c = clocks[slot.index]
        report.note(
            f"device {slot.index} ({slot.pci_bus_id}): mean SM {c.mean_sm_mhz:.0f} MHz of "
            f"{c.rated_boost_mhz} rated ({c.sustained_pct:.1f} %), worst P{c.worst_pstate}, "
            f"reasons {reason_names(c.reasons_mask)}, "
            f"load {achieved.get(slot.index, 0.0):.0f} TFLOP/s"
        )
    worst_slot = min(slots, key=lambda slot: clocks[slot.index].sustained_pct)
    worst = clocks[worst_slot.index]
    first = clocks[slots[0].index]
    report.metric("smClockMHz", round(first.mean_sm_mhz))
    report.metric("memClockMHz", round(first.mean_mem_mhz))
    report.metric("ratedBoostClockMHz", first.rated_boost_mhz)
    print_gfx_target(report=report, device=devices[slots[0].index])
    report.metric("maxSmClockPct", first.max_pct)
    report.metric("sustainedClockPct", worst.sustained_pct)
    report.metric("minSmClockPct", min(c.min_pct for c in clocks.values()))
    report.metric("clockFloorPct", floor_pct)
    temps = [t for c in clocks.values() if (t := c.max_temp_c) is not None]
    if temps:
        report.metric("gpuTempC", max(temps))
    powers = [p for c in clocks.values() if (p := c.max_power_w) is not None]
    if powers:
        report.metric("powerDrawW", max(powers))
    mask = 0
    for c in clocks.values():
        mask |= c.reasons_mask
    if all(c.reasons_readable for c in clocks.values()):
        report.metric("throttleEvents", sum(c.throttle_events for c in clocks.values()))
        report.metric("hwSlowdownEvents", sum(c.hw_slowdown_events for c in clocks.values()))
        report.metric("throttledSamples", sum(c.throttled_samples for c in clocks.values()))
        report.metric("throttleReasons", reason_names(mask))
        report.metric("throttleReasonsMask", mask)
    else:
        report.note("throttle reasons unreadable on some GPU: no throttle counts claimed")
    classification = classify(worst, floor_pct=floor_pct)
    report.metric("throttleClassification", classification)
    report.metric("performanceState", worst.worst_pstate)
    report.metric("samplesTaken", sum(len(c.samples) for c in clocks.values()))
    report.metric("elapsedS", elapsed)
    print_spread(
        report=report,
        name="sustainedClockSpreadPct",
        slots=slots,
        values=[clocks[slot.index].sustained_pct for slot in slots],
    )
    print_fold(
        report=report,
        gpus=gpus,
        worst=worst_slot,
        concurrency=concurrency,
        window_s=device_window_s,
    )
    if worst.sustained_pct < floor_pct:
        return Failed(
            f"GPU {worst_slot.index} sustained {worst.sustained_pct:.1f} % of its rated boost "
            f"clock under load (floor {floor_pct:g} %, {classification}, P{worst.worst_pstate})"
        )
    return Passed()
