"""Cross-run and cross-restart rules on the real apiserver: E3, E10, E12, E21, H."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from glimmer.controllers.kit import names as kit_names
from glimmer.controllers.kit.names import PROFILES, RUNS, TESTS
from glimmer.engine import NODES, PODS, ApiServerClient
from tests.integration.run.conftest import (
    Operator,
    apply_profile,
    create_run,
    custom,
    terminal_run,
    wait_for,
)
from tests.integration.run.test_fabric_cluster_runs import fingerprints

__all__ = ["fingerprints"]  # the fixture, used by name

pytestmark = [pytest.mark.controlplane, pytest.mark.timeout(300)]

REPO = Path(__file__).resolve().parents[3]


class PodCreations:
    """Every pod object created in a namespace, by uid, from a watch opened before any.

    The apiserver forces names unique among the pods that exist at one moment, so a list
    taken at the end can never show a pod that was deleted and created again under the
    same name. Creations are seen as they happen: each new uid is one create.
    """

    def __init__(self) -> None:
        self.names_by_uid: dict[str, str] = {}

    def created_more_than_once(self) -> list[str]:
        names = list(self.names_by_uid.values())
        return sorted({n for n in names if names.count(n) > 1})


@contextlib.asynccontextmanager
async def recording_pod_creations(
    kube: ApiServerClient, namespace: str
) -> AsyncIterator[PodCreations]:
    creations = PodCreations()
    start = (await kube.list(PODS, namespace=namespace))["metadata"]["resourceVersion"]

    async def record() -> None:
        async for event in kube.watch(PODS, namespace=namespace, resource_version=start):
            if event.type == "ERROR":
                raise AssertionError(f"pod watch ended: {event.object}")
            meta = event.object.get("metadata") or {}
            if event.type in ("ADDED", "MODIFIED", "DELETED") and meta.get("uid"):
                creations.names_by_uid.setdefault(str(meta["uid"]), str(meta["name"]))

    task = asyncio.create_task(record())
    try:
        yield creations
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def test_node_acceptance_sample_reaches_a_verdict_on_three_simulated_nodes(
    operator: Operator,
    kube: ApiServerClient,
    namespace: str,
    sim_nodes: Any,
    fingerprints: None,
) -> None:
    nodes = sim_nodes(count=3, extra_args=["--sim-gpu=h200"])
    documents = list(yaml.safe_load_all((REPO / "glimmer/examples/acceptance.yaml").read_text()))
    for doc in documents:
        if doc["kind"] == "BurnInTest":
            # Keep the test fast: simulated runners run on a virtual clock, and only
            # memory-stress (real DIMMs) spends real time.
            real_time = doc["spec"]["kind"] == "memory-stress"
            doc["spec"]["durationSeconds"] = 3 if real_time else 10
            await kube.create(TESTS, doc, namespace=namespace)
        elif doc["kind"] == "BurnInProfile":
            doc["spec"].pop("sinks", None)
            await kube.create(PROFILES, doc, namespace=namespace)
    profile = next(d for d in documents if d["kind"] == "BurnInProfile")["metadata"]["name"]
    await kube.create(
        RUNS,
        {
            "apiVersion": "burnin.glimmer.ai/v1alpha1",
            "kind": "BurnInRun",
            "metadata": {"name": "acceptance"},
            "spec": {
                "profileRef": profile,
                "target": {"nodeNames": nodes.names},
                "maxConcurrentNodes": 3,
            },
        },
        namespace=namespace,
    )
    run = await terminal_run(kube, namespace, "acceptance", timeout=240)
    status = run["status"]
    assert status["phase"] == "Passed", [(r["name"], r["message"]) for r in status["results"]]
    tests = {d["metadata"]["name"] for d in documents if d["kind"] == "BurnInTest"}
    # gemm-correctness runs as its one bf16 variant cell.
    planned = tests - {"gemm-correctness"} | {"gemm-correctness-bf16"}
    assert {r["name"] for r in status["results"]} == planned
    assert len(status["results"]) == 3 * len(planned)
    # compute-smoke is the FP4 test and an H200 has none: the declared skip, not required.
    smoke = [r for r in status["results"] if r["kind"] == "compute-smoke"]
    assert {r["phase"] for r in smoke} == {"Skipped"}
    assert all("has no FP4" in r["message"] for r in smoke)
    # A simulated GPU proves the plumbing, never the part: provenance says so.
    assert status["provenance"] == "sim" and status["certifiesSilicon"] is False
    for result in status["results"]:
        assert result["attempts"][-1]["provenance"] == result["provenance"]
        hardware = result["kind"] != "memory-stress" and result["phase"] == "Passed"
        assert result.get("suspect", False) is hardware, result
    assert all(r["attempts"] and r["attempts"][-1].get("podName") for r in status["results"])
    for name in nodes.names:
        node = await kube.get(NODES, name)
        assert not node["spec"].get("unschedulable")


async def test_E3_targets_busy_refuses_a_run_in_another_namespace_unless_forced(
    operator: Operator, kube: ApiServerClient, namespace: str, sim_nodes: Any, control_plane: Any
) -> None:
    nodes = sim_nodes(count=1)
    other = f"{namespace}-b"
    control_plane.kubectl("create", "namespace", other)
    try:
        for ns in (namespace, other):
            await apply_profile(kube, ns, {"t": custom("sleep 4; echo ok=1")})
        await create_run(kube, namespace, "holder", nodes.names)

        async def running() -> bool:
            run = await kube.get(RUNS, "holder", namespace=namespace)
            return (run.get("status") or {}).get("phase") == "Running"

        await wait_for(running, what="holder running")
        await create_run(kube, other, "late", nodes.names)
        late = await terminal_run(kube, other, "late")
        assert late["status"]["phase"] == "Error"
        [refusal] = late["status"]["results"]
        assert (refusal["name"], refusal["kind"]) == ("admission", "")
        assert f"{namespace}/holder" in refusal["message"]
        await create_run(kube, other, "forced", nodes.names, force=True)
        forced = await terminal_run(kube, other, "forced")
        conditions = {c["type"]: c for c in forced["status"]["conditions"]}
        assert conditions["Admitted"]["reason"] == "AdmittedByForce"
        holder = await terminal_run(kube, namespace, "holder")
        assert holder["status"]["phase"] == "Passed"
    finally:
        control_plane.kubectl("delete", "namespace", other, "--wait=false", check=False)


async def test_E12_E21_an_admin_cordon_survives_the_run_and_an_orphan_stamp_is_reaped(
    operator: Operator, kube: ApiServerClient, namespace: str, sim_nodes: Any
) -> None:
    nodes = sim_nodes(count=2)
    admin, spare = nodes.names
    await kube.patch(NODES, admin, {"spec": {"unschedulable": True}})
    await apply_profile(kube, namespace, {"t": custom("echo ok=1")})
    await create_run(kube, namespace, "r", [admin])
    run = await terminal_run(kube, namespace, "r")
    assert run["status"]["phase"] == "Passed"
    assert run["status"]["priorUnschedulable"] == {admin: True}
    node = await kube.get(NODES, admin)
    assert node["spec"].get("unschedulable") is True
    assert kit_names.CORDON_OWNER not in (node["metadata"].get("annotations") or {})
    # A stamp naming a run that no longer exists is removed and the node restored.
    await kube.patch(
        NODES,
        spare,
        {
            "metadata": {
                "annotations": {
                    kit_names.CORDON_OWNER: f"{namespace}/gone/0000-uid",
                    kit_names.PRIOR_UNSCHEDULABLE: "false",
                }
            },
            "spec": {"unschedulable": True},
        },
    )

    async def reaped() -> bool:
        node = await kube.get(NODES, spare)
        notes = node["metadata"].get("annotations") or {}
        return kit_names.CORDON_OWNER not in notes and not node["spec"].get("unschedulable")

    await wait_for(reaped, what="orphan stamp reaped")


async def test_H_a_manager_restarted_mid_run_reaches_the_verdict_recreating_no_pod(
    operator: Operator, kube: ApiServerClient, namespace: str, sim_nodes: Any
) -> None:
    nodes = sim_nodes(count=3)
    await apply_profile(
        kube,
        namespace,
        {
            "a": custom("sleep 3; echo bw=12"),
            "b": custom("sleep 2; echo bw=13"),
        },
    )
    async with recording_pod_creations(kube, namespace) as creations:
        await create_run(kube, namespace, "r", nodes.names)

        async def some_pod_running() -> bool:
            pods = (await kube.list(PODS, namespace=namespace))["items"]
            return any((p.get("status") or {}).get("phase") == "Running" for p in pods)

        await wait_for(some_pod_running, what="a running pod")
        await operator.stop(crash=True)
        await asyncio.sleep(1)
        await operator.start()
        run = await terminal_run(kube, namespace, "r", timeout=120)
        assert run["status"]["phase"] == "Passed", run["status"]["results"]
        assert run["status"]["passed"] == 6
        pods = (await kube.list(PODS, namespace=namespace))["items"]

        async def every_pod_recorded() -> bool:
            return {p["metadata"]["uid"] for p in pods} <= creations.names_by_uid.keys()

        await wait_for(every_pod_recorded, what="the watch to see every pod")
    # One pod object per unit: 6 creates of 6 distinct names, none deleted and created
    # again under its name across the restart.
    assert creations.created_more_than_once() == []
    assert len(creations.names_by_uid) == 6, creations.names_by_uid
    assert sorted(creations.names_by_uid.values()) == sorted(p["metadata"]["name"] for p in pods)
    attempts = [a for r in run["status"]["results"] for a in r["attempts"]]
    assert all(a["attempt"] == 1 for a in attempts)
    for name in nodes.names:
        node = await kube.get(NODES, name)
        assert not node["spec"].get("unschedulable")
        assert kit_names.CORDON_OWNER not in (node["metadata"].get("annotations") or {})
