"""The Helm chart against the real kube-apiserver: ``helm template | kubectl apply
--dry-run=server`` for the default values and a non-trivial values file, then a real
``helm install`` and ``helm uninstall``.

Names are made unique per test (release namespace, served namespaces, and for the real
install ``fullnameOverride``), so the chart never collides with the kustomize install
that other modules apply to the same session's control plane.
"""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from glimmer.testing import ControlPlane
from tests.unit.test_chart_render import CHART, helm_binary

pytestmark = pytest.mark.controlplane

PSA = "pod-security.kubernetes.io"


def _suffix() -> str:
    return uuid.uuid4().hex[:6]


@pytest.fixture
def release_namespace(control_plane: ControlPlane) -> Iterator[str]:
    """The manager's namespace, labelled restricted as docs/operations.md asks."""
    name = f"helm-system-{_suffix()}"
    control_plane.kubectl("create", "namespace", name)
    control_plane.kubectl(
        "label", "namespace", name, f"{PSA}/enforce=restricted", f"{PSA}/warn=restricted"
    )
    try:
        yield name
    finally:
        control_plane.delete_namespace(name)


def _helm(
    control_plane: ControlPlane, *args: str, check: bool = True
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "KUBECONFIG": str(control_plane.kubeconfig_path)}
    result = subprocess.run(
        [helm_binary(), *args], capture_output=True, text=True, env=env, timeout=300, check=False
    )
    if check:
        assert result.returncode == 0, result.stdout + result.stderr
    return result


def _template(control_plane: ControlPlane, namespace: str, *values: str) -> list[dict[str, Any]]:
    rendered = _helm(
        control_plane, "template", "glimmer", str(CHART), "-n", namespace, "--include-crds", *values
    ).stdout
    return [d for d in yaml.safe_load_all(rendered) if d]


def _dry_run(control_plane: ControlPlane, documents: list[dict[str, Any]]) -> None:
    """Namespaces for real (a dry run cannot create what its objects live in), then the
    rest with a server dry run: every object admitted, with no warning at all."""
    namespaces = [d for d in documents if d["kind"] == "Namespace"]
    if namespaces:
        control_plane.kubectl("apply", "-f", "-", input=yaml.safe_dump_all(namespaces))
    others = [d for d in documents if d["kind"] != "Namespace"]
    result = control_plane.kubectl(
        "apply", "--dry-run=server", "-f", "-", input=yaml.safe_dump_all(others), check=False
    )
    assert result.returncode == 0, result.stderr
    warnings = [
        line
        for line in result.stderr.splitlines()
        if line.strip() and "last-applied-configuration annotation" not in line
    ]
    assert warnings == [], result.stderr
    applied = result.stdout.splitlines()
    assert len(applied) == len(others), applied
    assert all(line.endswith("(server dry run)") for line in applied), applied


def test_helm_chart_lints(tmp_path: Path) -> None:
    values = tmp_path / "values.yaml"
    values.write_text(yaml.safe_dump(_non_trivial_values("team-x", "team-y")))
    for extra in ([], ["-f", str(values)]):
        result = subprocess.run(
            [helm_binary(), "lint", "--strict", str(CHART), *extra],
            capture_output=True,
            text=True,
            check=False,
        )
        assert result.returncode == 0, result.stdout + result.stderr


def test_helm_default_values_apply_with_server_dry_run(
    control_plane: ControlPlane, release_namespace: str
) -> None:
    documents = _template(control_plane, release_namespace)
    kinds = sorted({d["kind"] for d in documents})
    assert kinds == [
        "ClusterRole",
        "ClusterRoleBinding",
        "CustomResourceDefinition",
        "Deployment",
        "Namespace",
        "Role",
        "RoleBinding",
        "Service",
        "ServiceAccount",
    ]
    _dry_run(control_plane, documents)


