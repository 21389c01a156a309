"""memory-stress's verdicts from recorded stressapptest output (the real run is in the
conformance suite; a real memory fault cannot be injected)."""

from __future__ import annotations

from pathlib import Path

from runners.tests.fake_tools import fake_tool, run_module

FIXTURES = Path(__file__).parent / "fixtures"


def run(tmp_path: Path, text: str, exit_code: int):
    stdout = tmp_path / "out.txt"
    stdout.write_text(text)
    tool = fake_tool(tmp_path, name="stressapptest", stdout_file=stdout, exit_code=exit_code)
    return run_module(
        "runners.memory_stress",
        kind="memory-stress",
        env={"BURNIN_STRESSAPPTEST_PATH": str(tool), "BURNIN_STRESS_SECONDS": "1"},
    )


def test_hardware_incidents_are_a_measured_fail(tmp_path: Path) -> None:
    report = run(tmp_path, (FIXTURES / "fail-constructed.txt").read_text(), 1)
    assert report.exit_code == 1
    assert (report.metrics["memoryErrors"], report.metrics["miscompares"]) == ("2", "2")
    assert report.message.startswith("STRESSAPPTEST_FAIL:")


def test_fail_closed_truncated_output_is_an_error(tmp_path: Path) -> None:
    report = run(tmp_path, "Log: Commandline - stressapptest\nStats: Starting SAT\n", 137)
    assert report.exit_code == 3
    assert "memoryErrors" not in report.metrics


def test_pass_summary_with_nonzero_exit_is_an_error(tmp_path: Path) -> None:
    report = run(tmp_path, (FIXTURES / "pass-1.0.6.txt").read_text(), 1)
    assert report.exit_code == 3


def test_memory_size_follows_the_memory_limit(tmp_path: Path) -> None:
    stdout = tmp_path / "out.txt"
    stdout.write_text((FIXTURES / "pass-1.0.6.txt").read_text())
    tool = fake_tool(tmp_path, name="stressapptest", stdout_file=stdout, exit_code=0)
    report = run_module(
        "runners.memory_stress",
        kind="memory-stress",
        env={
            "BURNIN_STRESSAPPTEST_PATH": str(tool),
            "BURNIN_RESOURCE_LIMITS": "cpu=2,memory=2Gi",
            "BURNIN_DURATION_SECONDS": "50",
        },
    )
    assert report.exit_code == 0, report.message
    assert report.metrics["stressMemoryMB"] == "1024"
    assert report.metrics["durationRequestedS"] == "30"
