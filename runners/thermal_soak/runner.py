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

from runners.gpu_burn.runner import burn_window
from runners.gpu_burn.verdict_lines import MetricSet
from runners.gpu_burn.xid_watch import XidWatch
from runners.sdk.entry import RunnerContext
from runners.sdk.gpus import open_node_gpus
from runners.sdk.outcome import Verdict
from runners.sdk.protocols import NVIDIA_VENDOR

DEFAULT_WINDOW_S = 1800.0
METRICS = MetricSet(xid_watched=True, soak_extras=True)
AMD_METRICS = MetricSet(xid_watched=True, soak_extras=True, xids_exist=False)


def measure(ctx: RunnerContext) -> Verdict:
    platform = ctx.platform()
    gpus = open_node_gpus(platform=platform, env=ctx.env)
    metrics = METRICS if gpus.vendor == NVIDIA_VENDOR else AMD_METRICS
    kmsg = platform.open_kmsg() if metrics.xids_exist else None
    xid = XidWatch(kmsg) if kmsg is not None else None
    return burn_window(ctx, gpus=gpus, metrics=metrics, xid=xid, default_window_s=DEFAULT_WINDOW_S)
