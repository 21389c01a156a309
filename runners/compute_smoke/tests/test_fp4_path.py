"""compute-smoke's FP4 path on sm_100+: measured where the library has one, a declared
skip naming what is missing where it does not (never an Error for the architecture)."""

from __future__ import annotations

import dataclasses

import pytest

from runners.compute_smoke import runner as compute_smoke
from runners.sdk.protocols import NotSupportedError
from runners.tests.fake_tools import run_module
from runners.tests.inprocess_harness import WrappedCompute, run_in_process, simulated


@pytest.mark.parametrize("profile", ["b200", "gb200", "gb10"])
def test_blackwell_parts_are_tested_in_fp4(profile: str) -> None:
    report = run_module(
        "runners.compute_smoke", kind="compute-smoke", env={"GLIMMER_SIM_GPU": profile}
    )
    assert report.exit_code == 0, report.message
    assert report.metrics["gemmPrecision"] == "fp4"


def test_fp4_missing_from_the_library_is_a_declared_skip_naming_it() -> None:
    base = simulated("gb10")
    wrapped = WrappedCompute(
        base.compute(), refuse=NotSupportedError("torch has no _scaled_mm FP4 (float4_e2m1fn_x2)")
    )
    report, _ = run_in_process(
        kind="compute-smoke",
        prefix="FP4_GEMM",
        measure=compute_smoke.measure,
        platform=dataclasses.replace(base, _compute=lambda: wrapped),
        env={},
    )
    assert report.exit_code == 2 and report.skip_declared
    assert "sm_121" in report.message and "float4_e2m1fn_x2" in report.message


def test_fail_closed_fp8_missing_from_the_library_on_hopper_is_an_error() -> None:
    base = simulated("h200")
    wrapped = WrappedCompute(base.compute(), refuse=NotSupportedError("no float8_e4m3fn"))
    report, _ = run_in_process(
        kind="compute-smoke",
        prefix="FP4_GEMM",
        measure=compute_smoke.measure,
        platform=dataclasses.replace(base, _compute=lambda: wrapped),
        env={},
    )
    assert report.exit_code == 3
