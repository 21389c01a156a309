"""NodeFingerprints against a real apiserver, with the operator as it ships (embedded)."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import uuid
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

import pytest

from glimmer.api import format_time, parse_time
from glimmer.controllers.fingerprint import VERDICT_LABEL, VERDICT_METRIC, vendor_of
from glimmer.controllers.fingerprint.verdict import PLAN_ANNOTATION
from glimmer.controllers.kit.names import FINGERPRINTS, RUNS
from glimmer.engine import (
    EVENTS,
    NAMESPACES,
    NODES,
    ApiError,
    ApiServerClient,
    is_already_exists,
    is_conflict,
)
from glimmer.plan import PinnedPlan, PlannedTest
from glimmer.plan.images import resolve_image
from glimmer.testing import EmbeddedOperator
from tests.integration.fingerprint.conftest import NVIDIA, OPS, SuppressNotFound

pytestmark = pytest.mark.controlplane


async def eventually(check: Callable[[], Awaitable[Any]], *, timeout: float = 60.0) -> Any:
    """Poll ``check`` until it returns something truthy (the operator acts asynchronously)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    last: Any = None
    while loop.time() < deadline:
        try:
            last = await check()
        except (ApiError, KeyError, StopIteration, TypeError):
            last = None
        if last:
            return last
        await asyncio.sleep(0.2)
    raise TimeoutError(f"condition not reached in {timeout}s (last: {last!r})")


async def fingerprint(kube: ApiServerClient, node: str) -> dict[str, Any]:
    return await kube.get(FINGERPRINTS, node, namespace=OPS)


def cond(fp: dict[str, Any], type_: str) -> dict[str, Any]:
    return next(c for c in fp["status"]["conditions"] if c["type"] == type_)


async def captured(kube: ApiServerClient, node: str) -> dict[str, Any] | None:
    fp = await fingerprint(kube, node)
    return fp if (fp.get("status") or {}).get("digest") else None


async def drift_events(kube: ApiServerClient, node: str) -> list[dict[str, Any]]:
    items = (await kube.list(EVENTS, namespace=OPS))["items"]
    return [e for e in items if e.get("reason") == "HardwareDrift"
            and e["involvedObject"].get("name") == node]  # fmt: skip


async def test_K1_every_node_gets_a_fingerprint_whose_digest_survives_a_restart(
    control_plane: Any, kube: ApiServerClient, nodes: Callable[..., Awaitable[list[str]]]
) -> None:
    names = await nodes(3)
    async with EmbeddedOperator(kubeconfig=control_plane.kubeconfig_path) as operator:
        first = {n: await eventually(functools.partial(captured, kube, n)) for n in names}
        reconciles = operator.metrics.registry.get_sample_value(
            "controller_runtime_reconcile_total",
            {"controller": "nodefingerprint", "result": "requeue_after"},
        )
        assert reconciles is not None and reconciles >= 3
    async with EmbeddedOperator(kubeconfig=control_plane.kubeconfig_path) as operator:

        async def passes() -> bool:
            value = operator.metrics.registry.get_sample_value(
                "controller_runtime_reconcile_total",
                {"controller": "nodefingerprint", "result": "requeue_after"},
            )
            return value is not None and value >= len(names)

        await eventually(passes)
        for name in names:
            fp = await fingerprint(kube, name)
            assert fp["status"]["digest"] == first[name]["status"]["digest"]
            assert fp["status"]["capturedAt"] == first[name]["status"]["capturedAt"]
            assert cond(fp, "Drifted")["status"] == "False"
            assert await drift_events(kube, name) == []


async def test_K5_a_gpu_label_change_sets_drifted_an_event_and_expires_the_verdict(
    control_plane: Any,
    kube: ApiServerClient,
    namespace: str,
    nodes: Callable[..., Awaitable[list[str]]],
) -> None:
    (name,) = await nodes(1)
    async with EmbeddedOperator(kubeconfig=control_plane.kubeconfig_path) as operator:
        fp = await eventually(lambda: captured(kube, name))
        baseline = parse_time(fp["status"]["capturedAt"])
        # A finished run that judged the node on this hardware (written as the run
        # controller would leave it; read-only to the fingerprint controller).
        plan = PinnedPlan(
            targets=(name,),
            tests=(PlannedTest(name="burn", required=True, spec={"kind": "gpu-burn"}),),
        ).to_annotation()
        run = await kube.create(RUNS, {
            "apiVersion": "burnin.glimmer.ai/v1alpha1", "kind": "BurnInRun",
            "metadata": {"name": "acceptance", "annotations": {PLAN_ANNOTATION: plan}},
            "spec": {"profileRef": "p", "target": {"nodeNames": [name]}},
        }, namespace=namespace)  # fmt: skip
        started = baseline + timedelta(seconds=1)
        finished = {
            "phase": "Passed", "startedAt": format_time(started),
            "finishedAt": format_time(started + timedelta(seconds=1)),
            "results": [{"name": "burn", "kind": "gpu-burn", "phase": "Passed", "nodes": [name],
                         "startedAt": format_time(started), "provenance": "silicon"}],
        }  # fmt: skip
        # The running operator reconciles the new run too (finalizer, first
        # status), so the write is retried on the newer version, as a client would.
        while True:
            run["status"] = finished
            try:
                await kube.replace(RUNS, run, namespace=namespace, subresource="status")
                break
            except ApiError as err:
                if not is_conflict(err):
                    raise
                run = await kube.get(RUNS, "acceptance", namespace=namespace)

        async def labelled(value: str) -> bool:
            node = await kube.get(NODES, name)
            return bool(node["metadata"]["labels"].get(VERDICT_LABEL) == value)

        await eventually(lambda: labelled("Passed"))
        assert cond(await fingerprint(kube, name), "VerdictCurrent")["status"] == "True"
        # The operator's own label, and one named like ours, are not hardware.
        await kube.patch(NODES, name, {"metadata": {"labels": {"example.com/burnin-note": "x"}}})
        await asyncio.sleep(1.0)
        fp = await fingerprint(kube, name)
        assert cond(fp, "Drifted")["status"] == "False"

        await kube.patch(NODES, name, {"metadata": {"labels": {"nvidia.com/gpu.count": "7"}}})

        async def drifted() -> dict[str, Any] | None:
            fp = await fingerprint(kube, name)
            return fp if cond(fp, "Drifted")["status"] == "True" else None

        fp = await eventually(drifted)
        assert "nvidia.com/gpu.count 8 -> 7" in cond(fp, "Drifted")["message"]
        current = cond(fp, "VerdictCurrent")
        assert (current["status"], current["reason"]) == ("False", "FingerprintChanged")
        assert "gpu.count" in current["message"]
        await eventually(lambda: labelled("Expired"))
        assert len(await eventually(lambda: drift_events(kube, name))) == 1
        value = operator.metrics.registry.get_sample_value(
            VERDICT_METRIC, {"node": name, "state": "Expired"}
        )
        assert value == 1.0


