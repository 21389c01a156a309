"""N15: ``glimmer conformance`` is the conformance suite's own clauses, from the CLI.

End to end through the command line: every Node runner of this project passes its own
kind's card; the deliberately broken example (runners/examples/broken_runner.py) fails
exactly the three clauses it breaks and passes the rest; every clause of the card is
judged (units, n/a and the duration budget included), none shown as passed unjudged;
``--image`` runs the runner under the
container runtime (a stand-in here: no engine on this machine, so the argv it builds is
what is tested, not a real container).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from glimmer.cli import main
from glimmer.cli.conformance import case_env_names, image_command, node_kinds
from runners.catalog import RUNNERS
from runners.conformance import Case, case_findings, check
from runners.conformance.clauses import FAIL, NOT_CHECKED, PASS, UNCHECKED
from tests.local.fake_runtime import FakeRuntime, fake_runtime_on_path

ROOT = Path(__file__).resolve().parents[2]
BROKEN = ROOT / "runners" / "examples" / "broken_runner.py"
BROKEN_KIND = "fingerprint-probe"
BROKEN_CLAUSES = {"provenance", "skip-marker", "crash-no-metrics"}


def _card(*args: str) -> tuple[int, dict[str, Any]]:
    result = CliRunner().invoke(main, ["conformance", *args, "-o", "json"])
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, json.loads(result.output)


def _statuses(card: dict[str, Any]) -> dict[str, str]:
    return {row["clause"]: row["status"] for row in card["clauses"]}


@pytest.mark.parametrize("kind", node_kinds())
def test_N15_every_node_runner_here_passes_its_card_from_the_cli(kind: str, tmp_path: Path) -> None:
    # disk-io measures a real directory, which the user names (a scratch dir here)
    extra = ["--env", f"BURNIN_DISK_IO_PATH={tmp_path}"] if kind == "disk-io" else []
    code, card = _card("--kind", kind, "--command", " ".join(RUNNERS[kind].command), *extra)
    failed = {r["clause"]: r["problems"] for r in card["clauses"] if r["status"] == FAIL}
    assert code == 0 and card["conforms"] is True, failed
    statuses = _statuses(card)
    # the clauses every kind reaches were judged and passed, not merely absent
    for clause in ("exit-codes", "provenance", "error-marker", "metric-grammar", "fault:crash"):
        assert statuses[clause] == PASS, (clause, statuses[clause])


def test_N15_broken_example_fails_exactly_its_three_clauses() -> None:
    code, card = _card("--kind", BROKEN_KIND, "--command", f"python {BROKEN}")
    assert code == 1
    assert card["conforms"] is False
    assert set(card["failed"]) == BROKEN_CLAUSES
    statuses = _statuses(card)
    # everything else it was judged on passed: the broken example is otherwise correct
    others = {c: s for c, s in statuses.items() if c not in BROKEN_CLAUSES}
    assert FAIL not in others.values()
    assert statuses["healthy-metrics"] == PASS
    assert statuses["declared-skip"] == PASS  # it does exit 2 there, without the marker
    assert statuses["error-marker"] == PASS
    for row in card["clauses"]:
        if row["status"] == FAIL:
            assert row["fix"] and row["problems"], row


def test_N15_broken_example_text_card_names_each_failed_clause_with_its_fix() -> None:
    result = CliRunner().invoke(
        main, ["conformance", "--kind", BROKEN_KIND, "--command", f"python {BROKEN}"]
    )
    assert result.exit_code == 1, result.output
    for clause in BROKEN_CLAUSES:
        assert f"FAILED {clause}:" in result.output
    assert result.output.count("  fix: ") == len(BROKEN_CLAUSES)
    assert "does not conform: 3 clause(s) failed" in result.output


def test_N15_the_suite_and_the_cli_share_one_engine() -> None:
    """The suite's check() finds the broken example's crash fault through the same
    clause code the card uses: no second rule set."""
    spec = RUNNERS[BROKEN_KIND]
    crash = Case(
        kind=BROKEN_KIND, label="crash", env={"GLIMMER_SIM_GPU": "h200:crash"}, expected_exit=3
    )
    problems = check(spec, crash, command=("python", str(BROKEN)))
    assert any("metrics printed on a crash" in p for p in problems), problems


def test_N15_units_n_a_and_duration_are_judged_rows_of_every_card() -> None:
    """The clauses once shown as ``not checked`` are judged on real cases: the broken
    example keeps them (it breaks three others), so they pass on runs, not by default."""
    _code, card = _card("--kind", BROKEN_KIND, "--command", f"python {BROKEN}")
    rows = {row["clause"]: row for row in card["clauses"]}
    assert UNCHECKED == ()
    assert NOT_CHECKED not in {row["status"] for row in rows.values()}
    for clause in ("units", "n/a", "duration-deadline"):
        assert rows[clause]["status"] == PASS and rows[clause]["cases"] >= 1, rows[clause]


@pytest.mark.parametrize(
    ("args", "complaint"),
    [
        (["--kind", "no-such-kind", "--command", "true"], "unknown kind"),
        (["--kind", "tcp-baseline", "--command", "true"], "a Pair runner"),
        (["--kind", "clockprobe"], "exactly one of --command"),
        (["--kind", "clockprobe", "--command", "x", "--image", "y"], "exactly one of"),
        (["--kind", "clockprobe", "--command", "x", "--runtime", "docker"], "goes with --image"),
        (["--kind", "clockprobe", "--command", "   "], "--command is empty"),
        (["--kind", "clockprobe", "--command", "x", "--env", "NOEQUALS"], "write NAME=VALUE"),
    ],
)
def test_N15_usage_errors_exit_2_naming_the_fix(args: list[str], complaint: str) -> None:
    result = CliRunner().invoke(main, ["conformance", *args])
    assert result.exit_code == 2
    assert complaint in result.output


def test_N15_image_command_passes_every_case_variable_by_name() -> None:
    names = case_env_names("clockprobe")
    assert "GLIMMER_SIM_GPU" in names
    argv = image_command(runtime_binary="/usr/bin/podman", image="example/r:1", env_names=names)
    expected_env = [part for name in names for part in ("-e", name)]
    assert argv == [
        "/usr/bin/podman",
        "run",
        "--rm",
        "-i",
        "--network",
        "none",
        *expected_env,
        "example/r:1",
    ]


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeRuntime:
    return fake_runtime_on_path(tmp_path, monkeypatch)


def test_N15_image_runs_under_the_named_runtime(fake: FakeRuntime) -> None:
    fake.install("docker")
    # the stand-in prints the same thing for every case: a card that fails, read through
    # the runtime's client (no real container: there is no engine on this machine)
    fake.play(run_exit_without_container=0, client_message="provenance=sim\n")
    result = CliRunner().invoke(
        main,
        [
            "conformance",
            "--kind",
            "clockprobe",
            "--image",
            "example/r:1",
            "--runtime",
            "docker",
            "-o",
            "json",
            "--jobs",
            "2",
        ],
    )
    assert result.exit_code == 1, result.output
    runs = fake.calls("run")
    assert runs, "the runtime was never asked to run the image"
    for argv in runs:
        assert argv[-1] == "example/r:1"
        assert argv[argv.index("GLIMMER_SIM_GPU") - 1 :][:2] == ["-e", "GLIMMER_SIM_GPU"]
    assert "pass-line" in json.loads(result.output)["failed"]


def test_N15_image_with_an_absent_runtime_is_a_usage_error(fake: FakeRuntime) -> None:
    result = CliRunner().invoke(
        main, ["conformance", "--kind", "clockprobe", "--image", "x", "--runtime", "podman"]
    )
    assert result.exit_code == 2
    assert "podman is not on PATH" in result.output


def test_N15_broken_example_runs_as_a_plain_program() -> None:
    """The example is a program anyone can run, not a test double: healthy, it exits 0."""
    done = subprocess.run(
        [sys.executable, str(BROKEN)],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "GLIMMER_SIM_GPU": "h200"},
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "provenance=" not in done.stdout


def test_N15_a_runner_that_hangs_fails_finishes_and_is_killed() -> None:
    spec = RUNNERS[BROKEN_KIND]
    case = Case(kind=BROKEN_KIND, label="healthy", env={}, expected_exit=0)
    found, judged, _ = case_findings(
        spec, case, command=("python", "-c", "import time; time.sleep(30)"), timeout_s=1
    )
    assert [f.clause for f in found] == ["finishes"]
    assert "finishes" in judged
