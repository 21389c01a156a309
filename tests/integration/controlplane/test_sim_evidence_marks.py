"""What the simulated kubelet tells the operator about a pod's end and its hardware
(I14, I17): positive simulated-GPU marks on its nodes, the kubelet's own stops
(eviction, node shutdown, deadline) reported as Failed with its reason whatever the exit
code, and other components' conditions kept. The pure halves of these rules are in
tests/unit/sim/test_sim_evidence_marks.py."""

from __future__ import annotations

import textwrap
import uuid

import pytest

from glimmer.sim import config as sim_config
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


@pytest.mark.controlplane
def test_I14_registered_sim_nodes_carry_the_simulated_gpu_marks(
    control_plane: ControlPlane, sim_nodes: SimNodesFactory
) -> None:
    node = get_json(control_plane, "node", sim_nodes(1).names[0])
    assert node["metadata"]["labels"][sim_config.SIM_GPU_LABEL] == "h100x8"
    assert node["metadata"]["annotations"][sim_config.SIM_GPU_ANNOTATION] == "h100x8"


@pytest.mark.controlplane
def test_I17_an_evicted_pod_is_failed_evicted_though_its_runner_exited_0(
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
def test_I17_a_deadline_stop_is_failed_deadline_exceeded_though_the_runner_exited_0(
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
def test_I17_node_shutdown_fails_running_pods_as_terminated_whatever_their_exit(
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
