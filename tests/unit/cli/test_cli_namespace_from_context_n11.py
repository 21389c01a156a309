"""N11: without ``-n``, ``schedule``, ``fingerprint`` and ``report --run`` work in the
kubeconfig's current context's namespace (``default`` when it names none), as kubectl."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from glimmer.cli import fingerprint as fingerprint_cli
from glimmer.cli import kubecontext, main
from glimmer.cli import report as report_cli
from glimmer.cli import schedule as schedule_cli
from glimmer.report import ReportInputError

KUBECONFIG = """\
apiVersion: v1
kind: Config
current-context: %(current)s
contexts:
- name: lab
  context: {cluster: c, user: u, namespace: lab}
- name: bare
  context: {cluster: c, user: u}
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:1"}
users:
- name: u
  user: {token: t}
"""


def kubeconfig(path: Path, current: str = "lab") -> str:
    path.write_text(KUBECONFIG % {"current": current})
    return str(path)


@pytest.fixture(autouse=True)
def no_ambient_cluster(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


def test_N11_the_current_contexts_namespace_is_the_default(tmp_path: Path) -> None:
    assert kubecontext.context_namespace(kubeconfig(tmp_path / "k")) == "lab"


def test_N11_a_context_naming_no_namespace_reads_default(tmp_path: Path) -> None:
    assert kubecontext.context_namespace(kubeconfig(tmp_path / "k", current="bare")) == "default"


def test_N11_kubeconfig_env_is_read_and_merged_as_kubectl_merges_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KUBECONFIG", f"{tmp_path / 'absent'}:{kubeconfig(tmp_path / 'k')}")
    assert kubecontext.context_namespace(None) == "lab"


def test_N11_the_kubeconfig_flag_wins_over_the_env(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KUBECONFIG", kubeconfig(tmp_path / "env"))
    flag = kubeconfig(tmp_path / "flag", current="bare")
    assert kubecontext.context_namespace(flag) == "default"


def test_N11_home_kubeconfig_when_nothing_else_is_given(tmp_path: Path) -> None:
    (tmp_path / "home" / ".kube").mkdir(parents=True)
    kubeconfig(tmp_path / "home" / ".kube" / "config")
    assert kubecontext.context_namespace(None) == "lab"
    assert kubecontext.namespace_for("given", kubeconfig=None) == "given"


def test_N11_in_cluster_it_is_the_pods_own_namespace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
    mounted = tmp_path / "namespace"
    mounted.write_text("glimmer-system\n")
    monkeypatch.setattr(kubecontext, "SERVICE_ACCOUNT_NAMESPACE", mounted)
    assert kubecontext.context_namespace(None) == "glimmer-system"


def test_N11_an_unreadable_kubeconfig_is_not_a_silent_default(tmp_path: Path) -> None:
    with pytest.raises(kubecontext.KubeContextError, match="no such file"):
        kubecontext.context_namespace(str(tmp_path / "absent"))
    (tmp_path / "k").write_text("current-context: ghost\ncontexts: []\n")
    with pytest.raises(kubecontext.KubeContextError):
        kubecontext.context_namespace(str(tmp_path / "k"))
    result = CliRunner().invoke(main, ["schedule", "--kubeconfig", str(tmp_path / "absent")])
    assert result.exit_code == 3 and "no such file" in result.output


def capture(monkeypatch: pytest.MonkeyPatch, module: Any, answer: Any) -> dict[str, Any]:
    seen: dict[str, Any] = {}

    async def fake_run(**kwargs: Any) -> Any:
        seen.update(kwargs)
        return answer

    monkeypatch.setattr(module, "_run", fake_run)
    return seen


def test_N11_schedule_lists_in_the_contexts_namespace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = capture(monkeypatch, schedule_cli, [])
    path = kubeconfig(tmp_path / "k")
    result = CliRunner().invoke(main, ["schedule", "--kubeconfig", path])
    assert result.exit_code == 0, result.output
    assert seen["namespace"] == "lab" and "namespace 'lab'" in result.output
    CliRunner().invoke(main, ["schedule", "--kubeconfig", path, "-n", "other"])
    assert seen["namespace"] == "other"
    CliRunner().invoke(main, ["schedule", "--kubeconfig", path, "-A"])
    assert seen["namespace"] is None


def test_N11_fingerprint_reads_in_the_contexts_namespace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from glimmer.cli.fingerprint import describe

    node = {"metadata": {"name": "n1", "labels": {}}, "status": {"nodeInfo": {}}}
    seen = capture(monkeypatch, fingerprint_cli, describe(node, None))
    path = kubeconfig(tmp_path / "k")
    result = CliRunner().invoke(main, ["fingerprint", "n1", "--kubeconfig", path])
    assert result.exit_code == 0, result.output
    assert seen["namespace"] == "lab"
    assert "none in namespace 'lab'" in result.output and "-n" in result.output
    CliRunner().invoke(main, ["fingerprint", "n1", "--kubeconfig", path, "-n", "glimmer-system"])
    assert seen["namespace"] == "glimmer-system"


def test_N11_report_run_takes_a_bare_name_in_the_contexts_namespace(tmp_path: Path) -> None:
    path = kubeconfig(tmp_path / "k")
    assert report_cli.run_ref("nightly", namespace=None, kubeconfig=path) == "lab/nightly"
    assert report_cli.run_ref("nightly", namespace="qa", kubeconfig=path) == "qa/nightly"
    assert report_cli.run_ref("qa/nightly", namespace=None, kubeconfig=path) == "qa/nightly"
    assert report_cli.run_ref("qa/nightly", namespace="qa", kubeconfig=path) == "qa/nightly"
    with pytest.raises(ReportInputError, match="but -n says 'lab'"):
        report_cli.run_ref("qa/nightly", namespace="lab", kubeconfig=path)


def test_N11_report_run_through_the_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[str] = []

    async def fake_cluster(ref: str, *, kubeconfig: str | None) -> Any:
        seen.append(ref)
        raise ReportInputError("stop here")

    monkeypatch.setattr(report_cli, "_from_cluster", fake_cluster)
    path = kubeconfig(tmp_path / "k")
    result = CliRunner().invoke(main, ["report", "--run", "nightly", "--kubeconfig", path])
    assert result.exit_code == 2 and seen == ["lab/nightly"]
