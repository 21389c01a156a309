"""The harness finds its binaries, or fails saying how to build them (no binaries needed).

The harness tests that start a control plane are in
tests/integration/controlplane/test_harness.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from glimmer.testing import AssetsMissingError, find_assets


def test_missing_binaries_fail_with_instructions_to_run_hack_envtest(tmp_path: Path) -> None:
    with pytest.raises(AssetsMissingError, match="hack/envtest"):
        find_assets({"KUBEBUILDER_ASSETS": str(tmp_path)})


def test_test_asset_variables_override_the_assets_directory(tmp_path: Path) -> None:
    for name in ("kube-apiserver", "etcd", "kubectl"):
        binary = tmp_path / name
        binary.write_text("#!/bin/sh\n")
        binary.chmod(0o755)
    assets = find_assets(
        {
            "KUBEBUILDER_ASSETS": str(tmp_path / "elsewhere"),
            "TEST_ASSET_KUBE_APISERVER": str(tmp_path / "kube-apiserver"),
            "TEST_ASSET_ETCD": str(tmp_path / "etcd"),
            "TEST_ASSET_KUBECTL": str(tmp_path / "kubectl"),
        }
    )
    assert assets.etcd == tmp_path / "etcd"
    assert assets.kube_apiserver == tmp_path / "kube-apiserver"
