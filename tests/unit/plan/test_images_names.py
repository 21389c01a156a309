"""Whose runner images the defaults name (docs/fabric.md "Images").

This project builds its runners as ``ghcr.io/glimmer-ai/glimmer-runner-<kind>``; the Go
implementation publishes ``ghcr.io/baldwinspc/glimmer-burnin-<kind>``. A default must
name an image someone builds (ours where we have the runner, the upstream pin where we
do not), no Containerfile here may build under the other project's name, and either
family must still run when a user names it.
"""

from __future__ import annotations

import importlib.util
import re
import sys
import tomllib
from pathlib import Path

import pytest

import glimmer
from glimmer.contract.kinds import BUILTIN_KINDS, CUSTOM
from glimmer.plan.images import (
    DEFAULT_IMAGES,
    OWN_RUNNER_KINDS,
    ROCM_SIBLING_KINDS,
    RUNNER_REPOSITORY,
    RUNNER_TAG,
    UPSTREAM_REPOSITORY,
    ImageError,
    default_image,
    depends_on_vendor,
    resolve_image,
    runner_image,
    runner_repository,
)
from glimmer.sim.images import ImageMap
from runners.catalog import RUNNERS

REPO = Path(__file__).resolve().parents[3]
#: Every runner directory that has a Containerfile, with the kind its image is named for.
CONTAINERFILES = sorted(REPO.glob("runners/*/Containerfile"))


def _kind_of(path: Path) -> str:
    return path.parent.name.replace("_", "-")


def test_runner_tag_is_the_package_version() -> None:
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert RUNNER_TAG == f"v{glimmer.__version__}" == f"v{pyproject['project']['version']}"


def test_own_runner_kinds_are_the_catalogs_api_kinds() -> None:
    assert {kind for kind in RUNNERS if kind in BUILTIN_KINDS} == OWN_RUNNER_KINDS


@pytest.mark.parametrize("kind", sorted(OWN_RUNNER_KINDS))
def test_every_kind_with_a_runner_here_defaults_to_this_projects_image(kind: str) -> None:
    assert default_image(kind) == runner_image(kind) == f"{RUNNER_REPOSITORY}-{kind}:{RUNNER_TAG}"


def test_no_default_names_an_image_of_ours_that_nothing_here_builds() -> None:
    built = {_kind_of(path) for path in CONTAINERFILES}
    for kind, entry in DEFAULT_IMAGES.items():
        if entry.repository == RUNNER_REPOSITORY:
            assert kind in OWN_RUNNER_KINDS and kind in built, kind
        else:
            # Only a kind we have no runner for keeps the upstream pin (api §12).
            assert entry.repository == UPSTREAM_REPOSITORY, kind
            assert kind not in OWN_RUNNER_KINDS and kind not in built, kind


def test_no_default_is_an_upstream_pin_once_every_kind_has_a_runner_here() -> None:
    assert {k for k, d in DEFAULT_IMAGES.items() if d.repository == UPSTREAM_REPOSITORY} == set()
    for kind in (CUSTOM, "not-a-kind"):
        assert default_image(kind) is None


def test_rocm_sibling_kinds_are_the_rocm_containerfiles() -> None:
    # The AMD default names an image only where a Containerfile.rocm builds it.
    built = {
        path.parent.name.replace("_", "-")
        for path in (REPO / "runners").glob("*/Containerfile.rocm")
    }
    assert built == set(ROCM_SIBLING_KINDS)


@pytest.mark.parametrize("kind", sorted(ROCM_SIBLING_KINDS))
def test_E14_an_amd_node_defaults_to_the_rocm_sibling_and_an_entry_still_wins(kind: str) -> None:
    assert resolve_image(kind=kind, runner=None, node_vendor="amd") == runner_image(kind, rocm=True)
    mine = {"imagesByVendor": [{"vendor": "amd", "image": "example.com/mine:1"}]}
    assert resolve_image(kind=kind, runner=mine, node_vendor="amd") == "example.com/mine:1"
    assert resolve_image(kind=kind, runner=None, node_vendor="nvidia") == runner_image(kind)


def test_E14_an_amd_node_without_a_rocm_sibling_is_still_an_error_naming_the_fix() -> None:
    found = resolve_image(kind="dcgm-diag", runner=None, node_vendor="amd")
    assert isinstance(found, ImageError) and "imagesByVendor" in found.message


