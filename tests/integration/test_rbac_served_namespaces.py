"""The manager reads Secrets only in the namespaces it serves, and runner pods hold no
credential, checked with ``kubectl auth can-i`` (the real RBAC authorizer) after the
chart, rendered for each served-namespace shape, is applied to the real apiserver.

- a list: Secrets in the listed namespaces, none in kube-system or the manager's own;
- a label selector: Secrets in the namespaces carrying the labels at install time
  (``helm template --dry-run=server`` runs the chart's lookup against the apiserver),
  none in an unlabelled namespace or kube-system;
- ``*``: every namespace's Secrets, kube-system's included, as documented (the trade-off
  the selector exists to avoid).

The runner ServiceAccount may do nothing in any shape. Names are unique per test
(``fullnameOverride``, namespaces, the label), so the session's other installs are
never touched.
"""

from __future__ import annotations

import os
import subprocess
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from glimmer.testing import ControlPlane
from tests.unit.test_chart_render import CHART, helm_binary

pytestmark = pytest.mark.controlplane

RUNNER = "glimmer-runner"


class Install:
    """One chart rendering applied to the control plane, removed afterwards."""

    def __init__(self, control_plane: ControlPlane) -> None:
        self.control_plane = control_plane
        self.suffix = uuid.uuid4().hex[:6]
        self.fullname = f"rbac-{self.suffix}"
        self.release_namespace = f"rbac-system-{self.suffix}"
        self.documents: list[dict[str, Any]] = []
        self.namespaces: list[str] = [self.release_namespace]
        control_plane.kubectl("create", "namespace", self.release_namespace)

    @property
    def manager(self) -> str:
        return f"system:serviceaccount:{self.release_namespace}:{self.fullname}-manager"

    def namespace(self, name: str, **labels: str) -> str:
        self.control_plane.kubectl("create", "namespace", name)
        self.namespaces.append(name)
        if labels:
            self.control_plane.kubectl(
                "label", "namespace", name, *(f"{k}={v}" for k, v in labels.items())
            )
        return name

    def apply(self, *values: str, server: bool = False) -> list[dict[str, Any]]:
        env = {**os.environ, "KUBECONFIG": str(self.control_plane.kubeconfig_path)}
        args = [helm_binary(), "template", "rel", str(CHART), "-n", self.release_namespace,
                "--set", f"fullnameOverride={self.fullname}",
                "--set", "servedNamespaces.create=false", *values]  # fmt: skip
        if server:
            args.append("--dry-run=server")  # the chart's lookup reads the apiserver
        result = subprocess.run(args, capture_output=True, text=True, env=env, timeout=300,
                                check=False)  # fmt: skip
        assert result.returncode == 0, result.stderr
        self.documents = [d for d in yaml.safe_load_all(result.stdout) if d]
        self.control_plane.kubectl("apply", "-f", "-", input=yaml.safe_dump_all(self.documents))
        return self.documents

    def remove(self) -> None:
        cluster_scoped = [d for d in self.documents if "namespace" not in d["metadata"]]
        if cluster_scoped:
            self.control_plane.kubectl(
                "delete", "--ignore-not-found", "-f", "-",
                input=yaml.safe_dump_all(cluster_scoped), check=False,
            )  # fmt: skip
        for name in self.namespaces:
            self.control_plane.delete_namespace(name)


@pytest.fixture
def install(control_plane: ControlPlane) -> Iterator[Install]:
    made = Install(control_plane)
    try:
        yield made
    finally:
        made.remove()


def can(control_plane: ControlPlane, who: str, verb: str, resource: str, ns: str) -> bool:
    result = control_plane.kubectl(
        "auth", "can-i", verb, resource, f"--as={who}", "-n", ns, check=False
    )
    assert result.stdout.strip() in ("yes", "no"), result.stderr
    return result.stdout.strip() == "yes"


