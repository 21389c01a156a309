"""Sweep rules through the real apiserver and simulated kubelets: a foreign pod under a
predicted name (I18), a pod the apiserver refuses (I20), a status past the size budget
(I21) and a malformed nodeSelector (I22)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from glimmer.controllers.kit import names as kit_names
from glimmer.controllers.kit.names import RUNS
from glimmer.controllers.run.pods import PodRequest, RunRef, build_pod
from glimmer.controllers.run.reconciler import RunOptions
from glimmer.controllers.run.setup import run_controller
from glimmer.engine import (
    NODES,
    PODS,
    ApiServerClient,
    ClientOptions,
    EngineMetrics,
    Manager,
    ManagerOptions,
)
from glimmer.plan import PinnedPlan
from tests.integration.run.conftest import (
    Operator,
    apply_profile,
    create_run,
    custom,
    terminal_run,
    wait_for,
)

pytestmark = [pytest.mark.controlplane, pytest.mark.timeout(240)]

GATE = [{"metric": "bw", "comparison": "GreaterThanOrEqual", "value": "10"}]


async def running(kube: ApiServerClient, namespace: str, name: str) -> dict[str, Any]:
    async def check() -> dict[str, Any] | None:
        run = await kube.get(RUNS, name, namespace=namespace)
        return run if (run.get("status") or {}).get("phase") == "Running" else None

    result: dict[str, Any] = await wait_for(check, what=f"run {name} Running")
    return result


async def assert_released(kube: ApiServerClient, names: list[str]) -> None:
    for name in names:
        node = await kube.get(NODES, name)
        assert not node["spec"].get("unschedulable"), name
        assert kit_names.CORDON_OWNER not in (node["metadata"].get("annotations") or {}), name


async def test_I18_a_pod_precreated_under_the_predicted_name_on_another_node_is_foreign(
    operator: Operator, kube: ApiServerClient, namespace: str, sim_nodes: Any
) -> None:
    target, elsewhere = sim_nodes(count=2).names
    await apply_profile(kube, namespace, {"t": custom("echo bw=12", thresholds=GATE)})
    await create_run(kube, namespace, "r", [target], suspend=True)
    run = await running(kube, namespace, "r")
    # The attacker predicts the pod name and builds the pod the operator would, but
    # pins it to another node, where it prints a passing log.
    plan = PinnedPlan.from_annotation(run["metadata"]["annotations"][kit_names.PLAN_ANNOTATION])
    meta = run["metadata"]
    forged = build_pod(
        run=RunRef(namespace, meta["name"], meta["uid"]),
        request=PodRequest(
            test_index=0, test=plan.tests[0], node=target, attempt=1, image="example.com/custom:1"
        ),
    )
    forged["spec"]["nodeSelector"] = {kit_names.HOSTNAME_LABEL: elsewhere}
    name = forged["metadata"]["name"]
    claims = {k: forged["metadata"].pop(k) for k in ("labels", "ownerReferences")}
    await kube.create(PODS, forged, namespace=namespace)

    async def forged_ran() -> bool:
        pod = await kube.get(PODS, name, namespace=namespace)
        return (pod.get("status") or {}).get("phase") == "Succeeded"

    await wait_for(forged_ran, what="the forged pod to finish")
    # Only now does it claim the run: a finished pod with a passing log, waiting.
    await kube.patch(PODS, name, {"metadata": claims}, namespace=namespace)
    await kube.patch(RUNS, "r", {"spec": {"suspend": False}}, namespace=namespace)
    run = await terminal_run(kube, namespace, "r")
    [result] = run["status"]["results"]
    assert run["status"]["phase"] == "Error", result
    assert run["status"]["certifiesSilicon"] is False
    assert result["message"].startswith(f"foreign pod {name}"), result
    assert "its spec.nodeName " in result["message"]  # bound to the other node
    assert "its output was not read" in result["message"]
    assert not result.get("metrics")
    pods = (await kube.list(PODS, namespace=namespace))["items"]
    assert [p["metadata"]["name"] for p in pods] == [name]  # left in place, none of ours made
    await assert_released(kube, [target, elsewhere])


async def test_I20_a_pod_refused_for_a_missing_priority_class_is_error_and_released(
    operator: Operator, kube: ApiServerClient, namespace: str, sim_nodes: Any
) -> None:
    nodes = sim_nodes(count=1).names
    test = custom("echo bw=12", thresholds=GATE)
    test["runner"]["priorityClassName"] = "glimmer-missing-class"
    await apply_profile(kube, namespace, {"t": test})
    await create_run(kube, namespace, "r", nodes, retryOnErrorLimit=1)
    run = await terminal_run(kube, namespace, "r")
    [result] = run["status"]["results"]
    assert run["status"]["phase"] == "Error", result
    assert [a["phase"] for a in result["attempts"]] == ["Error", "Error"]  # retried once
    assert "the apiserver refused runner pod" in result["message"]
    assert "glimmer-missing-class" in result["message"], result["message"]
    assert not (await kube.list(PODS, namespace=namespace))["items"]
    assert not run["status"].get("cordonedNodes")
    await assert_released(kube, nodes)


@pytest.mark.parametrize(
    ("selector", "named"),
    [
        ({"pool": "gpu,zone=b"}, 'spec.target.nodeSelector["pool"]'),
        ({"pool": "a!=b"}, 'spec.target.nodeSelector["pool"]'),
        ({"a,b": "gpu"}, 'spec.target.nodeSelector["a,b"]'),
    ],
)
async def test_I22_a_malformed_node_selector_ends_the_run_error_naming_the_field(
    operator: Operator,
    kube: ApiServerClient,
    namespace: str,
    selector: dict[str, str],
    named: str,
) -> None:
    await apply_profile(kube, namespace, {"t": custom("echo bw=12")})
    await create_run(kube, namespace, "r", [], target={"nodeSelector": selector})
    run = await terminal_run(kube, namespace, "r", timeout=30)  # at once, no grace
    assert run["status"]["phase"] == "Error"
    [refusal] = run["status"]["results"]
    assert refusal["name"] == "resolve" and refusal["message"].startswith(named), refusal
    admitted = {c["type"]: c for c in run["status"]["conditions"]}["Admitted"]
    assert (admitted["status"], admitted["reason"]) == ("False", "InvalidNodeSelector")


async def inflate_settled_result(
    kube: ApiServerClient, namespace: str, name: str, *, test: str, size: int
) -> None:
    """As an admin (or an older operator) might leave it: one settled result whose
    message is ``size`` bytes; the operator keeps settled results verbatim."""

    async def settled() -> dict[str, Any] | None:
        run = await kube.get(RUNS, name, namespace=namespace)
        results = (run.get("status") or {}).get("results") or []
        done = [r for r in results if r["name"] == test and r["phase"] != "Running"]
        return run if done else None

    for _ in range(20):
        run = await wait_for(settled, what=f"{test} settled")
        for result in run["status"]["results"]:
            if result["name"] == test:
                result["message"] = "x" * size
        try:
            await kube.replace(RUNS, run, namespace=namespace, subresource="status")
            return
        except Exception:  # a conflict with the operator's own write: read and retry
            await asyncio.sleep(0.2)
    raise AssertionError("could not inflate the status")


async def test_I21_a_status_over_the_budget_ends_the_run_error_and_releases_its_node(
    operator: Operator, kube: ApiServerClient, namespace: str, sim_nodes: Any
) -> None:
    nodes = sim_nodes(count=1).names
    await apply_profile(
        kube, namespace, {"a": custom("echo bw=12"), "b": custom("sleep 4; echo bw=12")}
    )
    await create_run(kube, namespace, "r", nodes)
    await inflate_settled_result(kube, namespace, "r", test="a", size=1_200_000)
    run = await terminal_run(kube, namespace, "r")
    assert run["status"]["phase"] == "Error"
    condition = {c["type"]: c for c in run["status"]["conditions"]}["StatusSizeBudget"]
    assert (condition["status"], condition["reason"]) == ("False", "StatusTooLarge")
    assert "over the 1048576-byte budget" in condition["message"]
    assert [r["name"] for r in run["status"]["results"]] == ["a", "b"]  # no result dropped
    await assert_released(kube, nodes)


class BigBudgetOperator:
    """The manager with a status budget above etcd's limit, so the apiserver refuses."""

    def __init__(self, kubeconfig: str) -> None:
        self.kubeconfig = kubeconfig
        self._task: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self.client: ApiServerClient | None = None

    async def start(self) -> None:
        self.client = await ApiServerClient.connect(
            self.kubeconfig, options=ClientOptions(qps=200, burst=400)
        )
        manager = Manager(
            self.client,
            metrics=EngineMetrics(),
            options=ManagerOptions(
                leader_elect=False, metrics_bind_address="0", health_probe_bind_address="0"
            ),
            controllers=[
                run_controller(
                    client=self.client,
                    namespace=None,
                    operator_namespace="glimmer-system",
                    options=RunOptions(
                        operator_namespace="glimmer-system",
                        requeue_unstarted_seconds=2,
                        requeue_idle_seconds=5,
                        status_budget_bytes=8 << 20,
                    ),
                )
            ],
        )
        self._task = asyncio.create_task(manager.run(self._stop))

    async def stop(self) -> None:
        self._stop.set()
        if self._task is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
        if self.client is not None:
            await self.client.close()


