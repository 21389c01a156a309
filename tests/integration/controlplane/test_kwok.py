"""KWOK nodes: pods reach the terminal state a test asks for, with logs through the API."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import yaml

from glimmer.testing import ControlPlane
from glimmer.testing.kwok import EXIT_CODE_ANNOTATION, Kwok

from ._waiting import get_json, wait_for_phase

pytestmark = pytest.mark.controlplane


def kwok_pod(name: str, *, node: str, annotations: dict[str, str]) -> str:
    return yaml.safe_dump(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "annotations": annotations},
            "spec": {
                "restartPolicy": "Never",
                "nodeSelector": {"kubernetes.io/hostname": node},
                "containers": [{"name": "runner", "image": "example.invalid/runner:1"}],
            },
        }
    )


def test_kwok_gpu_nodes_register_ready_with_gpus(
    control_plane: ControlPlane, kwok_nodes: Callable[..., list[str]]
) -> None:
    names = kwok_nodes(3, gpus_per_node=4)
    for name in names:
        node = get_json(control_plane, "node", name)
        ready = [c for c in node["status"]["conditions"] if c["type"] == "Ready"]
        assert ready and ready[0]["status"] == "True"
        assert node["status"]["allocatable"]["nvidia.com/gpu"] == "4"
        assert node["metadata"]["labels"]["type"] == "kwok"


def test_kwok_pod_exits_with_the_annotated_code_and_its_log_reads_back(
    control_plane: ControlPlane, kwok: Kwok, namespace: str
) -> None:
    node = kwok.create_nodes(1)[0]
    kwok.set_pod_log(namespace=namespace, pod="exit3", text="line one\nRESULT: failed")
    control_plane.kubectl(
        "apply",
        f"--namespace={namespace}",
        "-f",
        "-",
        input=kwok_pod("exit3", node=node, annotations={EXIT_CODE_ANNOTATION: "3"}),
    )
    done = wait_for_phase(control_plane, namespace=namespace, name="exit3")
    assert done["status"]["phase"] == "Failed"
    terminated = done["status"]["containerStatuses"][0]["state"]["terminated"]
    assert (terminated["exitCode"], terminated["reason"]) == (3, "Error")
    log = control_plane.kubectl("logs", "exit3", f"--namespace={namespace}").stdout
    assert log == "line one\nRESULT: failed\n"


def test_kwok_pod_without_an_exit_code_keeps_running_never_passes(
    control_plane: ControlPlane, kwok: Kwok, namespace: str
) -> None:
    node = kwok.create_nodes(1)[0]
    control_plane.kubectl(
        "apply",
        f"--namespace={namespace}",
        "-f",
        "-",
        input=kwok_pod("forever", node=node, annotations={}),
    )
    running = wait_for_phase(
        control_plane, namespace=namespace, name="forever", phases=("Running",)
    )
    assert "terminated" not in running["status"]["containerStatuses"][0]["state"]
    # Stages apply immediately; a second look must still not have completed it.
    again = get_json(control_plane, "pod", "forever", f"--namespace={namespace}")
    assert again["status"]["phase"] == "Running"


def test_deleted_kwok_nodes_are_gone_from_the_api(control_plane: ControlPlane, kwok: Kwok) -> None:
    names = kwok.create_nodes(2)
    kwok.delete_nodes(names)
    listed = control_plane.kubectl("get", "nodes", "-o", "name").stdout
    assert not any(f"node/{name}" in listed.split() for name in names)
