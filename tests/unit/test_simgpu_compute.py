"""The simulated compute's precisions and its ``sdc`` fault (runners/sdk/simgpu/compute.py)."""

from __future__ import annotations

import pytest

from runners.sdk.protocols import NotSupportedError
from runners.sdk.simgpu.compute import SimCompute
from runners.sdk.simgpu.load_faults import SDC_EVERY_NTH_CHECK, SDC_FAULT
from runners.sdk.simgpu.profiles import PROFILES
from runners.sdk.simgpu.spec import SimSpec
from runners.sdk.simgpu.state import SimState


def compute(profile: str, *, count: int = 2, faults: frozenset[str] = frozenset()) -> SimCompute:
    spec = SimSpec(profile=PROFILES[profile], count=count, faults=faults, xid_codes=())
    return SimCompute(SimState(spec=spec))


def relative(sim: SimCompute, device: int) -> float:
    check = sim.gemm_check(device=device, precision="bf16", size=4096)
    assert check.max_abs_error is not None and check.max_abs_ref
    return check.max_abs_error / check.max_abs_ref


def test_sdc_corrupts_every_nth_check_on_the_last_device_only() -> None:
    sim = compute("h200", faults=frozenset({SDC_FAULT}))
    faulty = [relative(sim, 1) for _ in range(2 * SDC_EVERY_NTH_CHECK)]
    healthy = [relative(sim, 0) for _ in range(2 * SDC_EVERY_NTH_CHECK)]
    assert [r > 0.1 for r in faulty] == [False, False, True, False, False, True]
    assert all(r < 0.01 for r in healthy)


@pytest.mark.parametrize(
    ("profile", "precision"),
    [("h200", "fp4"), ("t4", "fp8"), ("t4", "tf32")],
)
def test_a_precision_the_part_lacks_is_not_supported(profile: str, precision: str) -> None:
    with pytest.raises(NotSupportedError, match="needs sm_"):
        compute(profile).gemm_check(device=0, precision=precision, size=64)


@pytest.mark.parametrize("profile", ["b200", "gb200", "gb10"])
def test_blackwell_profiles_run_fp4(profile: str) -> None:
    sim = compute(profile)
    assert sim.gemm_check(device=0, precision="fp4", size=64).nonfinite == 0
    fp4 = sim.gemm_throughput_tflops(device=0, precision="fp4", size=64, seconds=1)
    bf16 = sim.gemm_throughput_tflops(device=0, precision="bf16", size=64, seconds=1)
    assert fp4 == pytest.approx(4 * bf16)


def test_unknown_precision_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="no implemented path"):
        compute("h200").gemm_check(device=0, precision="int8", size=64)
