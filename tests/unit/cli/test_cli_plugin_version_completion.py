"""``kubectl glimmer`` (the plugin entry point), ``glimmer version``, ``glimmer run -f``
and click's shell completion, as a user runs them."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from glimmer.cli import PLUGIN_COMMANDS, _plugin, exits, kubectl_main, main
from tests.unit.cli.manifests import PROFILE

ROOT = Path(__file__).resolve().parents[3]


def test_the_plugin_is_installed_as_kubectl_glimmer() -> None:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["kubectl-glimmer"] == "glimmer.cli:kubectl_main"
    assert scripts["glimmer"] == "glimmer.cli:main"


def test_the_plugin_runs_report_schedule_and_fingerprint() -> None:
    assert PLUGIN_COMMANDS == ("fingerprint", "report", "schedule")
    result = CliRunner().invoke(_plugin, ["--help"], prog_name="kubectl glimmer")
    assert result.exit_code == 0
    assert "Usage: kubectl glimmer" in result.output
    for name in PLUGIN_COMMANDS:
        assert name in result.output
        assert CliRunner().invoke(_plugin, [name, "--help"]).exit_code == 0
    assert " run " not in result.output and "lint" not in result.output


@pytest.mark.parametrize("name", ["run", "lint", "manager", "version"])
def test_the_plugin_refuses_other_commands_naming_glimmer(name: str) -> None:
    result = CliRunner().invoke(_plugin, [name], prog_name="kubectl glimmer")
    assert result.exit_code == exits.USAGE
    assert f"run it as: glimmer {name}" in result.output


def test_the_plugin_entry_point_calls_itself_kubectl_glimmer(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.argv", ["kubectl-glimmer", "--help"])
    with pytest.raises(SystemExit) as done:
        kubectl_main()
    assert done.value.code == 0
    assert "Usage: kubectl glimmer" in capsys.readouterr().out


def test_version_shows_version_commit_python_and_platform() -> None:
    result = CliRunner().invoke(main, ["version"])
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert lines[0].startswith("glimmer ")
    assert [line.split(":")[0] for line in lines[1:]] == ["commit", "python", "platform"]
    shown = json.loads(CliRunner().invoke(main, ["version", "-o", "json"]).output)
    assert set(shown) == {"version", "commit", "python", "platform"}
    assert shown["commit"]  # a hash in this checkout, "unknown" where none can be found


def test_version_says_unknown_rather_than_guess_a_commit(monkeypatch: pytest.MonkeyPatch) -> None:
    import subprocess
    from importlib import metadata

    from glimmer.cli import version

    monkeypatch.setattr(metadata, "distribution", _no_distribution)
    monkeypatch.setattr(subprocess, "run", _git_fails)
    assert version.commit() == version.UNKNOWN


def _no_distribution(name: str) -> object:
    from importlib import metadata

    raise metadata.PackageNotFoundError(name)


def _git_fails(*args: object, **kwargs: object) -> object:
    import subprocess

    return subprocess.CompletedProcess(["git"], 128, stdout="", stderr="not a git repository")


def test_version_without_git_says_unknown(monkeypatch: pytest.MonkeyPatch) -> None:
    import subprocess
    from importlib import metadata

    from glimmer.cli import version

    def no_git(*args: object, **kwargs: object) -> object:
        raise OSError("no git")

    monkeypatch.setattr(metadata, "distribution", _no_distribution)
    monkeypatch.setattr(subprocess, "run", no_git)
    assert version.commit() == version.UNKNOWN


def test_run_dash_f_is_the_profile_file(tmp_path: Path) -> None:
    (tmp_path / "p.yaml").write_text(PROFILE)
    by_flag = CliRunner().invoke(main, ["run", "-f", str(tmp_path / "p.yaml"), "--dry-run"])
    positional = CliRunner().invoke(main, ["run", str(tmp_path / "p.yaml"), "--dry-run"])
    assert by_flag.exit_code == 0, by_flag.output
    assert by_flag.output == positional.output and "inline-0-custom" in by_flag.output


def test_run_dash_f_repeated_reads_the_tests_too(tmp_path: Path) -> None:
    (tmp_path / "p.yaml").write_text(
        "kind: BurnInProfile\nmetadata: {name: p}\nspec:\n  tests:\n  - testRef: t\n"
    )
    (tmp_path / "t.yaml").write_text(
        "kind: BurnInTest\nmetadata: {name: t}\nspec:\n  kind: custom\n"
        "  runner: {command: [sh, -c, echo ok]}\n"
    )
    args = ["plan", "-f", str(tmp_path / "p.yaml"), "-f", str(tmp_path / "t.yaml")]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "1. t (custom, Node)" in result.output


def complete(command: click.Command, prog: str, var: str, words: str) -> list[str]:
    env = {var: "bash_complete", "COMP_WORDS": words, "COMP_CWORD": str(len(words.split()) - 1)}
    result = CliRunner().invoke(command, [], prog_name=prog, env=env, complete_var=var)
    return [line.split(",", 1)[1] for line in result.output.splitlines()]


def test_completion_as_documented_completes_commands_and_options() -> None:
    assert "schedule" in complete(main, "glimmer", "_GLIMMER_COMPLETE", "glimmer sch")
    assert "--runtime" in complete(main, "glimmer", "_GLIMMER_COMPLETE", "glimmer run --run")
    plugin = complete(_plugin, "kubectl-glimmer", "_KUBECTL_GLIMMER_COMPLETE", "kubectl-glimmer r")
    assert plugin == ["report"]
    docs = (ROOT / "docs" / "cli.md").read_text()
    assert "_GLIMMER_COMPLETE=bash_source glimmer" in docs
    assert "_KUBECTL_GLIMMER_COMPLETE" in docs
