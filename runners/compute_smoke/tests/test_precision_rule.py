"""The FP4 rule by architecture (compute_smoke/README.md): FP4 where the part has it, a
declared skip naming the architecture where it does not, never another precision."""

from __future__ import annotations

import pytest

from runners.compute_smoke.precision import (
    PRECISION,
    gfx_no_fp4_reason,
    image_runs_on,
    no_fp4_reason,
)
from runners.sdk.outcome import RunnerError


def test_A3_the_fp4_test_runs_only_fp4() -> None:
    assert PRECISION == "fp4"


@pytest.mark.parametrize(
    "capability", [(10, 0), (10, 3), (12, 0), (12, 1)], ids=["b200", "sm103", "sm120", "gb10"]
)
def test_A3_fp4_hardware_is_tested_in_fp4(capability: tuple[int, int]) -> None:
    assert no_fp4_reason(capability) is None


@pytest.mark.parametrize(
    ("capability", "named"),
    [
        ((9, 0), "sm_90 (Hopper)"),
        ((8, 9), "sm_89 (Ada)"),
        ((8, 6), "sm_86 (Ampere)"),
        ((8, 0), "sm_80 (Ampere)"),
        ((7, 5), "sm_75 (Turing)"),
        ((6, 0), "sm_60"),
    ],
)
def test_A3_a_part_without_fp4_is_skipped_naming_its_architecture(
    capability: tuple[int, int], named: str
) -> None:
    reason = no_fp4_reason(capability)
    assert reason is not None
    assert reason.startswith(f"{named} has no FP4 tensor cores")
    assert "gemm-sweep" in reason  # where its own precisions are tested


@pytest.mark.parametrize(
    ("target", "fp4"), [("gfx950", True), ("gfx942", False), ("gfx90a", False)]
)
def test_A3_amd_fp4_follows_the_gfx_target(target: str, fp4: bool) -> None:
    reason = gfx_no_fp4_reason(target)
    assert (reason is None) is fp4
    if reason is not None:
        assert reason.startswith(f"{target} (CDNA")


def test_fail_closed_unknown_gfx_target_is_refused_not_guessed() -> None:
    with pytest.raises(RunnerError, match="gfx1100"):
        gfx_no_fp4_reason("gfx1100")


def test_A16_wrong_arch_image_is_detected() -> None:
    assert image_runs_on((9, 0), ["sm_80", "sm_90"])
    assert image_runs_on((9, 0), ["sm_90a"])
    assert image_runs_on((10, 0), ["sm_80", "compute_90"])  # PTX JIT forward
    assert not image_runs_on((9, 0), ["sm_80", "sm_86"])
    assert not image_runs_on((8, 0), ["compute_90"])
