"""N10: one exit-code table for every command; a missing file or an unknown
``--profile`` is a usage error like a bad ``--sim``; ``lint`` fails on a gate it says
can only fail."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from glimmer.cli import exits, main
from tests.unit.cli.manifests import PROFILE

ROOT = Path(__file__).resolve().parents[3]


TEST = """\
kind: BurnInTest
metadata: {name: bw}
spec:
  kind: memory-bw
  thresholds:
  - {metric: %s, comparison: GreaterThanOrEqual, value: "50"}
"""


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


@pytest.mark.parametrize("command", ["run", "plan"])
def test_N10_a_missing_file_is_a_usage_error_like_a_bad_sim(tmp_path: Path, command: str) -> None:
    code, output = invoke(command, str(tmp_path / "absent.yaml"))
    assert code == exits.USAGE and "does not exist" in output
    code, _ = invoke(command, "-f", str(tmp_path / "absent.yaml"))
    assert code == exits.USAGE
    (tmp_path / "p.yaml").write_text(PROFILE)
    code, _ = invoke(command, str(tmp_path / "p.yaml"), "--tests", str(tmp_path / "absent.yaml"))
    assert code == exits.USAGE


def test_N10_a_bad_sim_is_the_same_usage_error(tmp_path: Path) -> None:
    (tmp_path / "p.yaml").write_text(PROFILE)
    code, output = invoke("plan", str(tmp_path / "p.yaml"), "--sim", "no-such-gpu")
    assert code == exits.USAGE and "--sim" in output


@pytest.mark.parametrize("command", ["run", "plan"])
def test_N10_an_unknown_profile_is_a_usage_error_naming_what_the_files_hold(
    tmp_path: Path, command: str
) -> None:
    (tmp_path / "p.yaml").write_text(PROFILE)
    code, output = invoke(command, str(tmp_path / "p.yaml"), "--profile", "soak")
    assert code == exits.USAGE, output
    assert "--profile 'soak'" in output and "(they hold: 'quick')" in output


def test_N10_files_that_hold_no_profile_are_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "t.yaml").write_text(TEST % "hostToDeviceBandwidthGBs")
    code, output = invoke("plan", str(tmp_path / "t.yaml"))
    assert code == exits.USAGE and "no BurnInProfile in the given files" in output


def test_N10_evaluate_and_lint_refuse_a_missing_file_with_the_same_code(tmp_path: Path) -> None:
    (tmp_path / "out.txt").write_text("ok\n")
    code, _ = invoke(
        "evaluate", "--test", str(tmp_path / "absent.yaml"), "--exit-code", "0",
        "--stdout", str(tmp_path / "out.txt"),
    )  # fmt: skip
    assert code == exits.USAGE
    assert invoke("lint", str(tmp_path / "absent.yaml"))[0] == exits.USAGE


def test_N10_lint_exits_1_on_a_gate_it_says_can_only_fail(tmp_path: Path) -> None:
    (tmp_path / "t.yaml").write_text(TEST % "hostToDeviceBandwidthGbs")  # a misspelt name
    code, output = invoke("lint", str(tmp_path / "t.yaml"))
    assert "can only fail" in output
    assert code == exits.FAILED, output
    code, output = invoke("lint", str(tmp_path / "t.yaml"), "-o", "json")
    assert code == exits.FAILED and '"canOnlyFail": true' in output


def test_N10_lint_still_exits_0_on_an_unsound_gate_that_can_pass(tmp_path: Path) -> None:
    (tmp_path / "t.yaml").write_text(
        (TEST % "hostToDeviceBandwidthGBs").replace("GreaterThanOrEqual", "Equal")
    )
    code, output = invoke("lint", str(tmp_path / "t.yaml"), "-o", "json")
    assert code == exits.OK and '"severity": "Unsound"' in output
    assert '"canOnlyFail": false' in output


def test_N10_a_custom_kind_gate_on_its_own_metric_does_not_fail_lint(tmp_path: Path) -> None:
    """A custom runner prints metrics of its own: an unregistered name can pass there,
    so an Unsound finding on it (an exact compare on a unit) is advisory only."""
    custom = (TEST % "myOwnTempC").replace("kind: memory-bw", "kind: custom")
    (tmp_path / "t.yaml").write_text(custom.replace("GreaterThanOrEqual", "Equal"))
    code, output = invoke("lint", str(tmp_path / "t.yaml"), "-o", "json")
    assert '"severity": "Unsound"' in output
    assert code == exits.OK, output


def test_N10_every_command_takes_its_codes_from_the_one_table() -> None:
    from glimmer.cli import _common, evaluate, fingerprint, report, run, schedule
    from glimmer.verdict import Phase

    assert _common.BAD_INPUT == exits.USAGE
    assert run.NOT_RUN == exits.ERROR and run.NOTHING_JUDGED == exits.NOTHING_JUDGED
    assert evaluate.EXIT_BY_PHASE == {
        Phase.PASSED: exits.OK, Phase.FAILED: exits.FAILED,
        Phase.ERROR: exits.ERROR, Phase.SKIPPED: exits.SKIPPED,
    }  # fmt: skip
    for module in (fingerprint, report, schedule):
        assert module.INTERNAL_ERROR == exits.ERROR
    source = "\n".join(
        p.read_text() for p in (ROOT / "glimmer" / "cli").glob("*.py") if p.name != "exits.py"
    )
    # No command spells a status as a bare number: each names the table's.
    assert not re.search(r"(SystemExit\(|code=)\s*[0-9]\b", source)
    status = r"^[A-Z_]*(ERROR|JUDGED|NOT_RUN|INPUT|EXIT|FAIL)[A-Z_]*(: Final)? = [0-9]+$"
    assert not re.search(status, source, flags=re.M)


def test_N10_the_documented_table_is_the_code_table() -> None:
    text = (ROOT / "docs" / "cli.md").read_text()
    table = text.split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    documented = [int(m) for m in re.findall(r"^\| ([0-9]) \|", table, flags=re.M)]
    assert documented == sorted(exits.TABLE)
