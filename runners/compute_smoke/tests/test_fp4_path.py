"""compute-smoke is the FP4 test: it runs FP4 on sm_100+ and passes only there; a part
without FP4 (Hopper, Ada, Ampere, Turing) is a declared skip naming its architecture
before any GEMM runs (A3); a library without FP4 on FP4 hardware is a declared skip
naming what is missing, never an Error for the architecture."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from glimmer.contract import RunnerReport
from runners.catalog import RUNNERS
from runners.compute_smoke import runner as compute_smoke
from runners.conformance import Case, check
from runners.fault_matrix import ERROR, EXIT_CODES, FAILED, FAULTS, PASSED
from runners.sdk.protocols import (
    Compute,
    GemmCheck,
    GpuLostError,
    NotSupportedError,
    Nvml,
    Platform,
)
from runners.tests.fake_tools import run_module
from runners.tests.inprocess_harness import WrappedCompute, run_in_process, simulated

KIND = "compute-smoke"

#: compute-smoke's row of the fault matrix on a part that has FP4 (the matrix itself runs
#: on an H200, where every cell it reaches is the declared skip).
FP4_PART_PROFILE = "b200x2"
#: Simulated faults land on the last device: the fold must name it.
FAULTY_DEVICE = 1
FP4_PART_ROW: dict[str, str] = {
    "healthy": PASSED,
    "low-clock": PASSED,
    "ecc-uncorrectable": PASSED,
    "remap-pending": PASSED,
    "fallen-off-bus": ERROR,
    "xid:79": PASSED,
    "low-bandwidth": PASSED,
    "nan-compute": FAILED,
    "sdc": PASSED,
    "thermal-throttle": PASSED,
    "power-brake": PASSED,
    "pcie-downtrain": PASSED,
    "nvlink-down": PASSED,
    "ecc-correctable-storm": PASSED,
    "nic-flap-under-load": PASSED,
    "no-driver": ERROR,
    "crash": ERROR,
}


def test_the_fp4_part_row_covers_every_simulated_fault() -> None:
    assert list(FP4_PART_ROW) == list(FAULTS)


@pytest.mark.parametrize("fault", list(FP4_PART_ROW))
def test_fault_gives_its_phase_on_an_fp4_part(fault: str) -> None:
    phase = FP4_PART_ROW[fault]
    spec = FP4_PART_PROFILE if fault == "healthy" else f"{FP4_PART_PROFILE}:{fault}"
    case = Case(
        kind=KIND,
        label=f"fp4-{fault}",
        env={"GLIMMER_SIM_GPU": spec},
        expected_exit=EXIT_CODES[phase],
        require_healthy_metrics=phase == PASSED,
        faulty_device=FAULTY_DEVICE,
    )
    assert check(RUNNERS[KIND], case) == []


@pytest.mark.parametrize("profile", ["b200", "gb200", "gb10"])
def test_blackwell_parts_are_tested_in_fp4(profile: str) -> None:
    report = run_module(
        "runners.compute_smoke", kind="compute-smoke", env={"GLIMMER_SIM_GPU": profile}
    )
    assert report.exit_code == 0, report.message
    assert report.metrics["gemmPrecision"] == "fp4"


def _in_process(platform: Platform) -> tuple[RunnerReport, str]:
    return run_in_process(
        kind=KIND, prefix="FP4_GEMM", measure=compute_smoke.measure, platform=platform, env={}
    )


def _counting(spec: str) -> tuple[Platform, WrappedCompute]:
    base = simulated(spec)
    wrapped = WrappedCompute(base.compute())
    return dataclasses.replace(base, _compute=lambda: wrapped), wrapped


@pytest.mark.parametrize("profile", ["h100", "h200", "h200x2"])
def test_A3_hopper_declares_the_fp4_skip_naming_sm_90_and_runs_no_gemm(profile: str) -> None:
    platform, compute = _counting(profile)
    report, stdout = _in_process(platform)
    assert report.exit_code == 2 and report.skip_declared, stdout
    assert "FP4_GEMM_SKIP: sm_90 (Hopper) has no FP4 tensor cores" in stdout
    assert "FP4_GEMM_PASS" not in stdout
    assert compute.calls == {}  # no FP8 (or any) GEMM in FP4's place
    assert "gemmPrecision" not in report.metrics
    assert report.metrics["computeCap"] == "9.0"  # the evidence the skip is read from


def test_A3_the_pre_ampere_skip_names_its_architecture() -> None:
    report = run_module("runners.compute_smoke", kind=KIND, env={"GLIMMER_SIM_GPU": "t4"})
    assert report.exit_code == 2 and report.skip_declared
    assert "FP4_GEMM_SKIP: sm_75 (Turing) has no FP4 tensor cores" in report.message


class _Device1Capability:
    """NVML whose device 1 answers ``compute_capability`` with ``answer`` (a value, or an
    exception raised), everything else as the simulated part does."""

    def __init__(self, inner: Nvml, answer: tuple[int, int] | Exception) -> None:
        self._inner = inner
        self._answer = answer

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def device(self, index: int) -> Any:
        device = self._inner.device(index)
        if index != 1:
            return device
        answer = self._answer

        class _Answering:
            def __getattr__(self, name: str) -> Any:
                return getattr(device, name)

            def compute_capability(self) -> tuple[int, int]:
                if isinstance(answer, Exception):
                    raise answer
                return answer

        return _Answering()


def _device1(spec: str, answer: tuple[int, int] | Exception) -> tuple[Platform, WrappedCompute]:
    base, compute = _counting(spec)
    nvml = _Device1Capability(simulated(spec).nvml(), answer)
    return dataclasses.replace(base, _nvml=lambda: nvml), compute


def test_A3_fp4_never_passes_over_a_subset_of_the_gpus() -> None:
    platform, compute = _device1("b200x2", (9, 0))  # GPU 1 of the node lacks FP4
    report, stdout = _in_process(platform)
    assert report.exit_code == 2 and report.skip_declared, stdout
    assert "sm_90 (Hopper)" in report.message and "1 of 2 GPUs, first GPU 1" in report.message
    assert compute.calls == {}


def test_fail_closed_a_gpu_whose_rule_cannot_be_read_is_an_error_never_the_skip() -> None:
    # GPU 0 alone would be the Hopper skip; GPU 1 cannot be read: the node is unjudged.
    platform, _ = _device1("h200x2", GpuLostError("GPU 1 is lost", index=1))
    report, stdout = _in_process(platform)
    assert report.exit_code == 3 and not report.skip_declared, stdout


def test_fail_closed_a_lost_gpu_on_a_part_without_fp4_is_an_error_not_a_skip() -> None:
    report = run_module(
        "runners.compute_smoke", kind=KIND, env={"GLIMMER_SIM_GPU": "h200x2:fallen-off-bus"}
    )
    assert report.exit_code == 3 and not report.skip_declared, report.message


def test_fail_closed_a_result_in_another_precision_is_never_reported_as_fp4() -> None:
    def as_fp8(device: int, precision: str, real: GemmCheck | None, calls: int) -> GemmCheck:
        assert real is not None
        return dataclasses.replace(real, precision="fp8")

    base = simulated("b200")
    wrapped = WrappedCompute(base.compute(), check=as_fp8)
    report, stdout = _in_process(dataclasses.replace(base, _compute=lambda: wrapped))
    assert report.exit_code == 3, stdout
    assert "refusing to report it as FP4" in report.message
    assert "FP4_GEMM_PASS" not in stdout


def test_fp4_missing_from_the_library_is_a_declared_skip_naming_it() -> None:
    base = simulated("gb10")
    wrapped: Compute = WrappedCompute(
        base.compute(), refuse=NotSupportedError("torch has no _scaled_mm FP4 (float4_e2m1fn_x2)")
    )
    report, _ = _in_process(dataclasses.replace(base, _compute=lambda: wrapped))
    assert report.exit_code == 2 and report.skip_declared
    assert "sm_121" in report.message and "float4_e2m1fn_x2" in report.message
