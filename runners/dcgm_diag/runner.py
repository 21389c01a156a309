"""dcgm-diag: ``dcgmi diag -r <level> -j`` from the site's DCGM, as metrics.

DCGM is not redistributable, so the site mounts it; without it the runner exits 3
(Error), never 1. Level: ``BURNIN_DCGM_DIAG_LEVEL`` (1-4, default 2; anything else is
refused). ``BURNIN_DCGM_ALLOW`` (comma-separated DCGM plugin names) limits which tests
are judged (``runners.dcgm_diag.allowlist``). Exit 1 iff some judged test reported
``Fail``; an unreadable document, a runtime error, or a run in which no judged test passed
or failed is exit 3. NVML's lifetime counters are read before and after the diagnostic and
their deltas printed (``runners.dcgm_diag.counters``).
"""

from __future__ import annotations

from runners.dcgm_diag.allowlist import parse_allowlist, plugin_of
from runners.dcgm_diag.counters import print_deltas, read_counters
from runners.dcgm_diag.parse import DiagReport, UnexpectedDocumentError, parse_diag
from runners.sdk.entry import RunnerContext
from runners.sdk.outcome import Failed, Passed, RunnerError, Verdict
from runners.sdk.protocols import DriverUnavailableError, GpuLostError, NotSupportedError

LEVEL_TIMEOUT_S = {1: 120.0, 2: 600.0, 3: 2400.0, 4: 7200.0}
BUDGET_MARGIN_S = 30.0


def _max_temperature(ctx: RunnerContext) -> float | None:
    """Hottest GPU as NVML reads it now; None when NVML cannot say."""
    try:
        nvml = ctx.platform().nvml()
        temps = []
        for index in range(nvml.device_count()):
            try:
                temps.append(nvml.device(index).temperature_c())
            except (NotSupportedError, GpuLostError):
                continue
    except DriverUnavailableError:
        return None
    return max(temps) if temps else None


def _judged(ctx: RunnerContext, diag: DiagReport, allowed: frozenset[str] | None) -> DiagReport:
    """The tests the allowlist keeps; the excluded ones are printed, never silently lost."""
    if allowed is None:
        return diag
    kept = tuple(t for t in diag.tests if plugin_of(t) in allowed)
    excluded = [t for t in diag.tests if plugin_of(t) not in allowed]
    out = ctx.report
    out.metric("dcgmAllow", ",".join(sorted(allowed)))
    out.metric("testsExcluded", len(excluded))
    failed = [t.name for t in excluded if t.status in ("Fail", "Warn")]
    if failed:
        out.metric("excludedTestsNotPassed", ",".join(sorted(failed)))
    return DiagReport(
        layout=diag.layout,
        tests=kept,
        runtime_error=diag.runtime_error,
        driver_version=diag.driver_version,
        dcgm_version=diag.dcgm_version,
        gpus=diag.gpus,
    )


def measure(ctx: RunnerContext) -> Verdict:
    report = ctx.report
    platform = ctx.platform()
    level = int(ctx.env.choice("BURNIN_DCGM_DIAG_LEVEL", default="2", allowed=("1", "2", "3", "4")))
    allowed = parse_allowlist(ctx.env.raw.get("BURNIN_DCGM_ALLOW", ""))
    timeout_s = LEVEL_TIMEOUT_S[level]
    if ctx.env.duration_budget_s is not None:
        timeout_s = min(timeout_s, max(ctx.env.duration_budget_s - BUDGET_MARGIN_S, 10.0))
    dcgmi = platform.dcgmi()
    report.metric("diagLevel", level)
    before = _max_temperature(ctx)
    counters_before = read_counters(platform.nvml)
    clock = platform.clock
    started = clock.monotonic()
    result = dcgmi.diag(level=level, timeout_s=timeout_s)
    elapsed = clock.monotonic() - started
    after = _max_temperature(ctx)
    counters_after = read_counters(platform.nvml)
    try:
        diag = parse_diag(result.stdout)
    except UnexpectedDocumentError as error:
        tail = (result.stderr or result.stdout).strip().splitlines()[-1:] or ["no output"]
        raise RunnerError(
            f"dcgmi diag exit {result.exit_code}: unreadable output ({error}): {tail[0]}"
        ) from None
    if diag.runtime_error:
        raise RunnerError(f"dcgmi diag could not run: {diag.runtime_error}")
    everything = diag
    diag = _judged(ctx, diag, allowed)
    for test in diag.tests:
        if test.status in ("Fail", "Warn"):
            report.note(f"{test.category}/{test.name}: {test.status}: {'; '.join(test.warnings)}")
    failed, warned, passed = diag.count("Fail"), diag.count("Warn"), diag.count("Pass")
    report.metric("diagLayout", diag.layout)
    if diag.dcgm_version:
        report.metric("dcgmVersion", diag.dcgm_version)
    if diag.driver_version:
        report.metric("driverVersion", diag.driver_version)
    report.metric("testsRun", failed + warned + passed)
    report.metric("diagTestsFailed", failed)
    report.metric("testsWarned", warned)
    report.metric("testsPassed", passed)
    report.metric("testsSkipped", diag.count("Skip") + diag.count("Not Run"))
    if diag.gpus:
        report.metric("devicesVisible", len(diag.gpus))
    print_deltas(report, counters_before, counters_after)
    temps = [t for t in (before, after) if t is not None]
    if temps:
        report.metric("gpuTempC", max(temps))
    if diag.last_xid is not None:
        report.metric("lastXidCode", diag.last_xid)
    report.metric("elapsedS", elapsed)
    if failed:
        names = ", ".join(t.name for t in diag.tests if t.status == "Fail")
        return Failed(f"{failed} diagnostic test(s) failed: {names}")
    if failed + warned + passed == 0:
        raise RunnerError(
            "dcgmi diag ran no judged test to a result (all skipped, not run or excluded)"
        )
    if result.exit_code != 0 and everything.count("Fail") == 0:
        raise RunnerError(f"dcgmi diag exited {result.exit_code} without a failed test")
    return Passed()
