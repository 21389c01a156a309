"""The run controller's node and pod caches use the compact ingest transforms, and every
field a reconciler reads survives them (I9: a fleet's caches fit the manager)."""

from __future__ import annotations

import copy
import pathlib
from typing import Any

from glimmer.controllers.kit import cordon
from glimmer.controllers.kit import names as kit_names
from glimmer.controllers.kit.indexes import node_watch, nodes_by_cordon_owner, pods_by_run
from glimmer.controllers.kit.names import FINGERPRINTS, RUNS
from glimmer.controllers.kit.ref import RunRef
from glimmer.controllers.run import podstate
from glimmer.controllers.run.setup import run_controller
from glimmer.engine import (
    NODES,
    PODS,
    FakeClient,
    compact,
    compact_node,
    compact_pod,
    strip_managed_fields,
)
from glimmer.engine.transforms import NODE_STATUS_DROPPED
from tests.unit.controllers.run.harness import Cluster, custom_test

MANAGED = [{"manager": "kubelet", "operation": "Update", "fieldsV1": {"f:status": {}}}]


def test_nodes_and_runner_pods_are_cached_compact_runs_stripped() -> None:
    client = FakeClient()
    run = run_controller(client=client, namespace=None, operator_namespace="x")  # fmt: skip
    by_resource = {w.resource: w.transform for w in (*run.watches, node_watch())}
    assert by_resource == {RUNS: strip_managed_fields, PODS: compact_pod,
                           NODES: cordon.compact_cordon_node, FINGERPRINTS: compact}  # fmt: skip


async def _runner_pod() -> dict[str, Any]:
    """A runner pod as the run controller builds it, then run and ended by a kubelet."""
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": custom_test("echo")})
    await cluster.create_run()
    await cluster.reconcile()
    (pod,) = cluster.pods()
    await cluster.kubelet(pod["metadata"]["name"], exit_code=3, reason="Error")
    (pod,) = cluster.pods()
    pod["metadata"]["managedFields"] = copy.deepcopy(MANAGED)
    pod["status"]["conditions"] = [
        {"type": "PodScheduled", "status": "False", "message": "0/1 nodes are available"}
    ]
    return pod


async def test_compact_pod_keeps_every_field_a_reconciler_reads() -> None:
    pod = await _runner_pod()
    cached = compact_pod(copy.deepcopy(pod))
    expected = copy.deepcopy(pod)
    del expected["metadata"]["managedFields"]
    assert cached == expected  # spec (compared with the builder's, E13), status, owners
    for read in (podstate.pinned_node, podstate.terminated, podstate.started_at,
                 podstate.finished_at, podstate.waiting, podstate.scheduler_message,
                 podstate.termination, podstate.exit_code, podstate.live):  # fmt: skip
        assert read(cached) == read(pod), read
    assert pods_by_run(cached) == pods_by_run(pod)
    uid = pod["metadata"]["ownerReferences"][0]["uid"]
    assert podstate.owned_by(cached, uid)


def _node() -> dict[str, Any]:
    stamp = RunRef("team", "r1", "uid-1")
    return {
        "metadata": {
            "name": "n0",
            "uid": "node-uid",
            "resourceVersion": "42",
            "labels": {"pool": "gpu"},
            "annotations": {
                kit_names.CORDON_OWNER: stamp.render(),
                kit_names.PRIOR_UNSCHEDULABLE: "true",
            },
            "managedFields": copy.deepcopy(MANAGED),
        },
        "spec": {"unschedulable": True, "taints": [{"key": "k", "effect": "NoSchedule"}]},
        "status": {
            "nodeInfo": {"kernelVersion": "6.8", "osImage": "x", "architecture": "amd64"},
            "conditions": [{"type": "Ready", "status": "True"}],
            "capacity": {"nvidia.com/gpu": "8"},
            "allocatable": {"nvidia.com/gpu": "8"},
            "images": [{"names": ["ghcr.io/x/y:1"], "sizeBytes": 1}],
            "volumesInUse": ["v"],
            "volumesAttached": [{"name": "v", "devicePath": "/d"}],
        },
    }


def test_compact_node_keeps_every_field_a_reconciler_reads() -> None:
    node = _node()
    cached = compact_node(copy.deepcopy(node))
    expected = copy.deepcopy(node)
    del expected["metadata"]["managedFields"]
    for field in NODE_STATUS_DROPPED:
        del expected["status"][field]
    assert cached == expected
    stamp = RunRef("team", "r1", "uid-1")
    assert cordon.owner_of(cached) == cordon.owner_of(node) == stamp
    assert cordon.prior_for_capture(cached) == cordon.prior_for_capture(node)
    assert cordon.release_patch(cached, stamp=stamp, prior=None) == cordon.release_patch(
        node, stamp=stamp, prior=None
    )
    assert cordon.cordon_patches(cached, stamp=stamp, prior=None, heat_until=None) == (
        cordon.cordon_patches(node, stamp=stamp, prior=None, heat_until=None)
    )
    assert nodes_by_cordon_owner(cached) == nodes_by_cordon_owner(node)


def test_no_reconciler_reads_a_field_the_compact_transforms_drop() -> None:
    """What the transforms drop stays unread: a reader of one of these fields would see
    it missing from every cached object (read it live, or change the transform)."""
    root = pathlib.Path(__file__).resolve().parents[4] / "glimmer" / "controllers"
    dropped = ("managedFields", *NODE_STATUS_DROPPED)
    # The node cache keeps of managedFields who owns spec.unschedulable (E12 reads it,
    # through the node view): cordon.py's own transform, compact_cordon_node, keeps it.
    # The status write leaves them out of the body it sends (a removal, never a read).
    kept = {
        ("kit/cordon.py", "managedFields"),
        ("kit/core_view.py", "managedFields"),
        ("kit/checkpoint.py", "managedFields"),
    }
    readers = [
        f"{path.relative_to(root)}: {field}"
        for path in root.rglob("*.py")
        for field in dropped
        if (str(path.relative_to(root)), field) not in kept
        and (f'"{field}"' in path.read_text() or f"'{field}'" in path.read_text())
    ]
    assert readers == []
