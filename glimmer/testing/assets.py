"""Where the control-plane binaries are, in the standard ``KUBEBUILDER_ASSETS`` layout.

The binaries are built from Go modules by ``hack/envtest`` (release downloads are not
reachable from CI), but a developer with ``setup-envtest`` binaries can point
``KUBEBUILDER_ASSETS`` (or ``TEST_ASSET_KUBE_APISERVER`` / ``TEST_ASSET_ETCD`` /
``TEST_ASSET_KUBECTL`` / ``TEST_ASSET_KUBE_CONTROLLER_MANAGER``) at those instead. A
missing binary is an error with the fix in its message, never a skipped test.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import attrs

#: Versions ``hack/envtest`` builds by default; keep in step with that script.
K8S_VERSION = "v1.36.3"
ETCD_VERSION = "v3.6.16"
KWOK_VERSION = "v0.8.0"

_REPO_ROOT = Path(__file__).resolve().parents[2]
ENVTEST_SCRIPT = _REPO_ROOT / "hack" / "envtest"


class AssetsMissingError(RuntimeError):
    """The control-plane binaries are not built; the message says how to build them."""


@attrs.frozen
class Assets:
    """Paths of the binaries one control plane runs."""

    directory: Path
    kube_apiserver: Path
    etcd: Path
    kubectl: Path
    #: KWOK is optional: only the KWOK fixtures need it.
    kwok: Path | None
    #: Optional too: only an in-cluster install (a Deployment that must get its pod)
    #: needs kube-controller-manager; see :func:`require_controller_manager`.
    kube_controller_manager: Path | None = None

    @property
    def kwok_stages(self) -> Path:
        """Stage configs copied out of the kwok module by ``hack/envtest`` (reference)."""
        return self.directory / "kwok-stages"


def default_cache_dir(environ: Mapping[str, str] = os.environ) -> Path:
    root = environ.get("GLIMMER_ENVTEST_CACHE") or str(Path.home() / ".cache/glimmer/envtest")
    k8s = environ.get("GLIMMER_K8S_VERSION", K8S_VERSION)
    etcd = environ.get("GLIMMER_ETCD_VERSION", ETCD_VERSION)
    kwok = environ.get("GLIMMER_KWOK_VERSION", KWOK_VERSION)
    return Path(root) / f"k8s-{k8s}_etcd-{etcd}_kwok-{kwok}"


def _executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def find_assets(environ: Mapping[str, str] = os.environ) -> Assets:
    """Resolve the binaries, preferring explicit environment settings over the cache."""
    directory = Path(environ["KUBEBUILDER_ASSETS"]) if environ.get("KUBEBUILDER_ASSETS") else None
    if directory is None:
        directory = default_cache_dir(environ)

    def pick(variable: str, binary: str) -> Path:
        explicit = environ.get(variable)
        return Path(explicit) if explicit else directory / binary

    assets = Assets(
        directory=directory,
        kube_apiserver=pick("TEST_ASSET_KUBE_APISERVER", "kube-apiserver"),
        etcd=pick("TEST_ASSET_ETCD", "etcd"),
        kubectl=pick("TEST_ASSET_KUBECTL", "kubectl"),
        kwok=directory / "kwok" if _executable(directory / "kwok") else None,
        kube_controller_manager=_optional(
            pick("TEST_ASSET_KUBE_CONTROLLER_MANAGER", "kube-controller-manager")
        ),
    )
    missing = [
        str(p) for p in (assets.kube_apiserver, assets.etcd, assets.kubectl) if not _executable(p)
    ]
    if missing:
        raise AssetsMissingError(
            "control-plane binaries not found: "
            + ", ".join(missing)
            + f". Build them with `{ENVTEST_SCRIPT}` (first build takes a while, later runs "
            "reuse the cache), or set KUBEBUILDER_ASSETS to a directory holding "
            "kube-apiserver, etcd and kubectl."
        )
    return assets


def _optional(path: Path) -> Path | None:
    return path if _executable(path) else None


def require_controller_manager(assets: Assets) -> Path:
    if assets.kube_controller_manager is None:
        raise AssetsMissingError(
            f"kube-controller-manager not found in {assets.directory}. Build it with "
            f"`{ENVTEST_SCRIPT}` (it builds kube-controller-manager beside kube-apiserver), "
            "or set TEST_ASSET_KUBE_CONTROLLER_MANAGER."
        )
    return assets.kube_controller_manager


def require_kwok(assets: Assets) -> Path:
    if assets.kwok is None:
        raise AssetsMissingError(
            f"kwok not found in {assets.directory}. Build it with `{ENVTEST_SCRIPT}`."
        )
    return assets.kwok