def _non_trivial_values(*served: str) -> dict[str, Any]:
    return {
        "image": {"repository": "registry.example/glimmer", "tag": "1.2.3", "pullPolicy": "Always"},
        "imagePullSecrets": [{"name": "registry-creds"}],
        "replicas": 2,
        "leaderElection": {"enabled": True, "id": "burnin-leader"},
        "serviceAccount": {
            "create": True,
            "name": "burnin-operator",
            "annotations": {"iam.example/role": "burnin"},
        },
        "servedNamespaces": {"names": list(served), "create": True},
        "clusterName": "prod-east-1",
        "tolerations": [
            {"key": "node-role.kubernetes.io/control-plane", "operator": "Exists",
             "effect": "NoSchedule"},
            {"key": "node.kubernetes.io/unschedulable", "operator": "Exists",
             "effect": "NoSchedule"},
            {"key": "dedicated", "operator": "Equal", "value": "infra", "effect": "NoExecute"},
        ],
        "nodeSelector": {"kubernetes.io/os": "linux"},
        "affinity": {
            "podAntiAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 100,
                        "podAffinityTerm": {
                            "topologyKey": "kubernetes.io/hostname",
                            "labelSelector": {
                                "matchLabels": {"app.kubernetes.io/component": "manager"}
                            },
                        },
                    }
                ]
            }
        },
        "podLabels": {"team": "gpu-fleet"},
        "podAnnotations": {"example.com/scrape": "true"},
        "resources": {"requests": {"cpu": "250m", "memory": "256Mi"},
                      "limits": {"memory": "1Gi"}},
        "metrics": {"port": 9090, "service": {"enabled": True, "port": 9090,
                                              "annotations": {"example.com/metrics": "yes"}}},
        "health": {"port": 9091},
        "gracefulShutdownTimeoutSeconds": 50,
        "terminationGracePeriodSeconds": 70,
        "logLevel": "debug",
        "extraArgs": ["--kube-api-qps=100", "--kube-api-burst=200"],
        "extraEnv": [{"name": "TZ", "value": "UTC"}],
        "dashboards": {"enabled": True},
    }  # fmt: skip


def test_helm_non_trivial_values_apply_with_server_dry_run(
    control_plane: ControlPlane, release_namespace: str, tmp_path: Path
) -> None:
    served = (f"helm-team-a-{_suffix()}", f"helm-team-b-{_suffix()}")
    values = tmp_path / "values.yaml"
    values.write_text(yaml.safe_dump(_non_trivial_values(*served)))
    try:
        documents = _template(control_plane, release_namespace, "-f", str(values))
        namespaces = sorted(d["metadata"]["name"] for d in documents if d["kind"] == "Namespace")
        assert namespaces == sorted(served)
        (deployment,) = [d for d in documents if d["kind"] == "Deployment"]
        (container,) = deployment["spec"]["template"]["spec"]["containers"]
        assert f"--serve-namespaces={','.join(served)}" in container["args"]
        assert "--cluster-name=prod-east-1" in container["args"]
        assert "--metrics-bind-address=:9090" in container["args"]
        assert "ConfigMap" in {d["kind"] for d in documents}
        _dry_run(control_plane, documents)
    finally:
        for name in served:
            control_plane.delete_namespace(name)


def _can(control_plane: ControlPlane, who: str, verb: str, resource: str, ns: str) -> bool:
    result = control_plane.kubectl(
        "auth", "can-i", verb, resource, f"--as={who}", "-n", ns, check=False
    )
    assert result.stdout.strip() in ("yes", "no"), result.stderr
    return result.stdout.strip() == "yes"


