"""``glimmer manager --serve-namespace-selector`` and ``--runner-service-account``: what
the chart renders is read exactly, and anything else is a usage error (exit 2) naming
the flag, before anything starts."""

from __future__ import annotations

from typing import Any

import pytest
from click.testing import CliRunner

from glimmer.cli import manager as cli_manager
from glimmer.controllers.run.context import RunOptions


@pytest.mark.parametrize(
    ("text", "terms"),
    [
        ("burnin.glimmer.ai/served=true", {"burnin.glimmer.ai/served": "true"}),
        ("b=2, a=1", {"a": "1", "b": "2"}),
        ("team=", {"team": ""}),
    ],
)
def test_the_selector_flag_reads_equality_terms(text: str, terms: dict[str, str]) -> None:
    assert cli_manager.parse_namespace_selector(text) == terms


@pytest.mark.parametrize(
    "text",
    [
        "",
        " ",
        ",",
        "a=1,,b=2",
        "k!=v",
        "k==v",
        "k in (a,b)",
        "k notin (a)",
        "k",
        "!k",
        "Bad Key=v",
        "-k=v",
        "k=not a value",
        "k=1,k=2",
        "UPPER.example.com/k=v",
    ],
)
def test_the_selector_flag_refuses_what_is_not_an_equality_selector_naming_the_flag(
    text: str,
) -> None:
    with pytest.raises(ValueError):
        cli_manager.parse_namespace_selector(text)
    result = CliRunner().invoke(cli_manager.manager, [f"--serve-namespace-selector={text}"])
    assert result.exit_code == 2, result.output
    assert "--serve-namespace-selector" in result.output


def test_serve_namespaces_and_the_selector_together_are_a_usage_error_naming_both() -> None:
    result = CliRunner().invoke(
        cli_manager.manager, ["--serve-namespaces=lab", "--serve-namespace-selector=k=v"]
    )
    assert result.exit_code == 2, result.output
    assert "--serve-namespaces and --serve-namespace-selector are mutually exclusive" in (
        " ".join(result.output.split())
    )


@pytest.mark.parametrize("name", ["Runner", "runner_sa", "-runner", "a" * 254, "a..b"])
def test_a_runner_service_account_that_is_no_name_is_a_usage_error_naming_the_flag(
    name: str,
) -> None:
    result = CliRunner().invoke(cli_manager.manager, [f"--runner-service-account={name}"])
    assert result.exit_code == 2, result.output
    assert "--runner-service-account" in result.output


def captured_run(monkeypatch: pytest.MonkeyPatch, *args: str) -> dict[str, Any]:
    seen: dict[str, Any] = {}

    async def fake_run_manager(**kwargs: Any) -> int:
        seen.update(kwargs)
        return 0

    monkeypatch.setattr(cli_manager, "run_manager", fake_run_manager)
    monkeypatch.setenv("POD_NAMESPACE", "glimmer-ops")
    result = CliRunner().invoke(cli_manager.manager, list(args))
    assert result.exit_code == 0, result.output
    return seen


def test_the_selector_reaches_the_run_options_and_serves_no_list(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen = captured_run(monkeypatch, "--serve-namespace-selector=b=2,a=1")
    options: RunOptions = seen["run_options"]
    assert dict(options.served_namespace_selector or {}) == {"a": "1", "b": "2"}
    assert options.operator_namespace == "glimmer-ops"
    assert seen["served_namespaces"] is None  # runs are watched everywhere, served by label


def test_without_the_selector_the_list_shape_is_unchanged(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = captured_run(monkeypatch)
    assert seen["served_namespaces"] == {"glimmer-ops"}
    assert seen["run_options"].served_namespace_selector is None


def test_runner_pods_default_to_the_glimmer_runner_service_account(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert captured_run(monkeypatch)["run_options"].runner_service_account == "glimmer-runner"
    named = captured_run(monkeypatch, "--runner-service-account=burnin-runner")
    assert named["run_options"].runner_service_account == "burnin-runner"


def test_an_empty_runner_service_account_leaves_the_namespaces_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen = captured_run(monkeypatch, "--runner-service-account=")
    assert seen["run_options"].runner_service_account is None


def test_both_flags_are_documented_in_the_help() -> None:
    result = CliRunner().invoke(cli_manager.manager, ["--help"])
    assert result.exit_code == 0
    help_text = " ".join(result.output.split())
    assert "--serve-namespace-selector" in help_text
    assert "--runner-service-account" in help_text
    assert "[default: glimmer-runner]" in help_text


@pytest.mark.parametrize("text", ["k!=v", "k==v", "k in (a,b)", "a=1, k notin (x)"])
def test_a_negative_or_set_based_selector_is_refused_as_such(text: str) -> None:
    """``k!=v`` would serve every namespace without ``k``: the error says what is wrong
    with it, not that some key is malformed."""
    result = CliRunner().invoke(cli_manager.manager, [f"--serve-namespace-selector={text}"])
    assert result.exit_code == 2, result.output
    assert "is not an equality term" in " ".join(result.output.split())
