"""The simulated kubelet runs pods as real processes and reports them as a kubelet does."""

from __future__ import annotations

import json
import textwrap
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes_asyncio import client
from kubernetes_asyncio.client import ApiClient

from glimmer.testing import ControlPlane
from glimmer.testing.pytest_plugin import SimNodesFactory

from ._waiting import eventually, get_json, wait_for_phase

pytestmark = pytest.mark.controlplane


def pod(
    name: str,
    *,
    node: str,
    script: str | None = None,
    image: str = "example.invalid/any:1",
    restart: str = "Never",
    **spec: Any,
) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "main", "image": image}
    if script is not None:
        container["command"] = ["python", "-c", textwrap.dedent(script)]
    container.update(spec.pop("container", {}))
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "restartPolicy": restart,
            "nodeSelector": {"kubernetes.io/hostname": node},
            "terminationGracePeriodSeconds": 5,
            "containers": [container],
            **spec,
        },
    }


def create(control_plane: ControlPlane, namespace: str, *documents: dict[str, Any]) -> None:
    control_plane.kubectl(
        "apply", f"--namespace={namespace}", "-f", "-", input=yaml.safe_dump_all(documents)
    )


def condition(pod_doc: dict[str, Any], kind: str) -> str | None:
    for c in pod_doc.get("status", {}).get("conditions") or []:
        if c["type"] == kind:
            return str(c["status"])
    return None


def test_three_sim_nodes_register_ready_with_gpus_and_leases(
    control_plane: ControlPlane, sim_nodes: SimNodesFactory
) -> None:
    nodes = sim_nodes(3)
    for name in nodes.names:
        node = get_json(control_plane, "node", name)
        assert condition(node, "Ready") == "True"
        assert node["status"]["allocatable"]["nvidia.com/gpu"] == "8"
        assert node["status"]["daemonEndpoints"]["kubeletEndpoint"]["Port"] == nodes.port
        assert not node["spec"].get("taints")
        lease = get_json(control_plane, "lease", name, "--namespace=kube-node-lease")
        assert lease["spec"]["holderIdentity"] == name


async def test_pod_stdout_and_stderr_read_back_through_pods_log(
    control_plane: ControlPlane, sim_nodes: SimNodesFactory, namespace: str, api_client: ApiClient
) -> None:
    node = sim_nodes(1).names[0]
    script = """
        import sys
        print("hello from a simulated pod", flush=True)
        print("to stderr", file=sys.stderr)
    """
    create(control_plane, namespace, pod("hello", node=node, script=script))
    done = wait_for_phase(control_plane, namespace=namespace, name="hello")
    assert done["status"]["phase"] == "Succeeded"
    terminated = done["status"]["containerStatuses"][0]["state"]["terminated"]
    assert (terminated["exitCode"], terminated["reason"]) == (0, "Completed")
    assert terminated["startedAt"] and terminated["finishedAt"]
    assert done["status"]["startTime"]
    log = await client.CoreV1Api(api_client).read_namespaced_pod_log("hello", namespace)
    assert log.splitlines() == ["hello from a simulated pod", "to stderr"]
    tail = await client.CoreV1Api(api_client).read_namespaced_pod_log(
        "hello", namespace, tail_lines=1
    )
    assert tail == "to stderr\n"
    head = await client.CoreV1Api(api_client).read_namespaced_pod_log(
        "hello", namespace, limit_bytes=5
    )
    assert head == "hello"


def test_nonzero_exit_fails_the_pod_with_the_real_exit_code(
    control_plane: ControlPlane, sim_nodes: SimNodesFactory, namespace: str
) -> None:
    node = sim_nodes(1).names[0]
    create(control_plane, namespace, pod("exit3", node=node, script="raise SystemExit(3)"))
    done = wait_for_phase(control_plane, namespace=namespace, name="exit3")
    assert done["status"]["phase"] == "Failed"
    terminated = done["status"]["containerStatuses"][0]["state"]["terminated"]
    assert (terminated["exitCode"], terminated["reason"]) == (3, "Error")


