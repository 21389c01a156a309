"""What the simulated kubelet tells the operator about a pod's end and its hardware
(I19.4, I19.7): positive simulated-GPU marks on its nodes, the kubelet's own stops
(eviction, node shutdown, deadline) reported as Failed with its reason whatever the exit
code, and other components' conditions kept."""

from __future__ import annotations

import textwrap
import uuid
from pathlib import Path
from typing import cast

import pytest

from glimmer.controllers.run import evidence
from glimmer.sim import config as sim_config
from glimmer.sim._kube import Kube
from glimmer.sim.config import SimConfig, label_safe
from glimmer.sim.images import ImageMap
from glimmer.sim.nodes import node_manifest
from glimmer.sim.pods import PodWorker
from glimmer.testing import ControlPlane
from glimmer.testing.pytest_plugin import SimNodesFactory

from ._waiting import eventually, get_json, wait_for_phase
from .test_sim_kubelet import create, pod

#: A runner that traps SIGTERM and exits 0: only the kubelet's account tells it was stopped.
TRAPS_TERM = """
    import signal, sys, time
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    print("bw=12", flush=True)
    time.sleep(120)
"""


# --- pure ------------------------------------------------------------------------------


def test_I19_4_the_operator_reads_the_marks_the_simulator_writes() -> None:
    assert sim_config.SIM_GPU_LABEL in evidence.SIM_NODE_LABELS
    assert sim_config.INSTANCE_LABEL in evidence.SIM_NODE_LABELS
    assert sim_config.SIM_GPU_ENV == evidence.SIM_GPU_ENV


def test_I19_4_a_simulated_gpu_node_is_labelled_and_annotated_with_its_profile() -> None:
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


def test_I19_7_conditions_other_components_own_survive_the_kubelets_status(
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


# --- against the apiserver -------------------------------------------------------------


@pytest.mark.controlplane
def test_I19_4_registered_sim_nodes_carry_the_simulated_gpu_marks(
    control_plane: ControlPlane, sim_nodes: SimNodesFactory
) -> None:
    node = get_json(control_plane, "node", sim_nodes(1).names[0])
    assert node["metadata"]["labels"][sim_config.SIM_GPU_LABEL] == "h100x8"
    assert node["metadata"]["annotations"][sim_config.SIM_GPU_ANNOTATION] == "h100x8"


@pytest.mark.controlplane
def test_I19_7_an_evicted_pod_is_failed_evicted_though_its_runner_exited_0(
    control_plane: ControlPlane, sim_nodes: SimNodesFactory, namespace: str
) -> None:
    node = sim_nodes(1).names[0]
    name = f"evictee-{uuid.uuid4().hex[:4]}"
    create(control_plane, namespace, pod(name, node=node, script=textwrap.dedent(TRAPS_TERM)))
    wait_for_phase(control_plane, namespace=namespace, name=name, phases=("Running",))
    eventually(
        lambda: "bw=12" in control_plane.kubectl("logs", name, f"--namespace={namespace}").stdout,
        what="the runner's first line",
    )
    control_plane.kubectl(
        "annotate", "pod", name, f"--namespace={namespace}",
        f"{sim_config.EVICT_ANNOTATION}=The node was low on resource: memory.",
    )  # fmt: skip
    done = wait_for_phase(control_plane, namespace=namespace, name=name)
    assert (done["status"]["phase"], done["status"]["reason"]) == ("Failed", "Evicted")
    assert "low on resource" in done["status"]["message"]
    terminated = done["status"]["containerStatuses"][0]["state"]["terminated"]
    assert terminated["exitCode"] == 0  # the runner's own exit says nothing of the stop
    [disruption] = [c for c in done["status"]["conditions"] if c["type"] == "DisruptionTarget"]
    assert (disruption["status"], disruption["reason"]) == ("True", "TerminationByKubelet")


@pytest.mark.controlplane
def test_I19_7_a_deadline_stop_is_failed_deadline_exceeded_though_the_runner_exited_0(
    control_plane: ControlPlane, sim_nodes: SimNodesFactory, namespace: str
) -> None:
    node = sim_nodes(1).names[0]
    document = pod(
        "trapper", node=node, script=textwrap.dedent(TRAPS_TERM), activeDeadlineSeconds=2
    )
    create(control_plane, namespace, document)
    done = wait_for_phase(control_plane, namespace=namespace, name="trapper")
    assert (done["status"]["phase"], done["status"]["reason"]) == ("Failed", "DeadlineExceeded")
    assert done["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 0


@pytest.mark.controlplane
def test_I19_7_node_shutdown_fails_running_pods_as_terminated_whatever_their_exit(
    control_plane: ControlPlane, sim_nodes: SimNodesFactory, namespace: str
) -> None:
    nodes = sim_nodes(1)
    create(
        control_plane, namespace,
        pod("survivor", node=nodes.names[0], script=textwrap.dedent(TRAPS_TERM)),
    )  # fmt: skip
    wait_for_phase(control_plane, namespace=namespace, name="survivor", phases=("Running",))
    nodes.stop()
    done = wait_for_phase(control_plane, namespace=namespace, name="survivor")
    assert (done["status"]["phase"], done["status"]["reason"]) == ("Failed", "Terminated")
    assert any(
        c["type"] == "DisruptionTarget" and c["status"] == "True"
        for c in done["status"]["conditions"]
    )
