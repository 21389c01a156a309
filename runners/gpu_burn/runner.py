"""gpu-burn: every GPU at full BF16 GEMM load for the window, results checked throughout.

The window is ``BURNIN_DURATION_SECONDS`` (an upper budget, A15; the pod deadline adds
120 s for start-up and printing), 300 s without one. Xid watching is opt-in
(``BURNIN_GPU_BURN_WATCH_XID=true``: it needs the host's ``/dev/kmsg``); without it
``xidEvents`` is not printed at all, never printed as 0. On an AMD node (no Xids exist)
a watched window prints ``xidEvents=n/a`` and ``xidSource=none`` and reads no kernel log.
"""

from __future__ import annotations

from runners.gpu_burn.burn import run_burn
from runners.gpu_burn.verdict_lines import MetricSet, judge, print_burn, print_running_totals
from runners.gpu_burn.xid_watch import XidWatch
from runners.sdk.entry import RunnerContext
from runners.sdk.fold import settle_concurrency
from runners.sdk.gpus import Gpus, open_node_gpus
from runners.sdk.outcome import Verdict
from runners.sdk.protocols import NVIDIA_VENDOR

DEFAULT_WINDOW_S = 300.0


def window_seconds(ctx: RunnerContext, *, default: float) -> float:
    """The load window: the whole budget when one is given (a soak segment must be a full
    window, G1), else ``default``."""
    budget = ctx.env.duration_budget_s
    return budget if budget is not None else default


def measure(ctx: RunnerContext) -> Verdict:
    platform = ctx.platform()
    gpus = open_node_gpus(platform=platform, env=ctx.env)
    watch = ctx.env.choice("BURNIN_GPU_BURN_WATCH_XID", default="false", allowed=("true", "false"))
    metrics = MetricSet(
        xid_watched=watch == "true", soak_extras=False, xids_exist=gpus.vendor == NVIDIA_VENDOR
    )
    xid = None
    if metrics.xid_watched and metrics.xids_exist:
        kmsg = platform.open_kmsg()
        xid = XidWatch(kmsg) if kmsg is not None else None
    return burn_window(ctx, gpus=gpus, metrics=metrics, xid=xid, default_window_s=DEFAULT_WINDOW_S)


def burn_window(
    ctx: RunnerContext,
    *,
    gpus: Gpus,
    metrics: MetricSet,
    xid: XidWatch | None,
    default_window_s: float,
) -> Verdict:
    """One load window on every GPU, printed and judged (gpu-burn's, and thermal-soak's:
    the same engine, another window and metric set). Closes ``xid`` when done."""
    report = ctx.report
    concurrency = settle_concurrency(
        report=report, requested=ctx.env.device_concurrency, default="all"
    )
    window_s = window_seconds(ctx, default=default_window_s)
    report.metric("durationRequestedS", window_s)
    try:
        burn = run_burn(
            gpus=gpus,
            clock=ctx.platform().clock,
            window_s=window_s,
            xid=xid,
            progress=lambda running: print_running_totals(report, running, metrics=metrics),
        )
    finally:
        if xid is not None:
            xid.close()
    print_burn(report, burn, gpus=gpus, metrics=metrics, concurrency=concurrency)
    return judge(burn)
