"""gemm-sweep on the simulated AMD parts: the gfx942 precision table, matrix cells.

gfx942 (MI300X/MI325X) sweeps fp8, bf16, tf32 (XF32) and fp64; fp4 is a declared skip
naming the target; a precision the ROCm stack cannot run is a declared skip only for
fp4/tf32 (named), an Error for any other.
"""

from __future__ import annotations

import pytest

from runners.catalog import RUNNERS
from runners.conformance import Case, check
from runners.gemm_sweep import runner as gemm_sweep
from runners.gemm_sweep.precisions import require_gfx
from runners.sdk.outcome import DeclaredSkip, RunnerError
from runners.sdk.protocols import NotSupportedError
from runners.tests.amd_fixtures import amd_matrix_cases
from runners.tests.fake_tools import run_module
from runners.tests.inprocess_harness import WrappedCompute, run_in_process, with_compute

KIND = "gemm-sweep"
SHORT = {"BURNIN_GEMM_SWEEP_SECONDS": "1"}


@pytest.mark.parametrize("case", amd_matrix_cases(KIND, profile="mi325xx2"), ids=str)
def test_amd_fault_gives_its_matrix_phase_on_mi325x(case: Case) -> None:
    assert check(RUNNERS[KIND], case) == []


@pytest.mark.parametrize("profile", ["mi300xx2", "mi325x"])
@pytest.mark.parametrize("precision", ["fp8", "bf16", "tf32", "fp64"])
def test_gfx942_sweeps_its_matrix_precisions(profile: str, precision: str) -> None:
    env = {**SHORT, "GLIMMER_SIM_GPU": profile, "BURNIN_VARIANT_PRECISION": precision}
    report = run_module("runners.gemm_sweep", kind=KIND, env=env)
    assert report.exit_code == 0, report.message
    assert report.metrics["gemmPrecision"] == precision
    assert report.metrics["gfxTarget"] == "gfx942"
    assert report.provenance == "sim"


def test_gfx942_fp4_is_a_declared_skip_naming_the_target() -> None:
    env = {**SHORT, "GLIMMER_SIM_GPU": "mi300x", "BURNIN_VARIANT_PRECISION": "fp4"}
    report = run_module("runners.gemm_sweep", kind=KIND, env=env)
    assert report.exit_code == 2 and report.skip_declared
    assert "gfx942 has no FP4 matrix path" in report.message


def test_fail_closed_unknown_gfx_target_is_refused() -> None:
    with pytest.raises(RunnerError, match="gfx1100"):
        require_gfx("bf16", "gfx1100")
    with pytest.raises(DeclaredSkip, match="gfx950 has no TF32"):
        require_gfx("tf32", "gfx950")


def _refused(
    precision: str, error: NotSupportedError, *, profile: str = "mi300x"
) -> tuple[int, str]:
    report, _ = run_in_process(
        kind=KIND,
        prefix="GEMM_SWEEP",
        measure=gemm_sweep.measure,
        platform=with_compute(profile, lambda inner: WrappedCompute(inner, refuse=error)),
        env={**SHORT, "BURNIN_VARIANT_PRECISION": precision},
    )
    return report.exit_code, report.message


def test_rocm_stack_without_xf32_is_a_declared_skip_naming_it() -> None:
    code, message = _refused("tf32", NotSupportedError("needs HIPBLASLT_ALLOW_TF32=1"))
    assert code == 2
    assert "HIPBLASLT_ALLOW_TF32" in message


def test_fail_closed_fp8_missing_from_the_rocm_stack_is_an_error() -> None:
    code, message = _refused("fp8", NotSupportedError("no float8_e4m3fnuz"))
    assert code == 3
    assert "float8_e4m3fnuz" in message


def test_fail_closed_tf32_missing_on_nvidia_stays_an_error() -> None:
    code, _ = _refused("tf32", NotSupportedError("no tf32"), profile="h200")
    assert code == 3
