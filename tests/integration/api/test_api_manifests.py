"""The kustomize manifests and every sample apply to a real apiserver."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.integration.api.kube_helpers import REPO, kustomize

pytestmark = [pytest.mark.controlplane, pytest.mark.usefixtures("installed_crds")]

SAMPLES = sorted(
    p for p in (REPO / "manifests" / "samples").glob("*.yaml") if p.name != "kustomization.yaml"
)


def test_default_kustomization_applies_cleanly_with_server_dry_run(control_plane: Any) -> None:
    rendered = kustomize(control_plane, "default")
    documents = list(yaml.safe_load_all(rendered))
    # A server dry run cannot create the namespaces its other objects live in.
    namespaces = [d for d in documents if d["kind"] == "Namespace"]
    assert sorted(n["metadata"]["name"] for n in namespaces) == ["glimmer-runs", "glimmer-system"]
    control_plane.kubectl("apply", "-f", "-", input=yaml.safe_dump_all(namespaces))
    result = control_plane.kubectl("apply", "--dry-run=server", "-f", "-", input=rendered)
    assert result.returncode == 0, result.stderr
    # Clean: no deprecation and no PodSecurity warning (a pod template that its
    # namespace's level would refuse draws one when created or changed). The only notice
    # allowed is kubectl's about the CRDs the session installed server-side.
    warnings = [
        line
        for line in result.stderr.splitlines()
        if line.strip() and "last-applied-configuration annotation" not in line
    ]
    assert warnings == [], result.stderr
    applied = result.stdout.splitlines()
    assert len(applied) == len(documents)
    assert all(line.endswith("(server dry run)") for line in applied), applied
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


def test_samples_kustomization_lists_every_sample(control_plane: Any) -> None:
    kustomization = yaml.safe_load(
        (REPO / "manifests" / "samples" / "kustomization.yaml").read_text()
    )
    assert sorted(kustomization["resources"]) == sorted(p.name for p in SAMPLES)
    rendered = list(yaml.safe_load_all(kustomize(control_plane, "samples")))
    # Definitions only: applying the samples starts nothing (runs are under runs/).
    assert rendered
    assert [d for d in rendered if d["kind"] == "BurnInRun"] == []
    schedules = [d for d in rendered if d["kind"] == "BurnInSchedule"]
    assert schedules
    assert all(d["spec"].get("suspend") is True for d in schedules)


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_every_sample_applies(control_plane: Any, namespace: str, path: Path) -> None:
    result = control_plane.kubectl("apply", "-n", namespace, "-f", str(path))
    assert result.returncode == 0, result.stderr
    assert "Warning" not in result.stderr, result.stderr
