"""compute-smoke on the simulated AMD parts: gfx-target precision rule, matrix cells.

The mi300xx2 cells run in the conformance suite (``AMD_FAULT_MATRIX``); here the same
row on the MI325X, the AMD evidence, and the refusals of the gfx rule.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from glimmer.contract import RunnerReport
from runners.catalog import RUNNERS
from runners.compute_smoke import runner as compute_smoke
from runners.compute_smoke.precision import gfx_precision, image_runs_on_gfx
from runners.conformance import Case, check
from runners.sdk.outcome import RunnerError
from runners.sdk.protocols import Compute, NotSupportedError
from runners.tests.amd_fixtures import amd_matrix_cases
from runners.tests.fake_tools import run_module
from runners.tests.inprocess_harness import WrappedCompute, run_in_process, with_compute

KIND = "compute-smoke"


@pytest.mark.parametrize("case", amd_matrix_cases(KIND, profile="mi325xx2"), ids=str)
def test_amd_fault_gives_its_matrix_phase_on_mi325x(case: Case) -> None:
    assert check(RUNNERS[KIND], case) == []


@pytest.mark.parametrize("profile", ["mi300x", "mi325x"])
def test_gfx942_is_tested_in_fp8_with_its_gfx_target_and_no_cuda_capability(
    profile: str,
) -> None:
    report = run_module("runners.compute_smoke", kind=KIND, env={"GLIMMER_SIM_GPU": profile})
    assert report.exit_code == 0, report.message
    assert report.metrics["gemmPrecision"] == "fp8"
    assert report.metrics["gfxTarget"] == "gfx942"
    assert "computeCap" in report.unmeasurable
    assert "gfx942" in report.metrics["builtCudaArch"]
    assert report.provenance == "sim"


def test_fail_closed_unknown_gfx_target_is_refused_not_guessed() -> None:
    with pytest.raises(RunnerError, match="gfx1100"):
        gfx_precision("gfx1100")


def test_gfx_code_objects_match_the_target_only() -> None:
    assert image_runs_on_gfx("gfx942", ["gfx90a", "gfx942:xnack-"])
    assert not image_runs_on_gfx("gfx942", ["gfx90a", "gfx9420"])


class _OtherArches(WrappedCompute):
    def built_arch_list(self) -> list[str]:
        return ["gfx90a", "gfx1100"]


def _refused(compute: Callable[[Compute], Compute]) -> RunnerReport:
    report, _ = run_in_process(
        kind=KIND,
        prefix="FP4_GEMM",
        measure=compute_smoke.measure,
        platform=with_compute("mi300x", compute),
        env={},
    )
    return report


def test_fail_closed_rocm_image_without_gfx942_code_is_an_error() -> None:
    report = _refused(_OtherArches)
    assert report.exit_code == 3
    assert "image not built for gfx942" in report.message


def test_fail_closed_fp8_missing_from_the_rocm_library_is_an_error() -> None:
    report = _refused(
        lambda inner: WrappedCompute(inner, refuse=NotSupportedError("no float8_e4m3fnuz"))
    )
    assert report.exit_code == 3
    assert "gfx942" in report.message
