"""The per-architecture precision rule (compute_smoke/README.md)."""

from __future__ import annotations

import pytest

from runners.compute_smoke import precision
from runners.compute_smoke.precision import choose_precision, hardware_precision, image_runs_on
from runners.sdk.outcome import DeclaredSkip, RunnerError


@pytest.mark.parametrize(
    ("capability", "precision"),
    [
        ((8, 0), "bf16"),
        ((8, 6), "bf16"),
        ((8, 9), "fp8"),
        ((9, 0), "fp8"),
        ((10, 0), "fp4"),
        ((12, 0), "fp4"),
    ],
)
def test_tensor_core_precision_by_architecture(capability: tuple[int, int], precision: str) -> None:
    assert hardware_precision(capability) == precision


@pytest.mark.parametrize("capability", [(10, 0), (12, 0), (12, 1)], ids=["b200", "sm120", "gb10"])
def test_fp4_hardware_is_tested_in_fp4_never_downgraded(capability: tuple[int, int]) -> None:
    assert choose_precision(capability) == "fp4"


def test_hopper_and_ampere_skip_fp4_and_test_their_own_precision() -> None:
    assert choose_precision((9, 0)) == "fp8"
    assert choose_precision((8, 0)) == "bf16"


def test_a_precision_without_an_implementation_is_an_error_never_a_downgrade(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(precision, "IMPLEMENTED_PRECISIONS", frozenset({"fp8", "bf16"}))
    with pytest.raises(RunnerError, match="FP4"):
        choose_precision((10, 0))


def test_parts_without_low_precision_tensor_cores_declare_a_skip() -> None:
    with pytest.raises(DeclaredSkip):
        choose_precision((7, 5))


def test_A16_wrong_arch_image_is_detected() -> None:
    assert image_runs_on((9, 0), ["sm_80", "sm_90"])
    assert image_runs_on((9, 0), ["sm_90a"])
    assert image_runs_on((10, 0), ["sm_80", "compute_90"])  # PTX JIT forward
    assert not image_runs_on((9, 0), ["sm_80", "sm_86"])
    assert not image_runs_on((8, 0), ["compute_90"])