#: Whether the default depends on the node's vendor, as it did with the upstream table:
#: vendor ``nvidia`` pins do, ``*`` pins and kinds without an upstream default do not.
UPSTREAM_VENDOR_DEPENDENT = {
    "compute-smoke": True,
    "clockprobe": True,
    "thermal-soak": True,
    "gpu-burn": True,
    "gemm-sweep": True,
    "host-health": True,
    "nccl": True,
    "gpudirect-rdma": True,
    "dcgm-diag": True,
    "memory-bw": True,
    "ib-write-bw": False,
    "memory-stress": False,
    "tcp-baseline": False,
    "fabric-soak": False,
    "fingerprint-probe": False,
    "disk-io": False,
    CUSTOM: False,
    "not-a-kind": False,
}


@pytest.mark.parametrize("kind", sorted(UPSTREAM_VENDOR_DEPENDENT))
def test_E14_vendor_dependence_is_unchanged_by_whose_image_is_the_default(kind: str) -> None:
    assert depends_on_vendor(kind=kind, runner=None) is UPSTREAM_VENDOR_DEPENDENT[kind]
    assert depends_on_vendor(kind=kind, runner={"image": "x:1"}) is False


def test_E14_an_nvidia_default_of_ours_still_never_runs_on_an_amd_node() -> None:
    # gpudirect-rdma is built for NVIDIA and has no ROCm build here.
    result = resolve_image(kind="gpudirect-rdma", runner=None, node_vendor="amd")
    assert isinstance(result, ImageError)
    mine = "example.com/gdr-rocm:1"
    by_vendor = {"imagesByVendor": [{"vendor": "amd", "image": mine}]}
    assert resolve_image(kind="gpudirect-rdma", runner=by_vendor, node_vendor="amd") == mine


def test_rocm_siblings_are_the_name_with_a_rocm_suffix() -> None:
    assert runner_image("memory-bw", rocm=True) == (
        f"ghcr.io/glimmer-ai/glimmer-runner-memory-bw-rocm:{RUNNER_TAG}"
    )
    assert runner_repository("nccl") == "ghcr.io/glimmer-ai/glimmer-runner-nccl"


@pytest.mark.parametrize("path", CONTAINERFILES, ids=lambda p: p.parent.name)
def test_every_containerfile_builds_this_projects_name_never_the_upstream_one(path: Path) -> None:
    text = path.read_text()
    kind = _kind_of(path)
    builds = re.findall(r"-t (\S+) \.", text)
    assert builds == [runner_image(kind)], builds
    assert text.splitlines()[0].startswith(f"# {runner_repository(kind)} ")
    assert f"{UPSTREAM_REPOSITORY}-{kind}" not in text


@pytest.mark.parametrize("path", CONTAINERFILES, ids=lambda p: p.parent.name)
def test_every_runner_readme_names_this_projects_image(path: Path) -> None:
    readme = (path.parent / "README.md").read_text()
    assert f"{runner_repository(_kind_of(path))}:<tag>`" in readme


@pytest.mark.parametrize("kind", sorted(RUNNERS))
def test_the_catalogs_image_names_are_the_one_functions(kind: str) -> None:
    """runners/catalog.py cannot import glimmer.plan (runners import only the contract),
    so it repeats the name; it must be :func:`runner_repository`'s or absent."""
    image = RUNNERS[kind].image
    assert image == runner_repository(kind)


FAMILIES = [
    pytest.param(runner_image, id="this-project"),
    pytest.param(lambda kind: f"{UPSTREAM_REPOSITORY}-{kind}:v0.7.0", id="go-implementation"),
]


@pytest.mark.parametrize("name", FAMILIES)
@pytest.mark.parametrize("kind", sorted(RUNNERS))
def test_the_simulated_kubelet_runs_both_name_families_as_this_repos_runner(
    name: object, kind: str
) -> None:
    assert callable(name)
    module = RUNNERS[kind].module
    assert importlib.util.find_spec(module) is not None
    images = ImageMap.default()
    image = str(name(kind))
    assert images.entrypoint(image) == [sys.executable, "-m", module]
    rocm = image.replace(f"-{kind}:", f"-{kind}-rocm:")
    assert images.entrypoint(rocm) == [sys.executable, "-m", module]
    pinned = image.partition(":")[0] + "@sha256:" + "0" * 64
    assert images.entrypoint(pinned) == [sys.executable, "-m", module]


def test_a_lookalike_registry_is_not_taken_for_a_runner_image() -> None:
    images = ImageMap.default()
    assert images.entrypoint("ghcr.io/glimmer-ai/glimmer-runnerX-nccl:v1") is None
    assert images.entrypoint("evil.example/ghcr.io/glimmer-ai/glimmer-runner-nccl:v1") is None
    assert images.entrypoint("ghcrxio/glimmer-ai/glimmer-runner-nccl:v1") is None
