"""N12: the CLI never silently chooses for the user: ``evaluate --test`` on a file of
several BurnInTests needs ``--name``; ``plan`` offers only the options it uses."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from glimmer.cli import exits, main
from glimmer.cli.plan import RUN_ONLY, plan
from glimmer.cli.run import run
from tests.unit.cli.manifests import PROFILE

TWO_TESTS = """\
kind: BurnInTest
metadata: {name: strict}
spec:
  kind: custom
  thresholds:
  - {metric: score, comparison: GreaterThanOrEqual, value: "90"}
---
kind: BurnInTest
metadata: {name: loose}
spec:
  kind: custom
  thresholds:
  - {metric: score, comparison: GreaterThanOrEqual, value: "10"}
"""


def evaluate(tmp_path: Path, *extra: str) -> tuple[int, str]:
    (tmp_path / "tests.yaml").write_text(TWO_TESTS)
    (tmp_path / "out.txt").write_text("score=50\n")
    result = CliRunner().invoke(
        main,
        ["evaluate", "--test", str(tmp_path / "tests.yaml"), "--exit-code", "0",
         "--stdout", str(tmp_path / "out.txt"), *extra],
    )  # fmt: skip
    return result.exit_code, result.output


def test_N12_several_tests_without_name_are_refused_naming_each(tmp_path: Path) -> None:
    code, output = evaluate(tmp_path)
    assert code == exits.USAGE
    assert "holds 2 BurnInTests ('strict', 'loose')" in output and "--name" in output


def test_N12_name_chooses_the_test_judged_by(tmp_path: Path) -> None:
    assert evaluate(tmp_path, "--name", "strict")[0] == exits.FAILED
    assert evaluate(tmp_path, "--name", "loose")[0] == exits.OK


def test_N12_a_name_the_file_does_not_hold_is_refused(tmp_path: Path) -> None:
    code, output = evaluate(tmp_path, "--name", "other")
    assert code == exits.USAGE and "(it holds: 'strict', 'loose')" in output


def test_N12_one_test_needs_no_name(tmp_path: Path) -> None:
    (tmp_path / "one.yaml").write_text(TWO_TESTS.split("---\n")[1])
    (tmp_path / "out.txt").write_text("score=50\n")
    result = CliRunner().invoke(
        main,
        ["evaluate", "--test", str(tmp_path / "one.yaml"), "--exit-code", "0",
         "--stdout", str(tmp_path / "out.txt")],
    )  # fmt: skip
    assert result.exit_code == exits.OK, result.output


def test_N12_plan_help_lists_only_the_options_plan_uses() -> None:
    result = CliRunner().invoke(main, ["plan", "--help"])
    assert result.exit_code == 0
    for flag in ("--report-dir", "--results-dir", "--retry-on-error", "--server-record",
                 "--session", "--sink-url", "--sink-timeout", "--dry-run"):  # fmt: skip
        assert flag not in result.output, flag
    for flag in ("-f, --file", "--tests", "--profile", "--sim", "--runtime", "--node",
                 "--role", "--rank", "--image-command", "--host-window", "--output"):  # fmt: skip
        assert flag in result.output, flag
    assert {p.name for p in plan.params} == {p.name for p in run.params} - RUN_ONLY


@pytest.mark.parametrize("flag", [["--report-dir", "r"], ["--sink-url", "https://x"]])
def test_N12_plan_refuses_a_run_only_option_rather_than_ignore_it(
    tmp_path: Path, flag: list[str]
) -> None:
    (tmp_path / "p.yaml").write_text(PROFILE)
    result = CliRunner().invoke(main, ["plan", str(tmp_path / "p.yaml"), *flag])
    assert result.exit_code == exits.USAGE and "No such option" in result.output


def test_N12_plan_still_plans_without_the_run_only_options(tmp_path: Path) -> None:
    (tmp_path / "p.yaml").write_text(PROFILE)
    result = CliRunner().invoke(main, ["plan", str(tmp_path / "p.yaml"), "-o", "json"])
    assert result.exit_code == 0, result.output
    assert '"name": "inline-0-custom"' in result.output
