"""dcgm-diag's plugin allowlist (``BURNIN_DCGM_ALLOW``) and its counter deltas (§O)."""

from __future__ import annotations

import io
from typing import Any

import pytest

from runners.dcgm_diag import parse
from runners.dcgm_diag.allowlist import parse_allowlist, plugin_of
from runners.dcgm_diag.counters import Reading, print_deltas
from runners.sdk.outcome import RunnerError
from runners.sdk.report import Markers, Report
from runners.tests.fake_tools import run_module


def diag(**env: str) -> Any:
    return run_module("runners.dcgm_diag", kind="dcgm-diag", env=env)


def test_without_an_allowlist_every_test_is_judged() -> None:
    report = diag(GLIMMER_SIM_GPU="gb10x2:low-bandwidth")
    assert report.exit_code == 1 and "PCIe" in report.message


def test_a_failure_outside_the_allowlist_is_printed_but_does_not_gate() -> None:
    report = diag(GLIMMER_SIM_GPU="gb10x2:low-bandwidth", BURNIN_DCGM_ALLOW="software,memory")
    assert report.exit_code == 0, report.message
    assert report.metrics["diagTestsFailed"] == "0"
    assert report.metrics["excludedTestsNotPassed"] == "PCIe"
    assert report.metrics["testsExcluded"] == "1"
    assert report.metrics["dcgmAllow"] == "memory,software"


def test_a_failure_inside_the_allowlist_still_fails() -> None:
    report = diag(GLIMMER_SIM_GPU="gb10x2:low-bandwidth", BURNIN_DCGM_ALLOW="pcie")
    assert report.exit_code == 1 and "PCIe" in report.message


def test_A16_an_unknown_plugin_name_is_refused_never_a_silent_exclusion() -> None:
    report = diag(GLIMMER_SIM_GPU="gb10", BURNIN_DCGM_ALLOW="pcei")
    assert report.exit_code == 3 and "pcei" in report.message


def test_fail_closed_an_allowlist_that_keeps_no_test_that_ran_is_an_error() -> None:
    report = diag(GLIMMER_SIM_GPU="gb10", BURNIN_DCGM_ALLOW="memtest")  # level 4 only
    assert report.exit_code == 3 and "no judged test" in report.message


@pytest.mark.parametrize(
    ("category", "name", "plugin"),
    [
        ("Deployment", "Denylist", "software"),
        ("Integration", "PCIe", "pcie"),
        ("Hardware", "GPU Memory", "memory"),
        ("Stress", "Targeted Stress", "targeted_stress"),
        ("Stress", "Memory Bandwidth", "memory_bandwidth"),
        ("Hardware", "Pulse Test", "pulse_test"),
    ],
)
def test_document_tests_map_to_dcgm_plugin_names(category: str, name: str, plugin: str) -> None:
    test = parse.TestOutcome(name=name, category=category, statuses=("Pass",), warnings=())
    assert plugin_of(test) == plugin


def test_an_empty_allowlist_means_judge_everything() -> None:
    assert parse_allowlist("") is None
    with pytest.raises(RunnerError):
        parse_allowlist(" , ")


def printed(before: Reading | None, after: Reading | None) -> list[str]:
    out = io.StringIO()
    print_deltas(Report(markers=Markers.for_prefix("DCGM_DIAG"), out=out), before, after)
    return out.getvalue().splitlines()


def reading(pcie: dict[int, int | None]) -> Reading:
    return Reading(values={"pcieReplayErrors": pcie, "remappedRows": {0: 0}, "eccDbeTotal": {0: 0}})


def test_deltas_are_summed_over_gpus() -> None:
    lines = printed(reading({0: 5, 1: 10}), reading({0: 7, 1: 13}))
    assert "pcieReplayErrors=5" in lines


def test_A8_a_counter_that_went_backwards_is_na_never_negative_or_zero() -> None:
    lines = printed(reading({0: 5, 1: 10}), reading({0: 7, 1: 2}))
    assert "pcieReplayErrors=n/a" in lines


def test_A8_a_counter_the_part_cannot_read_is_na() -> None:
    lines = printed(reading({0: None}), reading({0: None}))
    assert "pcieReplayErrors=n/a" in lines


def test_with_fewer_than_two_readings_no_delta_is_printed() -> None:
    lines = printed(None, reading({0: 1}))
    assert not any("=" in line for line in lines)