def runner_may_do_nothing(control_plane: ControlPlane, namespace: str) -> None:
    runner = f"system:serviceaccount:{namespace}:{RUNNER}"
    for verb, resource in [("get", "secrets"), ("list", "secrets"), ("create", "pods"),
                           ("get", "pods"), ("list", "burninruns.burnin.glimmer.ai"),
                           ("patch", "nodes"), ("get", "configmaps")]:  # fmt: skip
        assert not can(control_plane, runner, verb, resource, namespace), (verb, resource)
        assert not can(control_plane, runner, verb, resource, "kube-system"), (verb, resource)
    account = control_plane.kubectl(
        "get", "serviceaccount", RUNNER, "-n", namespace,
        "-o", "jsonpath={.automountServiceAccountToken}",
    )  # fmt: skip
    assert account.stdout.strip() == "false"


def test_a_served_namespace_list_reads_secrets_only_in_the_listed_namespaces(
    control_plane: ControlPlane, install: Install
) -> None:
    team_a = install.namespace(f"rbac-team-a-{install.suffix}")
    team_b = install.namespace(f"rbac-team-b-{install.suffix}")
    other = install.namespace(f"rbac-other-{install.suffix}")
    install.apply("--set", f"servedNamespaces.names={{{team_a},{team_b}}}")
    manager = install.manager
    assert can(control_plane, manager, "get", "secrets", team_a)
    assert can(control_plane, manager, "get", "secrets", team_b)
    assert not can(control_plane, manager, "get", "secrets", other)
    assert not can(control_plane, manager, "get", "secrets", "kube-system")
    assert not can(control_plane, manager, "get", "secrets", install.release_namespace)
    assert not can(control_plane, manager, "list", "secrets", team_a)
    assert not can(control_plane, manager, "create", "pods", "kube-system")
    assert not can(control_plane, manager, "list", "namespaces", "default")
    runner_may_do_nothing(control_plane, team_a)
    runner_may_do_nothing(control_plane, team_b)


def test_a_served_namespace_selector_reads_secrets_only_in_the_labelled_namespaces(
    control_plane: ControlPlane, install: Install
) -> None:
    label = f"rbac-test.glimmer.ai/served-{install.suffix}"
    labelled = [install.namespace(f"rbac-sel-{i}-{install.suffix}", **{label: "yes"})
                for i in range(2)]  # fmt: skip
    wrong_value = install.namespace(f"rbac-sel-no-{install.suffix}", **{label: "no"})
    unlabelled = install.namespace(f"rbac-sel-none-{install.suffix}")
    escaped = label.replace(".", "\\.")  # --set splits keys at dots
    documents = install.apply(
        "--set-json", "servedNamespaces.names=[]",
        "--set", f"servedNamespaces.selector.matchLabels.{escaped}=yes",
        server=True,
    )  # fmt: skip
    (deployment,) = [d for d in documents if d["kind"] == "Deployment"]
    args = deployment["spec"]["template"]["spec"]["containers"][0]["args"]
    assert f"--serve-namespace-selector={label}=yes" in args
    manager = install.manager
    for namespace in labelled:
        assert can(control_plane, manager, "get", "secrets", namespace)
        assert can(control_plane, manager, "create", "pods", namespace)
        runner_may_do_nothing(control_plane, namespace)
    for namespace in (wrong_value, unlabelled, "kube-system", install.release_namespace):
        assert not can(control_plane, manager, "get", "secrets", namespace), namespace
        assert not can(control_plane, manager, "create", "pods", namespace), namespace
    assert can(control_plane, manager, "list", "namespaces", "default")
    assert can(control_plane, manager, "watch", "namespaces", "default")


def test_serving_every_namespace_reads_kube_system_secrets_as_documented(
    control_plane: ControlPlane, install: Install
) -> None:
    install.apply("--set", "servedNamespaces.names={*}")
    assert can(control_plane, install.manager, "get", "secrets", "kube-system")
    assert not [d for d in install.documents if d["kind"] == "ServiceAccount"
                and d["metadata"]["name"] == RUNNER]  # fmt: skip
