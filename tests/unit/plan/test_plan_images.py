"""Runner image resolution (E14) and the default table (api §12, §O)."""

from __future__ import annotations

import pytest

from glimmer.plan.images import DEFAULT_IMAGES, ImageError, default_image, resolve_image


def test_api12_default_table_is_ours_for_every_kind_with_a_runner_here() -> None:
    ours = "ghcr.io/glimmer-ai/glimmer-runner"
    assert {kind: (d.repository, d.tag, d.vendor) for kind, d in DEFAULT_IMAGES.items()} == {
        "compute-smoke": (ours, "v0.1.0", "nvidia"),
        "clockprobe": (ours, "v0.1.0", "nvidia"),
        "host-health": (ours, "v0.1.0", "nvidia"),
        "ib-write-bw": (ours, "v0.1.0", "*"),
        "nccl": (ours, "v0.1.0", "nvidia"),
        "gpudirect-rdma": (ours, "v0.1.0", "nvidia"),
        "dcgm-diag": (ours, "v0.1.0", "nvidia"),
        "memory-stress": (ours, "v0.1.0", "*"),
        "memory-bw": (ours, "v0.1.0", "nvidia"),
        "tcp-baseline": (ours, "v0.1.0", "*"),
        "fabric-soak": (ours, "v0.1.0", "*"),
        "fingerprint-probe": (ours, "v0.1.0", "*"),
        "thermal-soak": (ours, "v0.1.0", "nvidia"),
        "gpu-burn": (ours, "v0.1.0", "nvidia"),
        "gemm-sweep": (ours, "v0.1.0", "nvidia"),
        "disk-io": (ours, "v0.1.0", "*"),
    }
    assert default_image("nccl") == "ghcr.io/glimmer-ai/glimmer-runner-nccl:v0.1.0"


def test_E14_runner_image_wins_over_everything() -> None:
    runner = {"image": "mine:1", "imagesByVendor": [{"vendor": "amd", "image": "rocm:1"}]}
    assert resolve_image(kind="gpu-burn", runner=runner, node_vendor="amd") == "mine:1"


def test_E14_first_images_by_vendor_entry_matching_the_node_vendor() -> None:
    runner = {
        "imagesByVendor": [
            {"vendor": "nvidia", "image": "cuda:1"},
            {"vendor": "amd", "image": "rocm:1"},
            {"vendor": "amd", "image": "rocm:2"},
        ]
    }
    assert resolve_image(kind="gpu-burn", runner=runner, node_vendor="amd") == "rocm:1"


@pytest.mark.parametrize("vendor", [None, "", "unknown"])
def test_E14_unknown_vendor_matches_no_vendor_entry_but_takes_the_default(
    vendor: str | None,
) -> None:
    runner = {"imagesByVendor": [{"vendor": "amd", "image": "rocm:1"}]}
    assert resolve_image(kind="gpu-burn", runner=runner, node_vendor=vendor) == (
        "ghcr.io/glimmer-ai/glimmer-runner-gpu-burn:v0.1.0"
    )


def test_E14_default_for_any_vendor_runs_on_every_node() -> None:
    image = resolve_image(kind="memory-stress", runner=None, node_vendor="intel")
    assert image == "ghcr.io/glimmer-ai/glimmer-runner-memory-stress:v0.1.0"


def test_E14_vendor_specific_default_never_runs_on_another_vendors_node() -> None:
    # dcgm-diag has no ROCm build here (kinds that have one default to it on AMD nodes).
    result = resolve_image(kind="dcgm-diag", runner={}, node_vendor="amd")
    assert isinstance(result, ImageError)
    assert "imagesByVendor" in result.message and "amd" in result.message


@pytest.mark.parametrize("kind", ["custom", "weird"])
def test_E14_kind_without_default_image_is_an_error_naming_the_fix(kind: str) -> None:
    result = resolve_image(kind=kind, runner={"image": ""}, node_vendor="nvidia")
    assert isinstance(result, ImageError)
    assert "spec.runner.image" in result.message
