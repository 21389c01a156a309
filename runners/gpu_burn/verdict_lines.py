"""Printing a burn's evidence and deciding what the runner itself fails on.

Why the runner gates only correctness and driver-reported faults: a wrong result, an
uncorrectable ECC error that appeared during the load, or an Xid in the window is a
measured hardware fault whatever the fleet's taste; clocks, temperature, power,
throughput and the corrected ECC errors of the window (``eccCorrectedDelta``: a storm of
them foretells uncorrectable ones) are printed for thresholds to judge, because their
acceptable levels are the fleet's to set (a cool low-clocked part may be fine for one
fleet and not another).
"""

from __future__ import annotations

from dataclasses import dataclass

from runners.gpu_burn.burn import Burn
from runners.sdk.fold import print_fold, print_spread
from runners.sdk.gpus import Gpus
from runners.sdk.outcome import Failed, Passed, Verdict
from runners.sdk.report import Report


@dataclass(frozen=True)
class MetricSet:
    """Which of the optional metrics a kind prints (§O)."""

    xid_watched: bool
    soak_extras: bool
    #: False on an AMD node: Xids are NVIDIA driver events, so a watched window prints
    #: ``xidEvents=n/a`` and ``xidSource=none`` (never a clean 0 from an unread log).
    xids_exist: bool = True


def print_running_totals(report: Report, burn: Burn, *, metrics: MetricSet) -> None:
    """The re-printed snapshot: counters so far and the readings so far (A9: last wins)."""
    devices = burn.devices
    report.metric("iterationsCompleted", sum(d.checks for d in devices))
    report.metric("miscompares", sum(d.miscompares for d in devices))
    report.metric("sdcDetections", sum(d.sdc for d in devices))
    report.metric("nonfiniteCount", sum(d.nonfinite for d in devices))
    throttle_known = all(d.clocks.reasons_readable for d in devices)
    if throttle_known:
        report.metric("throttleEvents", sum(d.clocks.throttle_events for d in devices))
        report.metric("hwSlowdownEvents", sum(d.clocks.hw_slowdown_events for d in devices))
    if all(d.clocks.count for d in devices):
        report.metric("sustainedClockPct", min(d.sustained_pct for d in devices))
    temps = [t for d in devices if (t := d.clocks.max_temp_c) is not None]
    if temps:
        report.metric("gpuTempC", max(temps))
    peaks = [p for d in devices if (p := d.clocks.max_power_w) is not None]
    if peaks:
        report.metric("powerDrawW", max(peaks))
    if metrics.xid_watched and burn.xid is not None:
        report.metric("xidEvents", burn.xid.count)
    report.metric("elapsedS", burn.elapsed_s)


def print_burn(
    report: Report, burn: Burn, *, gpus: Gpus, metrics: MetricSet, concurrency: str
) -> None:
    """Every metric of the finished window, then the fold set."""
    devices = burn.devices
    for d in devices:
        report.note(
            f"device {d.slot.index} ({d.slot.pci_bus_id}): {d.checks} checks, "
            f"{d.miscompares} miscompares ({d.sdc} silent), {d.nonfinite} non-finite, "
            f"max relative error {d.max_relative_error}, mean SM {d.clocks.mean_sm_mhz:.0f} MHz "
            f"of {d.rated_sm_mhz}, {d.clocks.throttle_events} throttle events, "
            f"{d.tflops or 0.0:.0f} TFLOP/s"
        )
    print_running_totals(report, burn, metrics=metrics)
    report.metric("sustainedThroughputTflops", min(d.tflops or 0.0 for d in devices))
    if any(d.max_relative_error is not None for d in devices):
        report.metric("maxRelativeError", max(d.max_relative_error or 0.0 for d in devices))
    measured = [d.ecc_after for d in devices if d.ecc_after is not None]
    modes = {d.ecc_mode for d in devices}
    report.metric("eccMode", modes.pop() if len(modes) == 1 else "mixed")
    if measured:
        report.metric("eccErrors", sum(measured))
    else:
        report.unmeasurable("eccErrors")
    corrected = [d.corrected_delta for d in devices]
    if all(delta is not None for delta in corrected):
        report.metric("eccCorrectedDelta", sum(delta or 0 for delta in corrected))
    else:
        report.unmeasurable("eccCorrectedDelta")
    if metrics.xid_watched:
        if not metrics.xids_exist:
            report.unmeasurable("xidEvents")
            report.metric("xidWindowsWatched", 0)
            report.metric("xidSource", "none")
        elif burn.xid is None:
            report.unmeasurable("xidEvents")
            report.metric("xidWindowsWatched", 0)
        else:
            report.metric("xidWindowsWatched", 1)
            report.metric("xidPreexisting", burn.xid.preexisting)
            if burn.xid.last_code is not None:
                report.metric("lastXidCode", burn.xid.last_code)
    if metrics.soak_extras:
        worst = burn.worst
        report.metric("smClockMHz", round(worst.clocks.mean_sm_mhz))
        readings = sum(d.clocks.power_readings for d in devices)
        if readings:
            report.metric("meanPowerW", sum(d.clocks.power_w_sum for d in devices) / readings)
        if all(d.clocks.reasons_readable for d in devices):
            report.metric("throttledSamples", sum(d.clocks.throttled_samples for d in devices))
    report.metric("samplesTaken", sum(d.clocks.count for d in devices))
    print_spread(
        report=report,
        name="sustainedClockSpreadPct",
        slots=gpus.slots,
        values=[d.sustained_pct for d in devices],
    )
    print_fold(
        report=report,
        gpus=gpus,
        worst=burn.worst.slot,
        concurrency=concurrency,
        window_s=burn.elapsed_s,
    )


def judge(burn: Burn) -> Verdict:
    """Failed on any wrong result, any new uncorrectable ECC error, any Xid in the window."""
    worst = burn.worst
    if worst.nonfinite:
        return Failed(f"GPU {worst.slot.index}: {worst.nonfinite} non-finite GEMM output elements")
    if worst.miscompares:
        return Failed(
            f"GPU {worst.slot.index}: {worst.miscompares} of {worst.checks} reference checks "
            f"miscompared ({worst.sdc} silent data corruptions)"
        )
    if worst.ecc_delta:
        return Failed(
            f"GPU {worst.slot.index}: {worst.ecc_delta} uncorrectable ECC errors during the load"
        )
    if burn.xid is not None and burn.xid.count:
        return Failed(
            f"{burn.xid.count} Xid event(s) during the load (last Xid {burn.xid.last_code})"
        )
    return Passed()