def test_helm_install_and_uninstall_against_the_apiserver(
    control_plane: ControlPlane, release_namespace: str
) -> None:
    """A real release: its objects exist, its ServiceAccount may do in the served
    namespace what the manager needs and nothing in kube-system; uninstall removes them
    but keeps the served namespace (its runs' finalizers need a manager)."""
    suffix = _suffix()
    fullname, served = f"helmtest-{suffix}", f"helm-runs-{suffix}"
    release = f"rel-{suffix}"
    values = [
        "--set",
        f"fullnameOverride={fullname}",
        "--set",
        f"servedNamespaces.names={{{served}}}",
    ]
    try:
        _helm(control_plane, "install", release, str(CHART), "-n", release_namespace, *values)
        deployment = json.loads(
            control_plane.kubectl(
                "get", "deployment", f"{fullname}-manager", "-n", release_namespace, "-o", "json"
            ).stdout
        )
        assert deployment["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] == 45
        labels = json.loads(control_plane.kubectl("get", "namespace", served, "-o", "json").stdout)[
            "metadata"
        ]["labels"]
        assert labels[f"{PSA}/enforce"] == "privileged"
        who = f"system:serviceaccount:{release_namespace}:{fullname}-manager"
        assert _can(control_plane, who, "create", "pods", served)
        assert _can(control_plane, who, "create", "services", served)
        assert _can(control_plane, who, "get", "secrets", served)
        assert not _can(control_plane, who, "create", "pods", "kube-system")
        assert not _can(control_plane, who, "create", "pods", release_namespace)
        assert not _can(control_plane, who, "get", "secrets", release_namespace)
        status = json.loads(
            _helm(control_plane, "status", release, "-n", release_namespace, "-o", "json").stdout
        )
        assert status["info"]["status"] == "deployed"

        _helm(control_plane, "uninstall", release, "-n", release_namespace)
        gone = control_plane.kubectl(
            "get", "clusterrole", f"{fullname}-manager", "--ignore-not-found", "-o", "name"
        )
        assert gone.stdout.strip() == ""
        kept = control_plane.kubectl("get", "namespace", served, "-o", "name")
        assert kept.stdout.strip() == f"namespace/{served}"
    finally:
        _helm(control_plane, "uninstall", release, "-n", release_namespace, check=False)
        control_plane.delete_namespace(served)


def test_I35_helm_install_creates_its_namespace_and_leaves_an_existing_served_one(
    control_plane: ControlPlane,
) -> None:
    """The README's local flow creates the served namespace by hand; ``helm install
    --create-namespace`` afterwards succeeds, leaves that namespace unowned, and creates
    the manager's objects (the Deployment gets no pod: no controller-manager here)."""
    suffix = _suffix()
    fullname, served = f"helmtest-{suffix}", f"helm-runs-{suffix}"
    release, namespace = f"rel-{suffix}", f"helm-new-{suffix}"
    control_plane.kubectl("create", "namespace", served)
    values = [
        "--set",
        f"fullnameOverride={fullname}",
        "--set",
        f"servedNamespaces.names={{{served}}}",
    ]
    try:
        result = _helm(
            control_plane,
            "install",
            release,
            str(CHART),
            "-n",
            namespace,
            "--create-namespace",
            *values,
        )
        assert "helm show readme" in result.stdout, result.stdout
        for kind, name, where in (
            ("deployment", f"{fullname}-manager", namespace),
            ("serviceaccount", f"{fullname}-manager", namespace),
            ("service", f"{fullname}-manager-metrics", namespace),
            ("serviceaccount", "glimmer-runner", served),
            ("clusterrole", f"{fullname}-manager", ""),
        ):
            scope = ["-n", where] if where else []
            got = control_plane.kubectl("get", kind, name, *scope, "-o", "name")
            assert got.stdout.strip().endswith(f"/{name}"), (kind, name)
        existing = json.loads(
            control_plane.kubectl("get", "namespace", served, "-o", "json").stdout
        )
        annotations = existing["metadata"].get("annotations") or {}
        assert "meta.helm.sh/release-name" not in annotations
        # An upgrade keeps leaving it alone.
        _helm(control_plane, "upgrade", release, str(CHART), "-n", namespace, *values)
    finally:
        _helm(control_plane, "uninstall", release, "-n", namespace, check=False)
        control_plane.delete_namespace(served)
        control_plane.delete_namespace(namespace)
