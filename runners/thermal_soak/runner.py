"""thermal-soak: every GPU under sustained load for the whole window, readings re-printed
every 15 s.

One window per process: ``BURNIN_DURATION_SECONDS`` *is* the window (1800 s without one),
so a segmented soak (``spec.soak``, G1) gets a full window per segment and a bare host
runs the whole duration as one process. Every re-print is a coherent snapshot (counters so
far, peaks so far), so a checkpoint or an eviction mid-window still leaves evidence (H1,
G6). The Xid watch is always on; without a readable ``/dev/kmsg`` ``xidEvents`` is
``n/a`` and ``xidWindowsWatched`` 0, never a clean 0; on an AMD node (Xids are NVIDIA
driver events) the same, with ``xidSource=none``, and no kernel log is read. The engine
is gpu-burn's.
"""

from __future__ import annotations

from runners.gpu_burn.burn import run_burn
from runners.gpu_burn.runner import window_seconds
from runners.gpu_burn.verdict_lines import MetricSet, judge, print_burn, print_running_totals
from runners.gpu_burn.xid_watch import XidWatch
from runners.sdk.entry import RunnerContext
from runners.sdk.fold import settle_concurrency
from runners.sdk.gpus import open_node_gpus
from runners.sdk.outcome import Verdict
from runners.sdk.protocols import NVIDIA_VENDOR

DEFAULT_WINDOW_S = 1800.0
METRICS = MetricSet(xid_watched=True, soak_extras=True)
AMD_METRICS = MetricSet(xid_watched=True, soak_extras=True, xids_exist=False)


def measure(ctx: RunnerContext) -> Verdict:
    report = ctx.report
    platform = ctx.platform()
    gpus = open_node_gpus(platform=platform, env=ctx.env)
    metrics = METRICS if gpus.vendor == NVIDIA_VENDOR else AMD_METRICS
    kmsg = platform.open_kmsg() if metrics.xids_exist else None
    xid = XidWatch(kmsg) if kmsg is not None else None
    concurrency = settle_concurrency(
        report=report, requested=ctx.env.device_concurrency, default="all"
    )
    window_s = window_seconds(ctx, default=DEFAULT_WINDOW_S)
    report.metric("durationRequestedS", window_s)
    try:
        burn = run_burn(
            gpus=gpus,
            clock=platform.clock,
            window_s=window_s,
            xid=xid,
            progress=lambda running: print_running_totals(report, running, metrics=metrics),
        )
    finally:
        if xid is not None:
            xid.close()
    print_burn(report, burn, gpus=gpus, metrics=metrics, concurrency=concurrency)
    return judge(burn)
