"""What the chart renders for the selector and runner-ServiceAccount values is what
``glimmer manager`` accepts: the rendered arguments parse (no unknown flag, no refused
value), and mean what the values say."""

from __future__ import annotations

from glimmer.cli.manager import manager as manager_command
from tests.unit.test_chart_render import SELECTOR, _args, render


def parsed(args: list[str]) -> dict[str, object]:
    assert args[0] == "manager"
    with manager_command.make_context("manager", args[1:]) as ctx:
        return dict(ctx.params)


def test_the_charts_selector_shape_parses_as_the_manager_flag() -> None:
    params = parsed(
        _args(render(*SELECTOR, "--set", "servedNamespaces.selector.matchLabels.team=gpu"))
    )
    assert params["served_selector"] == {"burnin.glimmer.ai/served": "true", "team": "gpu"}
    assert params["served"] is None


def test_the_charts_runner_service_account_parses_as_the_manager_flag() -> None:
    assert parsed(_args(render()))["runner_service_account"] == "glimmer-runner"
    named = render("--set", "runnerServiceAccount.name=burn-runner")
    assert parsed(_args(named))["runner_service_account"] == "burn-runner"
    bare = render(
        "--set", "runnerServiceAccount.name=", "--set", "runnerServiceAccount.create=false"
    )
    assert parsed(_args(bare))["runner_service_account"] == ""


def test_a_rendered_list_shape_is_not_also_a_selector() -> None:
    params = parsed(_args(render("--set", "servedNamespaces.names={team-a,team-b}")))
    assert params["served"] == "team-a,team-b"
    assert params["served_selector"] is None


def test_the_charts_attestation_key_parses_as_the_manager_flag_and_grants_one_secret() -> None:
    assert parsed(_args(render()))["attestation_key_secret"] is None
    documents = render("--set", "attestation.keySecret=glimmer-attestation-key")
    params = parsed(_args(documents))
    assert params["attestation_key_secret"] == ("glimmer-system", "glimmer-attestation-key")
    (role,) = [
        d for d in documents if d["kind"] == "Role" and "attestations" in d["metadata"]["name"]
    ]
    assert role["metadata"]["namespace"] == "glimmer-system"
    secrets = [r for r in role["rules"] if r["resources"] == ["secrets"]]
    assert secrets == [
        {
            "apiGroups": [""],
            "resources": ["secrets"],
            "resourceNames": ["glimmer-attestation-key"],
            "verbs": ["get"],
        }
    ]
    import yaml

    from tests.unit.test_chart_render import REPO

    shipped = list(yaml.safe_load_all((REPO / "manifests/rbac/attestation_role.yaml").read_text()))
    assert shipped[0]["rules"] == role["rules"]
