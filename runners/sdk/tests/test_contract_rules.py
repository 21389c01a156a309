"""The SDK keeps the runner contract (semantics §A) for every runner."""

from __future__ import annotations

import io

import pytest

from runners.sdk.entry import RunnerContext, guarded_main
from runners.sdk.env import RunnerEnv, parse_quantity, parse_resource_limits
from runners.sdk.outcome import DeclaredSkip, Failed, Passed, RunnerError, Verdict
from runners.sdk.report import Markers, NonFiniteMetricError, Report, format_value

MARKERS = Markers.for_prefix("DEMO")
HOST_HEALTH = Markers(
    passed="HOST_HEALTH_OK", failed="HOST_HEALTH_FAULT", error="HOST_HEALTH_ERROR", skip=None
)


def run(measure: object, *, markers: Markers = MARKERS, environ: dict[str, str] | None = None):
    out = io.StringIO()
    code = guarded_main(
        markers=markers,
        measure=measure,
        environ=environ or {},
        report=Report(markers=markers, out=out),
    )
    return code, out.getvalue().splitlines()


def test_A2_unexpected_exception_exits_3_never_1() -> None:
    def measure(ctx: RunnerContext) -> Verdict:
        raise ZeroDivisionError("boom")

    code, lines = run(measure)
    assert code == 3
    assert lines[-1].startswith("DEMO_ERROR: runner crashed: ZeroDivisionError")


@pytest.mark.parametrize("exc", [SystemExit(1), SystemExit(0), KeyboardInterrupt()])
def test_A2_system_exit_and_interrupt_inside_runner_exit_3(exc: BaseException) -> None:
    def measure(ctx: RunnerContext) -> Verdict:
        raise exc

    code, lines = run(measure)
    assert code == 3
    assert lines[-1].startswith("DEMO_ERROR:")


def test_A3_skip_is_declared_with_marker_and_exit_2() -> None:
    def measure(ctx: RunnerContext) -> Verdict:
        raise DeclaredSkip("not applicable here")

    code, lines = run(measure)
    assert (code, lines[-1]) == (2, "DEMO_SKIP: not applicable here")


def test_A3_runner_without_skip_marker_turns_a_skip_into_error() -> None:
    def measure(ctx: RunnerContext) -> Verdict:
        raise DeclaredSkip("nope")

    code, lines = run(measure, markers=HOST_HEALTH)
    assert code == 3
    assert lines[-1].startswith("HOST_HEALTH_ERROR:")


def test_A16_could_not_measure_is_exit_3_with_error_marker() -> None:
    def measure(ctx: RunnerContext) -> Verdict:
        raise RunnerError("no GPU visible")

    assert run(measure) == (3, ["DEMO_ERROR: no GPU visible"])


def test_A16_evidence_is_printed_before_the_verdict_line() -> None:
    def measure(ctx: RunnerContext) -> Verdict:
        ctx.report.metric("gpuTempC", 71.5)
        return Failed("too hot")

    assert run(measure) == (1, ["gpuTempC=71.5", "DEMO_FAIL: too hot"])


def test_A8_fail_closed_non_finite_values_are_never_printed() -> None:
    with pytest.raises(NonFiniteMetricError):
        format_value(float("nan"))

    def measure(ctx: RunnerContext) -> Verdict:
        ctx.report.metric("maxRelativeError", float("inf"))
        return Passed()

    code, lines = run(measure)
    assert code == 3
    assert not any(line.startswith("maxRelativeError=") for line in lines)


def test_B1_invalid_metric_names_are_refused() -> None:
    report = Report(markers=MARKERS, out=io.StringIO())
    for bad in ("gpu_temp_c", "GpuTempC", "", "gpu-temp"):
        with pytest.raises(ValueError):
            report.metric(bad, 1)


def test_A4_note_that_would_parse_as_a_metric_is_refused() -> None:
    report = Report(markers=MARKERS, out=io.StringIO())
    with pytest.raises(ValueError):
        report.note("eccErrors=0")
    report.note("device 0 ok: ecc=0")  # key contains a space: prose, not a metric


def test_fingerprint_style_runner_prints_no_line_on_pass() -> None:
    markers = Markers(passed=None, failed="X_ERROR", error="X_ERROR", skip="X_SKIP")

    def measure(ctx: RunnerContext) -> Verdict:
        ctx.report.metric("acceleratorCount", 0)
        return Passed()

    assert run(measure, markers=markers) == (0, ["acceleratorCount=0"])


def test_A15_duration_is_an_upper_budget_for_windows() -> None:
    env = RunnerEnv.from_environ({"BURNIN_DURATION_SECONDS": "40"})
    assert env.window_s(default=30, cap=300, margin=20) == 20
    assert RunnerEnv.from_environ({}).window_s(default=30, cap=300, margin=20) == 30


@pytest.mark.parametrize(
    "environ",
    [
        {"BURNIN_DURATION_SECONDS": "ten"},
        {"BURNIN_DURATION_SECONDS": "-5"},
        {"BURNIN_DEVICE_CONCURRENCY": "some"},
        {"BURNIN_RESOURCE_LIMITS": "memory"},
    ],
)
def test_A16_unreadable_configuration_is_refused_not_defaulted(environ: dict[str, str]) -> None:
    def measure(ctx: RunnerContext) -> Verdict:
        return Passed()

    code, _ = run(measure, environ=environ)
    assert code == 3


def test_A17_resource_limits_give_the_allocation() -> None:
    assert parse_resource_limits("memory=2Gi,nvidia.com/gpu=8") == {
        "memory": "2Gi",
        "nvidia.com/gpu": "8",
    }
    env = RunnerEnv.from_environ({"BURNIN_RESOURCE_LIMITS": "memory=2Gi,nvidia.com/gpu=8"})
    assert env.allocated_gpus == 8
    assert env.memory_limit_bytes == 2 * 2**30
    assert parse_quantity("500M") == 500e6


def test_unknown_simulated_fault_is_refused_for_every_runner() -> None:
    def measure(ctx: RunnerContext) -> Verdict:
        return Passed()

    code, lines = run(measure, environ={"GLIMMER_SIM_GPU": "h200:lowclock"})
    assert code == 3
    assert "unknown fault" in lines[-1]
