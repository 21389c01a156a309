"""The one GPU preamble (``runners.sdk.gpus.open_gpus``): NVML and CUDA must agree."""

from __future__ import annotations

import importlib
import io
from dataclasses import replace
from typing import Any

import pytest

from runners.catalog import RUNNERS
from runners.sdk import entry
from runners.sdk.entry import guarded_main
from runners.sdk.gpus import open_gpus
from runners.sdk.outcome import RunnerError
from runners.sdk.platform import SIM_ENV, open_platform
from runners.sdk.protocols import Compute, Platform
from runners.sdk.report import Markers, Report

SIM = "h200x2"
MISMATCH = "NVML sees 2 GPUs but CUDA sees 1"
#: The runners that drive CUDA; each must refuse a count mismatch through the preamble.
CUDA_RUNNERS = {
    "compute-smoke",
    "clockprobe",
    "memory-bw",
    "gpu-burn",
    "thermal-soak",
    "gemm-sweep",
}


class HidesOneGpu:
    """The simulated compute library, counting one GPU fewer than NVML sees."""

    def __init__(self, inner: Compute, opened: list[bool]) -> None:
        self._inner = inner
        opened.append(True)

    def device_count(self) -> int:
        return self._inner.device_count() - 1

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def miscounting_platform(opened: list[bool]) -> Platform:
    platform = open_platform({SIM_ENV: SIM})
    inner = platform._compute
    return replace(platform, _compute=lambda: HidesOneGpu(inner(), opened))


def run_kind(kind: str, monkeypatch: pytest.MonkeyPatch) -> tuple[int, list[str], bool]:
    opened: list[bool] = []
    monkeypatch.setattr(entry, "open_platform", lambda environ: miscounting_platform(opened))
    runner = importlib.import_module(RUNNERS[kind].module + ".runner")
    out = io.StringIO()
    markers = Markers.for_prefix("T")
    environ = {SIM_ENV: SIM, **RUNNERS[kind].test_env}
    code = guarded_main(
        markers=markers,
        measure=runner.measure,
        environ=environ,
        report=Report(markers=markers, out=out),
    )
    return code, out.getvalue().splitlines(), bool(opened)


def test_A16_A17_nvml_and_cuda_disagreeing_on_the_gpu_count_is_exit_3_in_every_cuda_runner(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every runner that opens CUDA refuses to measure when CUDA and NVML count
    different GPUs: CUDA index i would not be NVML device i, so the fold could name the
    wrong card. Runners that never open CUDA are untouched by the check."""
    opened_cuda = set()
    for kind in RUNNERS:
        if not RUNNERS[kind].reads_gpu:
            continue  # host-only (memory-stress): opens no GPU library at all
        code, lines, opened = run_kind(kind, monkeypatch)
        if opened:
            opened_cuda.add(kind)
            assert code == 3, (kind, lines)
            assert lines[-1] == f"T_ERROR: {MISMATCH}", (kind, lines)
    assert opened_cuda == CUDA_RUNNERS


def test_A16_open_gpus_refuses_a_count_mismatch_before_any_gpu_is_measured() -> None:
    with pytest.raises(RunnerError, match=MISMATCH):
        open_gpus(platform=miscounting_platform([]), allocated=None)
