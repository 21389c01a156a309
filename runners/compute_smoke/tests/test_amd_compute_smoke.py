"""compute-smoke on the simulated AMD parts: the gfx-target FP4 rule, matrix cells.

The mi300xx2 cells run in the conformance suite (``AMD_FAULT_MATRIX``); here the same
row on the MI325X, the AMD evidence, and the refusals of the gfx rule. gfx942 has no
FP4 matrix cores: a declared skip naming it (A3). No simulated AMD part has FP4, so the
gfx950 path is reached by reading the simulated MI300X as gfx950.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from glimmer.contract import RunnerReport
from runners.catalog import RUNNERS
from runners.compute_smoke import runner as compute_smoke
from runners.compute_smoke.precision import image_runs_on_gfx
from runners.conformance import Case, check
from runners.sdk.protocols import Compute, NotSupportedError
from runners.tests.amd_fixtures import amd_matrix_cases
from runners.tests.fake_tools import run_module
from runners.tests.inprocess_harness import WrappedCompute, run_in_process, with_compute

KIND = "compute-smoke"


@pytest.mark.parametrize("case", amd_matrix_cases(KIND, profile="mi325xx2"), ids=str)
def test_amd_fault_gives_its_matrix_phase_on_mi325x(case: Case) -> None:
    assert check(RUNNERS[KIND], case) == []


@pytest.mark.parametrize("profile", ["mi300x", "mi325x"])
def test_A3_gfx942_declares_the_fp4_skip_with_its_gfx_target_and_no_cuda_capability(
    profile: str,
) -> None:
    report = run_module("runners.compute_smoke", kind=KIND, env={"GLIMMER_SIM_GPU": profile})
    assert report.exit_code == 2 and report.skip_declared, report.message
    assert "FP4_GEMM_SKIP: gfx942 (CDNA 3) has no FP4 matrix cores" in report.message
    assert "gemmPrecision" not in report.metrics  # no FP8 GEMM in FP4's place
    assert report.metrics["gfxTarget"] == "gfx942"
    assert "computeCap" in report.unmeasurable
    assert "gfx942" in report.metrics["builtCudaArch"]
    assert report.provenance == "sim"


def test_gfx_code_objects_match_the_target_only() -> None:
    assert image_runs_on_gfx("gfx942", ["gfx90a", "gfx942:xnack-"])
    assert not image_runs_on_gfx("gfx942", ["gfx90a", "gfx9420"])


class _OtherArches(WrappedCompute):
    def built_arch_list(self) -> list[str]:
        return ["gfx90a", "gfx1100"]


class _Gfx950Build(WrappedCompute):
    def built_arch_list(self) -> list[str]:
        return [*super().built_arch_list(), "gfx950"]


def _as_gfx950(
    monkeypatch: pytest.MonkeyPatch, compute: Callable[[Compute], Compute]
) -> RunnerReport:
    """The simulated MI300X read as an FP4 part (gfx950), its compute wrapped."""
    monkeypatch.setattr(compute_smoke, "gfx_target", lambda device: "gfx950")
    report, _ = run_in_process(
        kind=KIND,
        prefix="FP4_GEMM",
        measure=compute_smoke.measure,
        platform=with_compute("mi300x", compute),
        env={},
    )
    return report


def test_fail_closed_rocm_image_without_gfx950_code_is_an_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    report = _as_gfx950(monkeypatch, _OtherArches)
    assert report.exit_code == 3
    assert "image not built for gfx950" in report.message


def test_fp4_missing_from_the_rocm_library_on_gfx950_is_a_declared_skip_naming_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    report = _as_gfx950(
        monkeypatch,
        lambda inner: _Gfx950Build(inner, refuse=NotSupportedError("no float4_e2m1fn_x2")),
    )
    assert report.exit_code == 2 and report.skip_declared
    assert "gfx950 has FP4 matrix units" in report.message
    assert "float4_e2m1fn_x2" in report.message
