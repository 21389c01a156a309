"""gpu-burn's engine on the simulated AMD parts, for both runners that run it:
gpu-burn and thermal-soak (a soak of the same load).

Xids are NVIDIA driver events: on AMD a watched window prints ``xidEvents=n/a`` and
``xidSource=none`` and never reads the kernel log; a part whose firmware cannot report
throttle reasons gets no throttle count (never a zero). The mi300xx2 matrix cells run in
the conformance suite; here the same rows on the MI325X.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pytest

from runners.catalog import RUNNERS
from runners.conformance import Case, check
from runners.gpu_burn import runner as gpu_burn
from runners.sdk.entry import RunnerContext
from runners.sdk.outcome import Verdict
from runners.sdk.protocols import KmsgReader
from runners.tests.amd_fixtures import SIBLING, amd_matrix_cases, without_throttle_reasons
from runners.tests.inprocess_harness import run_in_process, simulated
from runners.thermal_soak import runner as thermal_soak

WINDOW = {"BURNIN_DURATION_SECONDS": "30"}

#: kind -> (marker prefix, measure, what asks it to watch for Xids).
ENGINE: Mapping[str, tuple[str, Callable[[RunnerContext], Verdict], Mapping[str, str]]] = {
    "gpu-burn": ("GPU_BURN", gpu_burn.measure, {"BURNIN_GPU_BURN_WATCH_XID": "true"}),
    "thermal-soak": ("THERMAL_SOAK", thermal_soak.measure, {}),
}


@pytest.mark.parametrize(
    "case",
    [case for kind in ENGINE for case in amd_matrix_cases(kind, profile=SIBLING)],
    ids=str,
)
def test_amd_fault_gives_its_matrix_phase_on_mi325x(case: Case) -> None:
    assert check(RUNNERS[case.kind], case) == []


def _no_kernel_log() -> KmsgReader | None:
    raise AssertionError("the kernel log was opened on an AMD node")


@pytest.mark.parametrize("kind", ENGINE)
def test_amd_window_prints_xid_na_and_reads_no_kernel_log(kind: str) -> None:
    prefix, measure, watch = ENGINE[kind]
    report, text = run_in_process(
        kind=kind,
        prefix=prefix,
        measure=measure,
        platform=simulated("mi300xx2", _kmsg=_no_kernel_log),
        env={**WINDOW, **watch},
    )
    assert report.exit_code == 0, text[-600:]
    assert "xidEvents" in report.unmeasurable
    assert report.metrics["xidSource"] == "none"
    assert report.metrics["xidWindowsWatched"] == "0"


@pytest.mark.parametrize("kind", ENGINE)
def test_unreadable_throttle_reasons_claim_no_throttle_count(kind: str) -> None:
    prefix, measure, _ = ENGINE[kind]
    nvml: Any = simulated("mi300xx2").nvml()
    report, text = run_in_process(
        kind=kind,
        prefix=prefix,
        measure=measure,
        platform=simulated("mi300xx2", _nvml=lambda: without_throttle_reasons(nvml)),
        env=WINDOW,
    )
    assert report.exit_code == 0, text[-600:]
    assert "throttleEvents=" not in text and "throttledSamples=" not in text
    assert "sustainedClockPct=" in text
