"""gemm-sweep's precision rules: a precision the part lacks is a declared skip, an unknown
one is refused, a library without FP4 is a declared skip naming it, any other missing
library path is an Error (never a Pass on a precision nobody tested)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from runners.gemm_sweep import runner as gemm_sweep
from runners.sdk.protocols import NotSupportedError
from runners.tests.fake_tools import run_module
from runners.tests.inprocess_harness import WrappedCompute, run_in_process, simulated


def sweep(profile: str, precision: str) -> tuple[int, str, dict[str, str]]:
    report = run_module(
        "runners.gemm_sweep",
        kind="gemm-sweep",
        env={
            "GLIMMER_SIM_GPU": profile,
            "BURNIN_VARIANT_PRECISION": precision,
            "BURNIN_GEMM_SWEEP_SECONDS": "1",
        },
    )
    return report.exit_code, report.message, dict(report.metrics)


@pytest.mark.parametrize(
    ("profile", "precision", "needs"),
    [("h200", "fp4", "sm_100"), ("t4", "fp8", "sm_89"), ("t4", "tf32", "sm_80")],
)
def test_A3_a_precision_the_part_lacks_is_a_declared_skip_never_a_pass(
    profile: str, precision: str, needs: str
) -> None:
    code, message, metrics = sweep(profile, precision)
    assert code == 2
    assert message.startswith("GEMM_SWEEP_SKIP:") and needs in message
    assert "achievedTflops" not in metrics


@pytest.mark.parametrize(
    ("profile", "precision"),
    [
        ("b200", "fp4"),
        ("gb10", "fp4"),
        ("h200", "fp8"),
        ("h200", "bf16"),
        ("h100", "tf32"),
        ("h200", "fp64"),
    ],
)
def test_each_precision_the_part_has_is_measured(profile: str, precision: str) -> None:
    code, message, metrics = sweep(f"{profile}x2", precision)
    assert code == 0, message
    assert metrics["gemmPrecision"] == precision
    assert float(metrics["achievedTflops"]) > 0
    assert metrics["gemmThroughputSpreadPct"] == "0"


def test_A16_an_unknown_precision_is_refused_not_defaulted() -> None:
    code, message, _ = sweep("h200", "int8")
    assert code == 3 and "int8" in message


def test_nonfinite_output_fails_on_the_faulty_gpu() -> None:
    code, _, metrics = sweep("h200x2:nan-compute", "bf16")
    assert code == 1 and metrics["worstDeviceIndex"] == "1"


def _with_library_refusing(profile: str, precision: str) -> tuple[int, str]:
    base = simulated(profile)
    wrapped = WrappedCompute(
        base.compute(), refuse=NotSupportedError("torch 2.7.1 has no torch.float4_e2m1fn_x2")
    )
    report, _ = run_in_process(
        kind="gemm-sweep",
        prefix="GEMM_SWEEP",
        measure=gemm_sweep.measure,
        platform=dataclasses.replace(base, _compute=lambda: wrapped),
        env={"BURNIN_VARIANT_PRECISION": precision, "BURNIN_GEMM_SWEEP_SECONDS": "1"},
    )
    return report.exit_code, report.message


def test_fp4_missing_from_the_library_is_a_declared_skip_naming_what_is_missing() -> None:
    code, message = _with_library_refusing("gb10", "fp4")
    assert code == 2 and "float4_e2m1fn_x2" in message


def test_fail_closed_another_precision_missing_from_the_library_is_an_error() -> None:
    code, message = _with_library_refusing("h200", "tf32")
    assert code == 3 and message.startswith("GEMM_SWEEP_ERROR:")


def _wrong_on_device_1(device: int, precision: str, real: Any, call: int) -> Any:
    if device == 1:
        return dataclasses.replace(real, max_abs_error=(real.max_abs_ref or 1.0) * 0.02)
    return real


def test_a_finite_error_above_the_precision_tolerance_fails_on_that_gpu() -> None:
    base = simulated("h200x2")
    wrapped = WrappedCompute(base.compute(), check=_wrong_on_device_1)
    report, _ = run_in_process(
        kind="gemm-sweep",
        prefix="GEMM_SWEEP",
        measure=gemm_sweep.measure,
        platform=dataclasses.replace(base, _compute=lambda: wrapped),
        env={"BURNIN_VARIANT_PRECISION": "bf16", "BURNIN_GEMM_SWEEP_SECONDS": "1"},
    )
    assert report.exit_code == 1 and "exceeds 0.01" in report.message
    assert report.metrics["worstDeviceIndex"] == "1"
    # The same error is within fp8's tolerance: the gate is per precision.
    report, _ = run_in_process(
        kind="gemm-sweep",
        prefix="GEMM_SWEEP",
        measure=gemm_sweep.measure,
        platform=dataclasses.replace(simulated("h200x2"), _compute=lambda: wrapped),
        env={"BURNIN_VARIANT_PRECISION": "fp8", "BURNIN_GEMM_SWEEP_SECONDS": "1"},
    )
    assert report.exit_code == 0, report.message
