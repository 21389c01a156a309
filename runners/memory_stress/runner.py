"""memory-stress: the node's own DRAM, stressed by the real ``stressapptest``.

Host memory is never simulated: even with ``GLIMMER_SIM_GPU`` set this runner stresses
real DIMMs and prints ``provenance=silicon``. Memory size: ``BURNIN_STRESS_MEMORY_MB`` if
set, else half of the container's memory limit (``BURNIN_RESOURCE_LIMITS``), else 256 MiB.
Duration: ``BURNIN_STRESS_SECONDS`` if set, else the duration budget less 20 s.
"""

from __future__ import annotations

import os

from runners.memory_stress.parse import UnreadableSummaryError, parse_summary
from runners.sdk.entry import RunnerContext
from runners.sdk.outcome import Failed, Passed, RunnerError, Verdict
from runners.sdk.platform import host_memory_stress

DEFAULT_MEMORY_MB = 256
DEFAULT_SECONDS = 60.0
BUDGET_MARGIN_S = 20.0
#: stressapptest spends a few seconds allocating and checking beyond ``-s``.
TOOL_OVERHEAD_S = 60.0


def _memory_mb(ctx: RunnerContext) -> int:
    limit = ctx.env.memory_limit_bytes
    default = DEFAULT_MEMORY_MB if limit is None else max(16, limit // 2 // 2**20)
    return int(ctx.env.number("BURNIN_STRESS_MEMORY_MB", default=default, low=16, high=2**22))


def measure(ctx: RunnerContext) -> Verdict:
    report = ctx.report
    tool = host_memory_stress(ctx.environ)
    report.metric("provenance", "silicon")
    budget = ctx.env.duration_budget_s
    # A load kind uses its window: the whole budget less the margin, not a fixed slice.
    seconds = DEFAULT_SECONDS if budget is None else max(budget - BUDGET_MARGIN_S, 1.0)
    seconds = int(ctx.env.number("BURNIN_STRESS_SECONDS", default=seconds, low=1, high=86400))
    memory_mb = _memory_mb(ctx)
    threads = max(1, min(os.cpu_count() or 1, 16))
    argv = ["-s", str(seconds), "-M", str(memory_mb), "-m", str(threads), "-W"]
    report.metric("durationRequestedS", seconds)
    report.metric("stressMemoryMB", memory_mb)
    result = tool.run(argv=argv, timeout_s=seconds + TOOL_OVERHEAD_S)
    try:
        summary = parse_summary(result.stdout)
    except UnreadableSummaryError as error:
        tail = (result.stdout + result.stderr).strip().splitlines()[-1:] or ["no output"]
        raise RunnerError(
            f"stressapptest exit {result.exit_code}, summary unreadable ({error}): {tail[0]}"
        ) from None
    report.note(f"stressapptest {' '.join(argv)}: {summary.status_line}")
    report.metric("memoryErrors", summary.hardware_incidents)
    report.metric("miscompares", summary.errors)
    report.metric("sdcDetections", summary.errors)
    if summary.copy_rate_mbs is not None:
        # A copy reads and writes every byte once: both rates equal the copy rate.
        report.metric("readBandwidthMBs", summary.copy_rate_mbs)
        report.metric("writeBandwidthMBs", summary.copy_rate_mbs)
    report.metric("elapsedS", summary.elapsed_s)
    if summary.hardware_incidents or summary.errors or not summary.passed:
        return Failed(
            f"{summary.hardware_incidents} hardware incidents, {summary.errors} errors "
            f"({summary.status_line})"
        )
    if result.exit_code != 0:
        raise RunnerError(f"stressapptest reported PASS but exited {result.exit_code}")
    return Passed()
