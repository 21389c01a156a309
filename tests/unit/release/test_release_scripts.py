"""hack/chart-publish, hack/wheel, hack/envtest --only kubectl and the licence metadata."""

from __future__ import annotations

import os
import subprocess
import tomllib
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[3]


def test_chart_publish_pushes_the_charts_version_as_oci() -> None:
    version = yaml.safe_load((REPO / "charts/glimmer/Chart.yaml").read_text())["version"]
    out = subprocess.run(
        [str(REPO / "hack/chart-publish"), "--registry", "registry.example/charts", "--dry-run"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert f"+ helm push dist/glimmer-{version}.tgz oci://registry.example/charts" in out
    assert "+ helm lint --strict charts/glimmer" in out


def test_wheel_builds_and_checks_before_it_publishes() -> None:
    out = subprocess.run(
        [str(REPO / "hack/wheel"), "--publish", "--dry-run"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    steps = [line.split()[3] if line.startswith("+ ") and " -m " in line else "" for line in out]
    assert [s for s in steps if s] == ["build", "twine", "twine"]
    assert out[-1].endswith("twine upload dist/glimmer-*")


def test_envtest_only_kubectl_prints_kubectl_without_building(tmp_path: Path) -> None:
    """With kubectl cached and no Go toolchain on PATH, nothing else is built or waited for."""
    kubectl = tmp_path / "kubectl"
    kubectl.write_text("#!/bin/sh\n")
    kubectl.chmod(0o755)
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "GLIMMER_ENVTEST_CACHE": str(tmp_path / "cache"),
        "TEST_ASSET_KUBECTL": str(kubectl),
    }
    done = subprocess.run(
        [str(REPO / "hack/envtest"), "--only", "kubectl"],
        check=False,
        capture_output=True,
        text=True,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(kubectl)
    assert not (tmp_path / "cache").exists()
    bad = subprocess.run(
        [str(REPO / "hack/envtest"), "--only", "etcd"],
        check=False,
        capture_output=True,
        text=True,
        env={**os.environ, **env},
    )
    assert bad.returncode == 2


def test_the_licence_is_an_spdx_expression() -> None:
    """A TOML-table licence makes setuptools>=77 warn on every build."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert project["project"]["license"] == "Apache-2.0"
    assert any(req.startswith("setuptools>=77") for req in project["build-system"]["requires"])
