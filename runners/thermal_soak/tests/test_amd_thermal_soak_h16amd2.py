"""thermal-soak on the simulated AMD parts (h16amd2); the engine is gpu-burn's.

Xids are NVIDIA driver events: on AMD a watched window prints ``xidEvents=n/a`` and
``xidSource=none`` and never reads the kernel log; a part whose firmware cannot report
throttle reasons gets no throttle count (never a zero). The mi300xx2 matrix cells run in
the conformance suite; here the same rows on the MI325X.
"""

from __future__ import annotations

from typing import Any

import pytest

from runners.catalog import RUNNERS
from runners.conformance import Case, check
from runners.sdk.protocols import KmsgReader, NotSupportedError
from runners.tests.amd_matrix_cases import amd_matrix_cases
from runners.tests.inprocess_harness import run_in_process, simulated
from runners.thermal_soak import runner as thermal_soak

WINDOW = {"BURNIN_DURATION_SECONDS": "30"}


@pytest.mark.parametrize(
    "case",
    amd_matrix_cases("thermal-soak", profile="mi325xx2"),
    ids=str,
)
def test_amd_fault_gives_its_matrix_phase_on_mi325x(case: Case) -> None:
    assert check(RUNNERS[case.kind], case) == []


def _no_kernel_log() -> KmsgReader | None:
    raise AssertionError("the kernel log was opened on an AMD node")


@pytest.mark.parametrize(
    ("kind", "prefix", "measure", "env"),
    [
        ("thermal-soak", "THERMAL_SOAK", thermal_soak.measure, {}),
    ],
)
def test_amd_window_prints_xid_na_and_reads_no_kernel_log(
    kind: str, prefix: str, measure: Any, env: dict[str, str]
) -> None:
    report, text = run_in_process(
        kind=kind,
        prefix=prefix,
        measure=measure,
        platform=simulated("mi300xx2", _kmsg=_no_kernel_log),
        env={**WINDOW, **env},
    )
    assert report.exit_code == 0, text[-600:]
    assert "xidEvents" in report.unmeasurable
    assert report.metrics["xidSource"] == "none"
    assert report.metrics["xidWindowsWatched"] == "0"


class _NoReasons:
    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def clock_event_reasons(self) -> int:
        raise NotSupportedError("indep_throttle_status is N/A")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class _Library:
    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def device(self, index: int) -> _NoReasons:
        return _NoReasons(self._inner.device(index))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def test_unreadable_throttle_reasons_claim_no_throttle_count() -> None:
    base = simulated("mi300xx2")
    nvml = base.nvml()
    report, text = run_in_process(
        kind="thermal-soak",
        prefix="THERMAL_SOAK",
        measure=thermal_soak.measure,
        platform=simulated("mi300xx2", _nvml=lambda: _Library(nvml)),
        env=WINDOW,
    )
    assert report.exit_code == 0, text[-600:]
    assert "throttleEvents=" not in text and "throttledSamples=" not in text
    assert "sustainedClockPct=" in text
