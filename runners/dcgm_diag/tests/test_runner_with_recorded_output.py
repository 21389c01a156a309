"""dcgm-diag end to end on silicon paths, with recorded dcgmi output standing in for DCGM."""

from __future__ import annotations

from pathlib import Path

from runners.tests.fake_tools import fake_tool, run_module

FIXTURES = Path(__file__).parent / "fixtures"


def run(tmp_path: Path, fixture: str, exit_code: int):
    stdout = tmp_path / "out.json"
    stdout.write_text((FIXTURES / fixture).read_text() if fixture else "Error: no host engine\n")
    tool = fake_tool(tmp_path, name="dcgmi", stdout_file=stdout, exit_code=exit_code)
    return run_module("runners.dcgm_diag", kind="dcgm-diag", env={"BURNIN_DCGMI_PATH": str(tool)})


def test_legacy_layout_all_passed_is_a_pass(tmp_path: Path) -> None:
    report = run(tmp_path, "legacy-pass.json", 0)
    assert report.exit_code == 0, report.message
    assert report.metrics["diagTestsFailed"] == "0"
    assert report.metrics["driverVersion"] == "535.104.05"
    assert report.provenance == "silicon"


def test_failed_test_is_a_measured_fail_with_its_xid(tmp_path: Path) -> None:
    report = run(tmp_path, "current-fail.json", 226)
    assert report.exit_code == 1
    assert report.metrics["diagTestsFailed"] == "1"
    assert report.metrics["testsWarned"] == "1"
    assert report.metrics["lastXidCode"] == "79"
    assert report.message.startswith("DCGM_DIAG_FAIL:")


def test_fail_closed_unreadable_output_is_an_error_never_a_fail(tmp_path: Path) -> None:
    report = run(tmp_path, "", 1)
    assert report.exit_code == 3
    assert "diagTestsFailed" not in report.metrics


def test_runtime_error_document_is_an_error(tmp_path: Path) -> None:
    assert run(tmp_path, "runtime-error.json", 226).exit_code == 3


def test_unknown_level_is_refused(tmp_path: Path) -> None:
    stdout = tmp_path / "out.json"
    stdout.write_text((FIXTURES / "legacy-pass.json").read_text())
    tool = fake_tool(tmp_path, name="dcgmi", stdout_file=stdout, exit_code=0)
    report = run_module(
        "runners.dcgm_diag",
        kind="dcgm-diag",
        env={"BURNIN_DCGMI_PATH": str(tool), "BURNIN_DCGM_DIAG_LEVEL": "5"},
    )
    assert report.exit_code == 3