async def test_K7_a_node_joining_a_running_operator_is_baselined_without_a_warning(
    control_plane: Any, kube: ApiServerClient, nodes: Callable[..., Awaitable[list[str]]]
) -> None:
    """As a kubelet registers: the Node first, nodeInfo and the GPU labels after; the
    operator is already running, so it captures the half-reported node first."""
    async with EmbeddedOperator(kubeconfig=control_plane.kubeconfig_path):
        name = f"fp-{uuid.uuid4().hex[:5]}-join"
        bare = {"name": name, "labels": {"kubernetes.io/arch": "amd64"}}
        await kube.create(NODES, {"metadata": bare})
        try:
            first = await eventually(lambda: captured(kube, name))
            # Every write of the fingerprint from here on, so the one that moved the
            # digest is judged, not whatever a later no-change pass wrote over it.
            writes: list[dict[str, Any]] = []

            async def record() -> None:
                stream = kube.watch(FINGERPRINTS, namespace=OPS,
                                    field_selector=f"metadata.name={name}",
                                    resource_version=first["metadata"]["resourceVersion"],
                                    timeout_seconds=120)  # fmt: skip
                async for event in stream:
                    writes.append(event.object)

            watching = asyncio.create_task(record())
            node = await kube.get(NODES, name)
            node["metadata"]["labels"].update(NVIDIA)
            node = await kube.replace(NODES, node)
            node["status"] = {"nodeInfo": {"osImage": "Ubuntu 22.04", "kernelVersion": "6.5.0",
                                           "kubeletVersion": "v1.36.0"}}  # fmt: skip
            await kube.replace(NODES, node, subresource="status")

            async def settled() -> dict[str, Any] | None:
                for fp in writes:
                    status = fp.get("status") or {}
                    if status.get("digest") != first["status"]["digest"] and status.get("gpus"):
                        return fp
                return None

            try:
                fp = await eventually(settled)
            finally:
                watching.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await watching
            drifted = cond(fp, "Drifted")
            assert (drifted["status"], drifted["reason"]) == ("False", "BaselineCaptured")
            await asyncio.sleep(0.5)  # an Event would be written after the status
            assert await drift_events(kube, name) == []
        finally:
            with SuppressNotFound():
                await kube.delete(NODES, name)
            with SuppressNotFound():
                await kube.delete(FINGERPRINTS, name, namespace=OPS)


async def test_E14_an_amd_labelled_node_resolves_the_rocm_image(
    control_plane: Any, kube: ApiServerClient, nodes: Callable[..., Awaitable[list[str]]]
) -> None:
    (name,) = await nodes(1, labels={"amd.com/gpu.product": "MI300X", "amd.com/gpu.count": "8"})
    async with EmbeddedOperator(kubeconfig=control_plane.kubeconfig_path):
        fp = await eventually(lambda: captured(kube, name))
    runner = {"imagesByVendor": [{"vendor": "amd", "image": "registry.example/gpu-burn-rocm:1"}]}
    vendor = vendor_of(fp, node=name)
    assert vendor == "amd"
    assert resolve_image(kind="gpu-burn", runner=runner, node_vendor=vendor) == (
        "registry.example/gpu-burn-rocm:1"
    )


async def test_K1_kwok_nodes_all_get_fingerprints(
    control_plane: Any, kube: ApiServerClient, kwok_nodes: Callable[..., list[str]]
) -> None:
    try:
        await kube.create(NAMESPACES, {"metadata": {"name": OPS}})
    except ApiError as err:
        if not is_already_exists(err):
            raise
    names = kwok_nodes(40)
    try:
        async with EmbeddedOperator(kubeconfig=control_plane.kubeconfig_path):

            async def all_captured() -> bool:
                items = (await kube.list(FINGERPRINTS, namespace=OPS))["items"]
                done = {
                    i["spec"]["nodeName"] for i in items if (i.get("status") or {}).get("digest")
                }
                return set(names) <= done

            await eventually(all_captured, timeout=120)
        fp = await fingerprint(kube, names[0])
        assert [g["vendor"] for g in fp["status"]["gpus"]] == ["nvidia"] * 8
    finally:
        for name in names:
            with SuppressNotFound():
                await kube.delete(FINGERPRINTS, name, namespace=OPS)
