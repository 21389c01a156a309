"""dcgm-diag: ``dcgmi diag -r <level> [-p <params>] -j`` from the site's DCGM, as metrics.

DCGM is not redistributable, so the site mounts it; without it the runner exits 3
(Error), never 1. Level: ``BURNIN_DCGM_DIAG_LEVEL`` (1-4, default 2; anything else is
refused). ``BURNIN_DCGM_ALLOW`` (comma-separated DCGM plugin names) enables plugins past
DCGM's per-SKU allowlist (``-p <name>.is_allowed=true``); ``BURNIN_DCGM_JUDGE_ONLY``
limits which tests are judged (``runners.dcgm_diag.allowlist``). Exit 1 iff some judged
test reported ``Fail``; an unreadable document, a runtime error, a run in which no judged
test passed or failed, or a judged test that was skipped or not run is exit 3 (a suite
that skipped a test has not passed it). NVML's lifetime counters are read before and
after the diagnostic and their deltas printed (``runners.dcgm_diag.counters``).
"""

from __future__ import annotations

from runners.dcgm_diag.allowlist import (
    ALLOW_ENV,
    JUDGE_ONLY_ENV,
    allow_parameters,
    parse_plugins,
    plugin_of,
)
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


def _judged(ctx: RunnerContext, diag: DiagReport, judged: frozenset[str] | None) -> DiagReport:
    """The tests ``BURNIN_DCGM_JUDGE_ONLY`` keeps; the excluded ones are printed, never
    silently lost."""
    if judged is None:
        return diag
    kept = tuple(t for t in diag.tests if plugin_of(t) in judged)
    excluded = [t for t in diag.tests if plugin_of(t) not in judged]
    out = ctx.report
    out.metric("dcgmJudgeOnly", ",".join(sorted(judged)))
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
    allowed = parse_plugins(ctx.env.raw.get(ALLOW_ENV, ""), variable=ALLOW_ENV)
    judged = parse_plugins(ctx.env.raw.get(JUDGE_ONLY_ENV, ""), variable=JUDGE_ONLY_ENV)
    parameters = allow_parameters(allowed)
    timeout_s = LEVEL_TIMEOUT_S[level]
    if ctx.env.duration_budget_s is not None:
        timeout_s = min(timeout_s, max(ctx.env.duration_budget_s - BUDGET_MARGIN_S, 10.0))
    dcgmi = platform.dcgmi()
    report.metric("diagLevel", level)
    if allowed is not None:
        # Which plugins this run enabled, answerable from the stored result.
        report.metric("dcgmAllow", ",".join(sorted(allowed)))
        report.metric("diagParams", parameters)
    before = _max_temperature(ctx)
    counters_before = read_counters(platform.nvml)
    clock = platform.clock
    started = clock.monotonic()
    result = dcgmi.diag(level=level, timeout_s=timeout_s, parameters=parameters)
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
    diag = _judged(ctx, diag, judged)
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
    unrun = [t.name for t in diag.tests if t.status in ("Skip", "Not Run")]
    if unrun:
        raise RunnerError(
            f"{len(unrun)} judged test(s) did not run to a result: {', '.join(unrun)} "
            f"(a suite that skipped a test has not passed it; where DCGM gates plugins per "
            f"part, enable them with {ALLOW_ENV}, or leave them out of judgement with "
            f"{JUDGE_ONLY_ENV})"
        )
    if result.exit_code != 0 and everything.count("Fail") == 0:
        raise RunnerError(f"dcgmi diag exited {result.exit_code} without a failed test")
    return Passed()
