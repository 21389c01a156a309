"""dcgm-diag's plugin switches and its counter deltas (§O).

``BURNIN_DCGM_ALLOW`` enables plugins past DCGM's per-SKU allowlist (the Go reference's
meaning: ``-p <name>.is_allowed=true``); ``BURNIN_DCGM_JUDGE_ONLY`` narrows which results
are judged. ``current-gated-skip.json`` is the shape DCGM gives on a part it gates (GB10,
level 2): the deployment tests pass, PCIe and GPU Memory ``Skip`` with no reason.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest

from runners.dcgm_diag import parse
from runners.dcgm_diag.allowlist import allow_parameters, parse_plugins, plugin_of
from runners.dcgm_diag.counters import Reading, print_deltas
from runners.sdk.outcome import RunnerError
from runners.sdk.report import Markers, Report
from runners.tests.fake_tools import run_module

FIXTURES = Path(__file__).parent / "fixtures"


def diag(**env: str) -> Any:
    return run_module("runners.dcgm_diag", kind="dcgm-diag", env=env)


def recording_dcgmi(tmp_path: Path, fixture: str, *, exit_code: int = 0) -> tuple[Path, Path]:
    """A dcgmi that records its argv and prints a recorded document; (tool, argv file)."""
    argv_file = tmp_path / "argv"
    tool = tmp_path / "dcgmi"
    document = FIXTURES / fixture
    tool.write_text(
        f"#!/bin/sh\nprintf '%s\\n' \"$@\" > '{argv_file}'\ncat '{document}'\nexit {exit_code}\n"
    )
    tool.chmod(0o755)
    return tool, argv_file


def recorded(tmp_path: Path, fixture: str, **env: str) -> Any:
    tool, _ = recording_dcgmi(tmp_path, fixture)
    return diag(BURNIN_DCGMI_PATH=str(tool), **env)


# --- BURNIN_DCGM_ALLOW: enable gated plugins ----------------------------------------------


def test_fail_closed_a_judged_test_that_was_skipped_is_never_a_pass(tmp_path: Path) -> None:
    report = recorded(tmp_path, "current-gated-skip.json")
    assert report.exit_code == 3, report.message
    assert report.metrics["testsSkipped"] == "2" and report.metrics["testsPassed"] == "2"
    assert "PCIe, GPU Memory" in report.message
    assert "BURNIN_DCGM_ALLOW" in report.message and "BURNIN_DCGM_JUDGE_ONLY" in report.message


def test_a_failure_outranks_a_skipped_test(tmp_path: Path) -> None:
    tool, _ = recording_dcgmi(tmp_path, "current-fail.json", exit_code=226)
    report = diag(BURNIN_DCGMI_PATH=str(tool))
    assert report.exit_code == 1 and report.metrics["testsSkipped"] == "1"


def test_allow_is_recorded_as_the_parameters_the_run_used() -> None:
    report = diag(GLIMMER_SIM_GPU="gb10", BURNIN_DCGM_ALLOW="pcie, Memory")
    assert report.exit_code == 0, report.message
    assert report.metrics["dcgmAllow"] == "memory,pcie"
    assert report.metrics["diagParams"] == "memory.is_allowed=true;pcie.is_allowed=true"


def test_an_allowed_plugin_is_judged_enabling_is_not_passing() -> None:
    report = diag(GLIMMER_SIM_GPU="gb10x2:low-bandwidth", BURNIN_DCGM_ALLOW="memory,pcie")
    assert report.exit_code == 1 and "PCIe" in report.message


def test_allow_never_narrows_which_results_are_judged() -> None:
    # remap-pending fails a software (deployment) test: allowing memory,pcie keeps it judged.
    report = diag(GLIMMER_SIM_GPU="gb10:remap-pending", BURNIN_DCGM_ALLOW="memory,pcie")
    assert report.exit_code == 1 and "Row Remap" in report.message
    assert "testsExcluded" not in report.metrics


def test_allow_reaches_dcgmi_as_its_p_parameter_after_the_subsystem(tmp_path: Path) -> None:
    tool, argv_file = recording_dcgmi(tmp_path, "legacy-pass.json")
    report = diag(BURNIN_DCGMI_PATH=str(tool), BURNIN_DCGM_ALLOW="memory,pcie")
    assert report.exit_code == 0, report.message
    argv = argv_file.read_text().splitlines()
    assert argv[0] == "diag"
    assert argv[argv.index("-p") + 1] == "memory.is_allowed=true;pcie.is_allowed=true"
    assert argv[-1] == "-j"


def test_without_allow_dcgmi_gets_no_p_parameter(tmp_path: Path) -> None:
    tool, argv_file = recording_dcgmi(tmp_path, "legacy-pass.json")
    report = diag(BURNIN_DCGMI_PATH=str(tool))
    assert report.exit_code == 0, report.message
    assert argv_file.read_text().splitlines() == ["diag", "-r", "2", "-j"]
    assert "diagParams" not in report.metrics


def test_allow_parameters_are_one_is_allowed_clause_per_plugin() -> None:
    assert allow_parameters(None) == ""
    assert allow_parameters(frozenset({"pcie", "memory", "targeted_stress"})) == (
        "memory.is_allowed=true;pcie.is_allowed=true;targeted_stress.is_allowed=true"
    )


# --- BURNIN_DCGM_JUDGE_ONLY: narrow what is judged -----------------------------------------


def test_without_judge_only_every_test_is_judged() -> None:
    report = diag(GLIMMER_SIM_GPU="h200x2:low-bandwidth")
    assert report.exit_code == 1 and "PCIe" in report.message


def test_a_failure_outside_judge_only_is_printed_but_does_not_gate() -> None:
    report = diag(GLIMMER_SIM_GPU="h200x2:low-bandwidth", BURNIN_DCGM_JUDGE_ONLY="software,memory")
    assert report.exit_code == 0, report.message
    assert report.metrics["diagTestsFailed"] == "0"
    assert report.metrics["excludedTestsNotPassed"] == "PCIe"
    assert report.metrics["testsExcluded"] == "1"
    assert report.metrics["dcgmJudgeOnly"] == "memory,software"


def test_a_failure_inside_judge_only_still_fails() -> None:
    report = diag(GLIMMER_SIM_GPU="h200x2:low-bandwidth", BURNIN_DCGM_JUDGE_ONLY="pcie")
    assert report.exit_code == 1 and "PCIe" in report.message


def test_judge_only_can_leave_a_skipped_plugin_out_of_judgement(tmp_path: Path) -> None:
    report = recorded(tmp_path, "current-gated-skip.json", BURNIN_DCGM_JUDGE_ONLY="software")
    assert report.exit_code == 0, report.message
    assert report.metrics["testsExcluded"] == "2" and report.metrics["testsSkipped"] == "0"


@pytest.mark.parametrize("variable", ["BURNIN_DCGM_ALLOW", "BURNIN_DCGM_JUDGE_ONLY"])
def test_A16_an_unknown_plugin_name_is_refused_never_a_silent_gate_or_exclusion(
    variable: str,
) -> None:
    report = diag(GLIMMER_SIM_GPU="h200", **{variable: "pcei"})
    assert report.exit_code == 3 and "pcei" in report.message and variable in report.message


def test_fail_closed_a_judge_only_list_that_keeps_no_test_that_ran_is_an_error() -> None:
    report = diag(GLIMMER_SIM_GPU="h200", BURNIN_DCGM_JUDGE_ONLY="memtest")  # level 4 only
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


def test_an_empty_plugin_list_means_unset() -> None:
    assert parse_plugins("", variable="BURNIN_DCGM_ALLOW") is None
    with pytest.raises(RunnerError, match="BURNIN_DCGM_JUDGE_ONLY"):
        parse_plugins(" , ", variable="BURNIN_DCGM_JUDGE_ONLY")


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