def test_readiness_probe_gates_the_ready_condition(
    control_plane: ControlPlane, sim_nodes: SimNodesFactory, namespace: str
) -> None:
    node = sim_nodes(1).names[0]
    script = """
        import os, socket, time
        time.sleep(5)
        server = socket.create_server((os.environ["POD_IP"], 8080))
        time.sleep(60)
    """
    probe = {"tcpSocket": {"port": "http"}, "periodSeconds": 1, "failureThreshold": 1}
    container = {
        "ports": [{"name": "http", "containerPort": 8080}],
        "readinessProbe": probe,
        "env": [{"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}],
    }
    create(control_plane, namespace, pod("probed", node=node, script=script, container=container))
    running = wait_for_phase(control_plane, namespace=namespace, name="probed", phases=("Running",))
    assert condition(running, "Ready") == "False"

    def ready_pod() -> dict[str, Any] | None:
        current = get_json(control_plane, "pod", "probed", f"--namespace={namespace}")
        return current if condition(current, "Ready") == "True" else None

    ready = eventually(ready_pod, what="the pod to turn Ready once its port listens")
    assert ready["status"]["containerStatuses"][0]["ready"] is True
    assert ready["status"]["podIP"].startswith("127.")


def test_env_resolves_downward_api_configmap_and_secret_values(
    control_plane: ControlPlane, sim_nodes: SimNodesFactory, namespace: str
) -> None:
    node = sim_nodes(1).names[0]
    control_plane.kubectl(
        "create", "configmap", "settings", "--from-literal=mode=fast", f"--namespace={namespace}"
    )
    control_plane.kubectl(
        "create",
        "secret",
        "generic",
        "creds",
        "--from-literal=token=s3cret",
        f"--namespace={namespace}",
    )
    env = [
        {"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
        {"name": "NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
        {"name": "NS", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
        {"name": "IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
        {"name": "MODE", "valueFrom": {"configMapKeyRef": {"name": "settings", "key": "mode"}}},
        {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "token"}}},
        {"name": "COMBINED", "value": "$(MODE)-$(NODE)"},
    ]
    script = """
        import json, os
        keys = ["NODE", "NAME", "NS", "IP", "MODE", "TOKEN", "COMBINED", "cfg_mode"]
        print(json.dumps({k: os.environ.get(k) for k in keys}))
    """
    container = {
        "env": env,
        "envFrom": [{"configMapRef": {"name": "settings"}, "prefix": "cfg_"}],
    }
    create(control_plane, namespace, pod("env", node=node, script=script, container=container))
    done = wait_for_phase(control_plane, namespace=namespace, name="env")
    assert done["status"]["phase"] == "Succeeded"
    values = json.loads(control_plane.kubectl("logs", "env", f"--namespace={namespace}").stdout)
    assert values == {
        "NODE": node,
        "NAME": "env",
        "NS": namespace,
        "IP": done["status"]["podIP"],
        "MODE": "fast",
        "TOKEN": "s3cret",
        "COMBINED": f"fast-{node}",
        "cfg_mode": "fast",
    }


def test_missing_configmap_key_is_a_container_config_error_and_never_runs(
    control_plane: ControlPlane, sim_nodes: SimNodesFactory, namespace: str, tmp_path: Path
) -> None:
    node = sim_nodes(1).names[0]
    marker = tmp_path / "ran"
    env = [{"name": "X", "valueFrom": {"configMapKeyRef": {"name": "absent", "key": "k"}}}]
    script = f"open({str(marker)!r}, 'w').close()"
    create(control_plane, namespace, pod("cfg", node=node, script=script, container={"env": env}))

    def waiting_reason() -> str | None:
        status = get_json(control_plane, "pod", "cfg", f"--namespace={namespace}")["status"]
        state = (status.get("containerStatuses") or [{}])[0].get("state", {})
        return state.get("waiting", {}).get("reason")

    assert eventually(waiting_reason) == "CreateContainerConfigError"
    assert (
        get_json(control_plane, "pod", "cfg", f"--namespace={namespace}")["status"]["phase"]
        == "Pending"
    )
    assert not marker.exists()


def test_image_with_no_entrypoint_and_no_command_is_err_image_pull_never_a_run(
    control_plane: ControlPlane, sim_nodes: SimNodesFactory, namespace: str
) -> None:
    node = sim_nodes(1).names[0]
    create(control_plane, namespace, pod("pull", node=node, image="registry.invalid/unknown:1"))

    def waiting_reason() -> str | None:
        status = get_json(control_plane, "pod", "pull", f"--namespace={namespace}")["status"]
        state = (status.get("containerStatuses") or [{}])[0].get("state", {})
        return state.get("waiting", {}).get("reason")

    assert eventually(waiting_reason) == "ErrImagePull"
    status = get_json(control_plane, "pod", "pull", f"--namespace={namespace}")["status"]
    assert status["phase"] == "Pending"


def test_image_map_runs_a_mapped_image_as_its_command(
    control_plane: ControlPlane, sim_nodes: SimNodesFactory, namespace: str
) -> None:
    rule = "example\\.com/echo:.*={python} -c \"print('mapped')\""
    node = sim_nodes(1, extra_args=[f"--image-map={rule}"]).names[0]
    create(control_plane, namespace, pod("mapped", node=node, image="example.com/echo:v1"))
    done = wait_for_phase(control_plane, namespace=namespace, name="mapped")
    assert done["status"]["phase"] == "Succeeded"
    logs = control_plane.kubectl("logs", "mapped", f"--namespace={namespace}").stdout
    assert logs == "mapped\n"


def test_active_deadline_kills_the_pod_as_deadline_exceeded(
    control_plane: ControlPlane, sim_nodes: SimNodesFactory, namespace: str
) -> None:
    node = sim_nodes(1).names[0]
    document = pod(
        "slow", node=node, script="import time; time.sleep(120)", activeDeadlineSeconds=2
    )
    create(control_plane, namespace, document)
    done = wait_for_phase(control_plane, namespace=namespace, name="slow")
    assert (done["status"]["phase"], done["status"]["reason"]) == ("Failed", "DeadlineExceeded")
    terminated = done["status"]["containerStatuses"][0]["state"]["terminated"]
    assert terminated["exitCode"] != 0


def test_deletion_sends_sigterm_within_the_grace_period_then_removes_the_pod(
    control_plane: ControlPlane, sim_nodes: SimNodesFactory, namespace: str, tmp_path: Path
) -> None:
    node = sim_nodes(1).names[0]
    marker = tmp_path / "terminated"
    script = f"""
        import signal, sys, time
        def stop(*_):
            open({str(marker)!r}, "w").write("SIGTERM")
            sys.exit(0)
        signal.signal(signal.SIGTERM, stop)
        print("up", flush=True)
        time.sleep(120)
    """
    create(control_plane, namespace, pod("doomed", node=node, script=script))
    wait_for_phase(control_plane, namespace=namespace, name="doomed", phases=("Running",))
    eventually(
        lambda: control_plane.kubectl("logs", "doomed", f"--namespace={namespace}").stdout,
        what="the process to start",
    )
    control_plane.kubectl("delete", "pod", "doomed", f"--namespace={namespace}", "--wait=false")
    eventually(
        lambda: (
            control_plane.kubectl(
                "get", "pod", "doomed", f"--namespace={namespace}", check=False
            ).returncode
            != 0
        ),
        what="the pod to be removed",
    )
    assert marker.read_text() == "SIGTERM"


def test_cordoned_node_gets_only_pods_that_tolerate_unschedulable(
    control_plane: ControlPlane, sim_nodes: SimNodesFactory, namespace: str
) -> None:
    node = sim_nodes(1).names[0]
    control_plane.kubectl("cordon", node)
    toleration = {"key": "node.kubernetes.io/unschedulable", "operator": "Exists"}
    create(
        control_plane,
        namespace,
        pod("plain", node=node, script="pass"),
        pod("tolerant", node=node, script="pass", tolerations=[toleration]),
    )
    wait_for_phase(control_plane, namespace=namespace, name="tolerant")
    plain = get_json(control_plane, "pod", "plain", f"--namespace={namespace}")
    assert not plain["spec"].get("nodeName")


def test_gpu_requests_beyond_allocatable_wait_for_capacity(
    control_plane: ControlPlane, sim_nodes: SimNodesFactory, namespace: str
) -> None:
    node = sim_nodes(1, gpus_per_node=2).names[0]
    gpus = {"resources": {"limits": {"nvidia.com/gpu": "2"}}}
    create(
        control_plane,
        namespace,
        pod("first", node=node, script="import time; time.sleep(8)", container=gpus),
    )
    wait_for_phase(control_plane, namespace=namespace, name="first", phases=("Running",))
    create(control_plane, namespace, pod("second", node=node, script="pass", container=gpus))
    second = get_json(control_plane, "pod", "second", f"--namespace={namespace}")
    assert not second["spec"].get("nodeName")
    wait_for_phase(control_plane, namespace=namespace, name="first")
    done = wait_for_phase(control_plane, namespace=namespace, name="second")
    assert done["status"]["phase"] == "Succeeded"


def test_stopping_the_simulator_fails_its_running_pods_and_removes_its_nodes(
    control_plane: ControlPlane, sim_nodes: SimNodesFactory, namespace: str
) -> None:
    nodes = sim_nodes(1)
    create(
        control_plane,
        namespace,
        pod("long", node=nodes.names[0], script="import time; time.sleep(120)"),
    )
    wait_for_phase(control_plane, namespace=namespace, name="long", phases=("Running",))
    nodes.stop()
    done = get_json(control_plane, "pod", "long", f"--namespace={namespace}")
    assert (done["status"]["phase"], done["status"]["reason"]) == ("Failed", "Terminated")
    gone = control_plane.kubectl("get", "node", nodes.names[0], check=False)
    assert gone.returncode != 0


def test_exec_readiness_probe_runs_the_command_with_the_container_env(
    control_plane: ControlPlane, sim_nodes: SimNodesFactory, namespace: str, tmp_path: Path
) -> None:
    node = sim_nodes(1).names[0]
    flag = tmp_path / "ready-flag"
    script = f"""
        import pathlib, time
        time.sleep(5)
        pathlib.Path({str(flag)!r}).touch()
        time.sleep(60)
    """
    probe = {
        "exec": {"command": ["sh", "-c", 'test -f "$FLAG"']},
        "periodSeconds": 1,
        "failureThreshold": 1,
    }
    container = {"readinessProbe": probe, "env": [{"name": "FLAG", "value": str(flag)}]}
    create(control_plane, namespace, pod("execp", node=node, script=script, container=container))
    running = wait_for_phase(control_plane, namespace=namespace, name="execp", phases=("Running",))
    assert condition(running, "Ready") == "False"
    eventually(
        lambda: (
            condition(get_json(control_plane, "pod", "execp", f"--namespace={namespace}"), "Ready")
            == "True"
        ),
        what="the exec probe to pass once the flag file exists",
    )


def test_init_containers_run_first_and_a_failed_init_fails_the_pod(
    control_plane: ControlPlane, sim_nodes: SimNodesFactory, namespace: str, tmp_path: Path
) -> None:
    node = sim_nodes(1).names[0]
    shared = tmp_path / "from-init"
    init_ok = {
        "name": "prepare",
        "image": "example.invalid/any:1",
        "command": ["python", "-c", f"open({str(shared)!r}, 'w').write('prepared')"],
    }
    main = f"print(open({str(shared)!r}).read(), flush=True)"
    create(
        control_plane, namespace, pod("inited", node=node, script=main, initContainers=[init_ok])
    )
    done = wait_for_phase(control_plane, namespace=namespace, name="inited")
    assert done["status"]["phase"] == "Succeeded"
    assert done["status"]["initContainerStatuses"][0]["state"]["terminated"]["exitCode"] == 0
    logs = control_plane.kubectl("logs", "inited", "-c", "main", f"--namespace={namespace}")
    assert logs.stdout == "prepared\n"

    init_bad = {**init_ok, "command": ["python", "-c", "raise SystemExit(7)"]}
    create(
        control_plane,
        namespace,
        pod("badinit", node=node, script="pass", initContainers=[init_bad]),
    )
    failed = wait_for_phase(control_plane, namespace=namespace, name="badinit")
    assert failed["status"]["phase"] == "Failed"
    assert failed["status"]["initContainerStatuses"][0]["state"]["terminated"]["exitCode"] == 7
    assert "terminated" not in failed["status"]["containerStatuses"][0]["state"]


def test_on_failure_restarts_the_container_and_keeps_the_previous_log(
    control_plane: ControlPlane, sim_nodes: SimNodesFactory, namespace: str, tmp_path: Path
) -> None:
    node = sim_nodes(1).names[0]
    attempts = tmp_path / "attempts"
    script = f"""
        import pathlib
        path = pathlib.Path({str(attempts)!r})
        n = len(path.read_text()) if path.exists() else 0
        path.write_text("x" * (n + 1))
        print(f"attempt {{n + 1}}", flush=True)
        raise SystemExit(0 if n else 1)
    """
    create(control_plane, namespace, pod("flaky", node=node, script=script, restart="OnFailure"))
    done = wait_for_phase(control_plane, namespace=namespace, name="flaky")
    assert done["status"]["phase"] == "Succeeded"
    status = done["status"]["containerStatuses"][0]
    assert status["restartCount"] == 1
    assert status["lastState"]["terminated"]["exitCode"] == 1
    ns = f"--namespace={namespace}"
    assert control_plane.kubectl("logs", "flaky", ns).stdout == "attempt 2\n"
    assert control_plane.kubectl("logs", "flaky", "--previous", ns).stdout == "attempt 1\n"


def test_following_a_log_streams_until_the_container_exits(
    control_plane: ControlPlane, sim_nodes: SimNodesFactory, namespace: str
) -> None:
    node = sim_nodes(1).names[0]
    script = """
        import time
        for i in range(3):
            print(f"tick {i}", flush=True)
            time.sleep(0.5)
    """
    create(control_plane, namespace, pod("ticker", node=node, script=script))
    wait_for_phase(
        control_plane, namespace=namespace, name="ticker", phases=("Running", "Succeeded")
    )
    followed = control_plane.kubectl("logs", "-f", "ticker", f"--namespace={namespace}")
    assert followed.stdout == "tick 0\ntick 1\ntick 2\n"


def test_runner_image_runs_its_module_against_the_nodes_simulated_gpu(
    control_plane: ControlPlane, sim_nodes: SimNodesFactory, namespace: str
) -> None:
    prefix = f"smoke-{uuid.uuid4().hex[:4]}-"
    healthy, faulty = f"{prefix}0", f"{prefix}1"
    sim_nodes(
        2,
        name_prefix=prefix,
        gpus_per_node=2,
        # B200s: compute-smoke is the FP4 test, a declared skip on a part without FP4.
        extra_args=["--sim-gpu=b200x2", f"--node-sim-gpu={faulty}=b200x2:nan-compute"],
    )
    image = "ghcr.io/baldwinspc/glimmer-burnin-compute-smoke:v0.7.1"
    create(
        control_plane,
        namespace,
        pod("smoke-healthy", node=healthy, image=image),
        pod("smoke-faulty", node=faulty, image=image),
    )
    ns = f"--namespace={namespace}"
    good = wait_for_phase(control_plane, namespace=namespace, name="smoke-healthy", timeout=60)
    bad = wait_for_phase(control_plane, namespace=namespace, name="smoke-faulty", timeout=60)
    good_log = control_plane.kubectl("logs", "smoke-healthy", ns).stdout
    bad_log = control_plane.kubectl("logs", "smoke-faulty", ns).stdout
    assert good["status"]["phase"] == "Succeeded", good_log
    assert "provenance=sim" in good_log
    assert bad["status"]["phase"] == "Failed", bad_log
    assert bad["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] != 0
    assert "non-finite" in bad_log
