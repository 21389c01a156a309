"""Runner image resolution (E14) and the default table (api §12, §O)."""

from __future__ import annotations

import pytest

from glimmer.plan.images import DEFAULT_IMAGES, ImageError, default_image, resolve_image


def test_api12_default_table_has_the_twelve_upstream_pins() -> None:
    assert {kind: (d.tag, d.vendor) for kind, d in DEFAULT_IMAGES.items()} == {
        "compute-smoke": ("v0.7.0", "nvidia"),
        "clockprobe": ("v0.7.0", "nvidia"),
        "thermal-soak": ("v0.7.0", "nvidia"),
        "gpu-burn": ("v0.7.0", "nvidia"),
        "gemm-sweep": ("v0.7.0", "nvidia"),
        "host-health": ("v0.6.4", "nvidia"),
        "ib-write-bw": ("v0.6.4", "*"),
        "nccl": ("v0.6.4", "nvidia"),
        "gpudirect-rdma": ("v0.6.4", "nvidia"),
        "dcgm-diag": ("v0.6.3", "nvidia"),
        "memory-stress": ("v0.6.2", "*"),
        "memory-bw": ("v0.6.0", "nvidia"),
    }
    assert default_image("nccl") == "ghcr.io/baldwinspc/glimmer-burnin-nccl:v0.6.4"


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
        "ghcr.io/baldwinspc/glimmer-burnin-gpu-burn:v0.7.0"
    )


def test_E14_default_for_any_vendor_runs_on_every_node() -> None:
    image = resolve_image(kind="memory-stress", runner=None, node_vendor="intel")
    assert image == "ghcr.io/baldwinspc/glimmer-burnin-memory-stress:v0.6.2"


def test_E14_vendor_specific_default_never_runs_on_another_vendors_node() -> None:
    result = resolve_image(kind="gpu-burn", runner={}, node_vendor="amd")
    assert isinstance(result, ImageError)
    assert "imagesByVendor" in result.message and "amd" in result.message


@pytest.mark.parametrize(
    "kind", ["custom", "tcp-baseline", "disk-io", "fabric-soak", "fingerprint-probe", "weird"]
)
def test_E14_kind_without_default_image_is_an_error_naming_the_fix(kind: str) -> None:
    result = resolve_image(kind=kind, runner={"image": ""}, node_vendor="nvidia")
    assert isinstance(result, ImageError)
    assert "spec.runner.image" in result.message
