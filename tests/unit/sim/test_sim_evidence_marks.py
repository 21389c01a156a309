"""What the simulated kubelet tells the operator, as pure functions (I14, I17): the
simulated-GPU marks it writes on its nodes are the ones the operator reads, and other
components' pod conditions survive the kubelet's status. The same rules against the
apiserver are in tests/integration/controlplane/test_sim_evidence_marks.py."""

from __future__ import annotations

from pathlib import Path
from typing import cast

from glimmer.controllers.run import evidence
from glimmer.sim import config as sim_config
from glimmer.sim._kube import Kube
from glimmer.sim.config import SimConfig, label_safe
from glimmer.sim.images import ImageMap
from glimmer.sim.nodes import node_manifest
from glimmer.sim.pods import PodWorker


def test_I14_the_operator_reads_the_marks_the_simulator_writes() -> None:
    assert sim_config.SIM_GPU_LABEL in evidence.SIM_NODE_LABELS
    assert sim_config.INSTANCE_LABEL in evidence.SIM_NODE_LABELS
    assert sim_config.SIM_GPU_ENV == evidence.SIM_GPU_ENV


def test_I14_a_simulated_gpu_node_is_labelled_and_annotated_with_its_profile() -> None:
    config = SimConfig(
        kubeconfig=Path("k"),
        gpus_per_node=8,
        node_sim_gpu=(("sim-1", "h100x8:ecc-uncorrectable"),),
    )
    plain = node_manifest(config, name="sim-0", instance="abc")["metadata"]
    assert plain["labels"][sim_config.SIM_GPU_LABEL] == "h100x8"
    assert plain["annotations"][sim_config.SIM_GPU_ANNOTATION] == "h100x8"
    faulty = node_manifest(config, name="sim-1", instance="abc")["metadata"]
    assert faulty["labels"][sim_config.SIM_GPU_LABEL] == "h100x8_ecc-uncorrectable"
    assert faulty["annotations"][sim_config.SIM_GPU_ANNOTATION] == "h100x8:ecc-uncorrectable"
    # No GPU, no simulated-GPU mark; the instance label still says it is simulated.
    bare = node_manifest(SimConfig(kubeconfig=Path("k"), gpus_per_node=0), name="s", instance="i")
    assert sim_config.SIM_GPU_LABEL not in bare["metadata"]["labels"]
    assert bare["metadata"]["labels"][sim_config.INSTANCE_LABEL] == "i"


def test_label_safe_values_are_valid_label_values() -> None:
    assert label_safe("h100x8:low-clock") == "h100x8_low-clock"
    assert len(label_safe("x" * 100)) == 63
    assert label_safe(":::") == "simulated"


def test_I17_conditions_other_components_own_survive_the_kubelets_status(
    tmp_path: Path,
) -> None:
    disruption = {"type": "DisruptionTarget", "status": "True", "reason": "EvictionByEvictionAPI"}
    document = {
        "metadata": {"name": "p", "namespace": "ns", "uid": "u"},
        "spec": {"containers": [{"name": "runner", "image": "x"}]},
        "status": {"conditions": [disruption, {"type": "Ready", "status": "True"}]},
    }
    worker = PodWorker(
        kube=cast(Kube, None),  # status() never talks to the apiserver
        pod=document,
        pod_ip="127.0.0.2",
        images=ImageMap.default(),
        sandbox=tmp_path,
    )
    conditions = worker.status()["conditions"]
    assert disruption in conditions
    assert [c["type"] for c in conditions].count("Ready") == 1
