"""A simulated node whose GLIMMER_SIM_GPU is an AMD profile is an AMD node.

The fingerprint reads the vendor from the node's labels and extended resources; these
tests run the fingerprint's own readers over what the config hands the node, so a node
simulating MI300X cannot be fingerprinted as NVIDIA (and get the CUDA image, E14).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from glimmer.controllers.fingerprint.observe import gpus_from_allocatable, gpus_from_labels
from glimmer.sim.config import AMD_SIM_PRODUCTS, SimConfig, sim_gpu_profile
from runners.sdk.simgpu.profiles import AMD_PROFILES


def config(**fields: Any) -> SimConfig:
    return SimConfig(kubeconfig=Path("/nonexistent"), nss_wrapper=None, **fields)


def test_amd_sim_products_name_every_simulated_amd_profile() -> None:
    assert set(AMD_SIM_PRODUCTS) == set(AMD_PROFILES)


@pytest.mark.parametrize(
    ("value", "profile"),
    [("mi300xx8", "mi300x"), ("mi325x", "mi325x"), ("MI300XX2:ecc-uncorrectable", "mi300x")],
)
def test_profile_of_a_sim_gpu_value(value: str, profile: str) -> None:
    assert sim_gpu_profile(value) == profile


@pytest.mark.parametrize("sim_gpu", ["mi300xx8", "mi325xx8:low-clock"])
def test_amd_sim_node_is_fingerprinted_amd_from_labels_and_allocatable(sim_gpu: str) -> None:
    cfg = config(sim_gpu=sim_gpu)
    assert cfg.gpu_vendor("sim-0") == "amd"
    labels = cfg.gpu_labels("sim-0")
    assert not any(key.startswith("nvidia.com/") for key in labels)
    gpus = gpus_from_labels(labels)
    assert len(gpus) == 8 and {g.vendor for g in gpus} == {"amd"}
    assert {g.arch for g in gpus} == {"gfx942"}
    assert cfg.gpu_resource("sim-0") == "amd.com/gpu"
    allocated = gpus_from_allocatable({cfg.gpu_resource("sim-0"): "8"})
    assert {g.vendor for g in allocated} == {"amd"}


def test_nvidia_sim_node_keeps_nvidia_labels() -> None:
    cfg = config()
    assert cfg.gpu_vendor("sim-0") == "nvidia"
    assert cfg.gpu_labels("sim-0") == {
        "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
        "nvidia.com/gpu.count": "8",
    }
    assert cfg.gpu_resource("sim-0") == "nvidia.com/gpu"


def test_per_node_override_makes_one_node_amd() -> None:
    cfg = config(sim_gpu="h100x8", node_sim_gpu=(("sim-1", "mi300xx8:remap-pending"),))
    assert cfg.gpu_vendor("sim-0") == "nvidia"
    assert cfg.gpu_vendor("sim-1") == "amd"
    assert {g.vendor for g in gpus_from_labels(cfg.gpu_labels("sim-1"))} == {"amd"}


def test_amd_product_derives_the_amd_profile() -> None:
    cfg = config(gpu_product="AMD Instinct MI300X", gpus_per_node=4)
    assert cfg.simulated_gpu("sim-0") == "mi300xx4"
    assert cfg.gpu_vendor("sim-0") == "amd"
