"""thermal-soak's rules: a full window per segment (G1), re-prints every 15 s (H1), and an
unreadable kernel log is ``n/a``, never a clean zero (A8)."""

from __future__ import annotations

from runners.tests.fake_tools import run_module
from runners.tests.inprocess_harness import run_in_process, simulated
from runners.thermal_soak import runner as thermal_soak


def test_G1_the_window_is_the_whole_budget_so_each_segment_is_full() -> None:
    report = run_module(
        "runners.thermal_soak",
        kind="thermal-soak",
        # Longer than the 1800 s default: the budget, not the default, is the window.
        env={"GLIMMER_SIM_GPU": "h200x2", "BURNIN_DURATION_SECONDS": "3600"},
    )
    assert report.exit_code == 0, report.message
    assert float(report.metrics["elapsedS"]) >= 3600
    assert report.metrics["durationRequestedS"] == "3600"


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


class _KmsgWithBacklog:
    """A kernel log whose backlog holds an old Xid and which stays quiet afterwards."""

    def __init__(self) -> None:
        self._backlog = ["3,1,1000,-;NVRM: Xid (PCI:0000:28:00): 13, pid=1, old fault"]

    def drain(self) -> list[str]:
        lines, self._backlog = self._backlog, []
        return lines

    def dropped(self) -> int:
        return 0

    def close(self) -> None:
        return None


def test_an_xid_from_before_the_window_is_preexisting_not_an_event() -> None:
    report, _ = run_in_process(
        kind="thermal-soak",
        prefix="THERMAL_SOAK",
        measure=thermal_soak.measure,
        platform=simulated("h200x2", _kmsg=_KmsgWithBacklog),
        env={"BURNIN_DURATION_SECONDS": "30"},
    )
    assert report.exit_code == 0, report.message
    assert report.metrics["xidEvents"] == "0" and report.metrics["xidPreexisting"] == "1"
