"""Pure rules of the simulated node: placement, environment, image mapping (no cluster)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from glimmer.sim import placement
from glimmer.sim.config import SimConfig
from glimmer.sim.environment import ContainerConfigError, build_env, expand
from glimmer.sim.images import ImageMap, ImagePullError, ImageRule
from glimmer.sim.kubelet import PodIPs


def node(**spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "n0", "labels": {"kubernetes.io/hostname": "n0", "gpu": "h100"}},
        "spec": spec,
        "status": {
            "conditions": [{"type": "Ready", "status": "True"}],
            "allocatable": {"nvidia.com/gpu": "2"},
        },
    }


def pod(**spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}], **spec}}


def test_node_selector_must_match_every_label() -> None:
    assert placement.feasible(pod(nodeSelector={"gpu": "h100"}), node(), [])
    assert not placement.feasible(pod(nodeSelector={"gpu": "b200"}), node(), [])


def test_cordoned_node_is_tainted_unschedulable() -> None:
    cordoned = node(unschedulable=True)
    assert not placement.feasible(pod(), cordoned, [])
    tolerant = pod(tolerations=[{"key": "node.kubernetes.io/unschedulable", "operator": "Exists"}])
    assert placement.feasible(tolerant, cordoned, [])


def test_no_schedule_taint_needs_a_matching_toleration() -> None:
    tainted = node(taints=[{"key": "gpu", "value": "bad", "effect": "NoSchedule"}])
    assert not placement.feasible(pod(), tainted, [])
    wrong = pod(tolerations=[{"key": "gpu", "value": "ok", "effect": "NoSchedule"}])
    assert not placement.feasible(wrong, tainted, [])
    right = pod(tolerations=[{"key": "gpu", "value": "bad", "effect": "NoSchedule"}])
    assert placement.feasible(right, tainted, [])


def test_prefer_no_schedule_taint_does_not_block() -> None:
    tainted = node(taints=[{"key": "x", "effect": "PreferNoSchedule"}])
    assert placement.feasible(pod(), tainted, [])


def test_required_node_affinity_is_honoured() -> None:
    def affinity(operator: str, values: list[str]) -> dict[str, Any]:
        term = {"matchExpressions": [{"key": "gpu", "operator": operator, "values": values}]}
        required = {"nodeSelectorTerms": [term]}
        return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": required}}

    assert placement.feasible(pod(affinity=affinity("In", ["h100"])), node(), [])
    assert not placement.feasible(pod(affinity=affinity("NotIn", ["h100"])), node(), [])


def test_not_ready_node_gets_no_pods() -> None:
    unready = node()
    unready["status"]["conditions"] = [{"type": "Ready", "status": "False"}]
    assert not placement.feasible(pod(), unready, [])


def test_gpu_requests_count_against_allocatable_until_terminal() -> None:
    two = pod(containers=[{"name": "c", "resources": {"limits": {"nvidia.com/gpu": "2"}}}])
    holder = {**two, "status": {"phase": "Running"}}
    assert placement.feasible(two, node(), [])
    assert not placement.feasible(two, node(), [holder])
    assert placement.feasible(two, node(), [{**holder, "status": {"phase": "Succeeded"}}])


def test_dollar_references_expand_like_kubernetes() -> None:
    env = {"A": "1"}
    assert expand("$(A)-$(B)-$$(A)", env) == "1-$(B)-$(A)"


async def test_missing_secret_key_is_a_config_error_unless_optional() -> None:
    async def fetch(kind: str, name: str) -> dict[str, Any] | None:
        return {"data": {}} if kind == "secrets" else None

    ref = {"name": "s", "key": "k"}
    required = {"env": [{"name": "X", "valueFrom": {"secretKeyRef": ref}}]}
    with pytest.raises(ContainerConfigError):
        await build_env(pod(), required, fetch=fetch, base={})
    optional = {"env": [{"name": "X", "valueFrom": {"secretKeyRef": {**ref, "optional": True}}}]}
    assert "X" not in await build_env(pod(), optional, fetch=fetch, base={})


def test_runner_images_map_to_their_python_module() -> None:
    images = ImageMap.default()
    argv = images.argv({"image": "ghcr.io/baldwinspc/glimmer-burnin-memory-bw:v0.6.0"})
    assert argv == [sys.executable, "-m", "runners.memory_bw"]
    rocm = images.argv({"image": "ghcr.io/baldwinspc/glimmer-burnin-gemm-rocm:v1", "args": ["-x"]})
    assert rocm == [sys.executable, "-m", "runners.gemm", "-x"]


def test_command_replaces_the_image_entrypoint() -> None:
    images = ImageMap.default()
    container = {"image": "busybox", "command": ["echo"], "args": ["hi"]}
    assert images.argv(container) == ["echo", "hi"]


def test_unknown_image_without_command_is_a_pull_error() -> None:
    with pytest.raises(ImagePullError):
        ImageMap.default().argv({"image": "registry.invalid/x:1", "args": ["a"]})


def test_user_image_rules_take_precedence() -> None:
    rule = ImageRule.parse(r"ghcr\.io/baldwinspc/glimmer-burnin-nccl:.*=/bin/true")
    images = ImageMap.default([rule])
    assert images.argv({"image": "ghcr.io/baldwinspc/glimmer-burnin-nccl:v1"}) == ["/bin/true"]


def test_pod_ips_are_unique_loopback_addresses() -> None:
    ips = PodIPs(42)
    addresses = [ips.allocate() for _ in range(600)]
    assert len(set(addresses)) == 600
    assert all(a.startswith("127.42.") for a in addresses)
    assert not any(a.endswith((".0", ".255")) for a in addresses)


def test_node_env_names_the_simulated_gpu_matching_the_advertised_hardware() -> None:
    config = SimConfig(
        kubeconfig=Path("k"),
        gpus_per_node=4,
        gpu_product="NVIDIA-H200",
        node_sim_gpu=(("sim-1", "h200x4:low-clock"),),
        container_env=(("EXTRA", "1"),),
    )
    assert config.node_env("sim-0") == {"GLIMMER_SIM_GPU": "h200x4", "EXTRA": "1"}
    assert config.node_env("sim-1")["GLIMMER_SIM_GPU"] == "h200x4:low-clock"
    no_gpus = SimConfig(kubeconfig=Path("k"), gpus_per_node=0)
    assert "GLIMMER_SIM_GPU" not in no_gpus.node_env("sim-0")
