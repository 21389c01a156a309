"""thermal-soak's rules: a full window per segment (G1), re-prints every 15 s (H1), and an
unreadable kernel log is ``n/a``, never a clean zero (A8)."""

from __future__ import annotations

from runners.gpu_burn.tests.harness import run_in_process, simulated
from runners.tests.fake_tools import run_module
from runners.thermal_soak import runner as thermal_soak


def test_G1_the_window_is_the_whole_budget_so_each_segment_is_full() -> None:
    report = run_module(
        "runners.thermal_soak",
        kind="thermal-soak",
        env={"GLIMMER_SIM_GPU": "h200x2", "BURNIN_DURATION_SECONDS": "900"},
    )
    assert report.exit_code == 0, report.message
    assert float(report.metrics["elapsedS"]) >= 900
    assert report.metrics["durationRequestedS"] == "900"


def test_H1_readings_are_reprinted_every_15_seconds() -> None:
    _, text = run_in_process(
        kind="thermal-soak",
        prefix="THERMAL_SOAK",
        measure=thermal_soak.measure,
        platform=simulated("h200"),
        env={"BURNIN_DURATION_SECONDS": "150"},
    )
    lines = text.splitlines()
    assert sum(line.startswith("gpuTempC=") for line in lines) == 10  # 9 re-prints + final
    assert sum(line.startswith("xidEvents=") for line in lines) == 10
    assert lines[-1] == "THERMAL_SOAK_PASS"


def test_A8_unreadable_kernel_log_is_na_and_no_window_watched() -> None:
    report, _ = run_in_process(
        kind="thermal-soak",
        prefix="THERMAL_SOAK",
        measure=thermal_soak.measure,
        platform=simulated("h200x2:xid:79", _kmsg=lambda: None),
        env={"BURNIN_DURATION_SECONDS": "30"},
    )
    assert report.exit_code == 0, report.message
    assert "xidEvents" in report.unmeasurable and "xidEvents" not in report.metrics
    assert report.metrics["xidWindowsWatched"] == "0"


def test_xid_in_the_window_fails_and_the_backlog_does_not() -> None:
    # fallen-off-bus leaves an Xid 79 in the backlog (before the window) but also loses
    # the GPU; a plain xid fault arrives during the window.
    report = run_module(
        "runners.thermal_soak",
        kind="thermal-soak",
        env={"GLIMMER_SIM_GPU": "h200x2:xid:48", "BURNIN_DURATION_SECONDS": "30"},
    )
    assert report.exit_code == 1
    assert report.metrics["xidEvents"] == "1" and report.metrics["lastXidCode"] == "48"
    assert report.metrics["xidPreexisting"] == "0"
    assert report.metrics["worstDeviceIndex"] == "1"
