"""Node objects and their heartbeats, as a kubelet keeps them.

A node is registered (or taken over, if a previous simulator left it) with loopback
``InternalIP`` and the kubelet port of this process, so the apiserver's ``pods/log``
proxy reaches our log server. Liveness is the Lease in ``kube-node-lease`` renewed every
few seconds plus a Ready condition; nothing marks a node NotReady when the process dies,
since there is no node-lifecycle controller (tests delete nodes instead).
"""

from __future__ import annotations

import asyncio
import datetime
import os
import platform
from typing import Any

from glimmer.sim._kube import ApiError, Kube
from glimmer.sim.config import (
    INSTANCE_LABEL,
    SIM_GPU_ANNOTATION,
    SIM_GPU_LABEL,
    SimConfig,
    label_safe,
)

JSON = dict[str, Any]
KUBELET_VERSION = "v1.36.3-glimmer-sim"
_CONDITION_TAINTS = ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")


def now_rfc3339() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def now_micro() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def node_manifest(config: SimConfig, *, name: str, instance: str) -> JSON:
    labels = {
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        **config.gpu_labels(name),
        INSTANCE_LABEL: instance,
        **dict(config.labels),
    }
    metadata: JSON = {"name": name, "labels": labels}
    sim_gpu = config.simulated_gpu(name)
    if sim_gpu:
        # Positive and set by the kubelet itself: provenance never rests on the log.
        labels[SIM_GPU_LABEL] = label_safe(sim_gpu)
        metadata["annotations"] = {SIM_GPU_ANNOTATION: sim_gpu}
    taints = [{"key": k, "value": v, "effect": e} for k, v, e in config.taints]
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": metadata,
        "spec": {"taints": taints} if taints else {},
    }


def node_status(config: SimConfig, *, name: str, port: int) -> JSON:
    resources = {
        "cpu": "64",
        "memory": "512Gi",
        "pods": "110",
        "ephemeral-storage": "1Ti",
        config.gpu_resource(name): str(config.gpus_per_node),
    }
    now = now_rfc3339()
    condition_defaults = [
        ("MemoryPressure", "False", "KubeletHasSufficientMemory"),
        ("DiskPressure", "False", "KubeletHasNoDiskPressure"),
        ("PIDPressure", "False", "KubeletHasSufficientPID"),
        ("Ready", "True", "KubeletReady"),
    ]
    uname = platform.uname()
    return {
        "capacity": resources,
        "allocatable": resources,
        "addresses": [
            {"type": "InternalIP", "address": "127.0.0.1"},
            {"type": "Hostname", "address": name},
        ],
        "daemonEndpoints": {"kubeletEndpoint": {"Port": port}},
        "nodeInfo": {
            "machineID": f"sim-{name}",
            "systemUUID": f"sim-{name}",
            "bootID": f"sim-{os.getpid()}",
            "kernelVersion": uname.release,
            "osImage": "Glimmer simulated node",
            "containerRuntimeVersion": "glimmer-sim://0.1.0",
            "kubeletVersion": KUBELET_VERSION,
            "kubeProxyVersion": "",
            "operatingSystem": "linux",
            "architecture": "amd64",
        },
        "conditions": [
            {
                "type": kind,
                "status": status,
                "reason": reason,
                "message": "simulated by glimmer.sim",
                "lastHeartbeatTime": now,
                "lastTransitionTime": now,
            }
            for kind, status, reason in condition_defaults
        ],
    }


async def register(kube: Kube, config: SimConfig, *, name: str, instance: str, port: int) -> None:
    manifest = node_manifest(config, name=name, instance=instance)
    try:
        await kube.request("POST", "/api/v1/nodes", body=manifest)
    except ApiError as error:
        if error.status != 409:
            raise
        # A node left by an earlier simulator is taken over: labels refreshed, cordon kept.
        await kube.merge_patch(f"/api/v1/nodes/{name}", {"metadata": manifest["metadata"]})
    await kube.merge_patch(
        f"/api/v1/nodes/{name}/status", {"status": node_status(config, name=name, port=port)}
    )
    # Admission taints new nodes not-ready; the node-lifecycle controller (absent here)
    # would lift that once the node reports Ready, so the simulator does it.
    current = await kube.request("GET", f"/api/v1/nodes/{name}")
    taints = [
        t
        for t in current.get("spec", {}).get("taints") or []
        if t.get("key") not in _CONDITION_TAINTS
    ]
    await kube.merge_patch(f"/api/v1/nodes/{name}", {"spec": {"taints": taints or None}})


async def renew_lease(kube: Kube, *, name: str, config: SimConfig) -> None:
    path = f"/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/{name}"
    spec = {
        "holderIdentity": name,
        "leaseDurationSeconds": max(int(config.heartbeat_seconds * 4), 40),
        "renewTime": now_micro(),
    }
    try:
        await kube.merge_patch(path, {"spec": spec})
    except ApiError as error:
        if error.status != 404:
            raise
        await kube.request(
            "POST",
            "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases",
            body={
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {"name": name, "namespace": "kube-node-lease"},
                "spec": spec,
            },
        )


async def heartbeat(kube: Kube, *, names: list[str], config: SimConfig) -> None:
    """Renew every node's lease forever; a failed renewal is retried next period."""
    while True:
        for name in names:
            try:
                await renew_lease(kube, name=name, config=config)
            except (TimeoutError, ApiError, OSError):
                continue
        await asyncio.sleep(config.heartbeat_seconds)


async def delete(kube: Kube, *, name: str) -> None:
    for path in (
        f"/api/v1/nodes/{name}",
        f"/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/{name}",
    ):
        try:
            await kube.request("DELETE", path)
        except ApiError as error:
            if error.status != 404:
                raise