@pytest_asyncio.fixture(loop_scope="function")
async def big_budget_operator(control_plane: Any, run_crds: None) -> AsyncIterator[None]:
    op = BigBudgetOperator(str(control_plane.kubeconfig_path))
    await op.start()
    try:
        yield None
    finally:
        await op.stop()


async def test_I21_a_status_write_the_apiserver_refuses_for_size_is_terminal_not_a_loop(
    big_budget_operator: None, kube: ApiServerClient, namespace: str, sim_nodes: Any
) -> None:
    nodes = sim_nodes(count=1).names
    # b's 2000 long-named metrics (~150 KB, stored once: on the result, its deciding
    # attempt marked) push the next write past etcd's 1.5 MiB request limit.
    many = f"sleep 4; seq 1 2000 | sed 's/.*/{'padding_' * 7}m&=1/'; echo bw=12"
    await apply_profile(kube, namespace, {"a": custom("echo bw=12"), "b": custom(many)})
    await create_run(kube, namespace, "r", nodes)
    await inflate_settled_result(kube, namespace, "r", test="a", size=1_500_000)
    run = await terminal_run(kube, namespace, "r")
    assert run["status"]["phase"] == "Error"
    condition = {c["type"]: c for c in run["status"]["conditions"]}["StatusSizeBudget"]
    assert "the apiserver refused" in condition["message"], condition
    assert [r["name"] for r in run["status"]["results"]] == ["a", "b"]
    await assert_released(kube, nodes)
