"""A FakeClient cluster plus a hand-driven kubelet, for the run reconciler's unit tests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from glimmer.controllers.kit import names
from glimmer.controllers.kit.names import PROFILES, RUNS, TESTS
from glimmer.controllers.run.delivery import NoDelivery
from glimmer.controllers.run.reconciler import RunOptions, RunReconciler
from glimmer.engine import NODES, PODS, FakeClient, Result

NS = "team"


class Cluster:
    def __init__(self, nodes: int = 3) -> None:
        self.client = FakeClient()
        self.clock = datetime.now(UTC).replace(microsecond=0)
        self.delivered = NoDelivery()
        self.reconciler = self.new_reconciler()
        self.node_names = [f"n{i}" for i in range(nodes)]

    def new_reconciler(self) -> RunReconciler:
        return RunReconciler(
            client=self.client,
            options=RunOptions(operator_namespace="glimmer-system", image_pull_grace_seconds=5),
            deliverer=self.delivered,
            now=lambda: self.clock,
        )

    def advance(self, seconds: float) -> None:
        self.clock += timedelta(seconds=seconds)

    async def setup(
        self, *, tests: dict[str, dict[str, Any]], unschedulable: tuple[str, ...] = ()
    ) -> None:
        for name in self.node_names:
            await self.client.create(
                NODES,
                {
                    "metadata": {"name": name, "labels": {"pool": "gpu"}},
                    "spec": {"unschedulable": True} if name in unschedulable else {},
                    "status": {
                        "nodeInfo": {
                            "kernelVersion": "6.8",
                            "osImage": "x",
                            "architecture": "amd64",
                        }
                    },
                },
            )
        await self.add_profile(tests, namespace=NS)

    async def add_profile(self, tests: dict[str, dict[str, Any]], *, namespace: str) -> None:
        for name, spec in tests.items():
            await self.client.create(
                TESTS, {"metadata": {"name": name}, "spec": spec}, namespace=namespace
            )
        await self.client.create(
            PROFILES,
            {"metadata": {"name": "prof"}, "spec": {"tests": [{"testRef": n} for n in tests]}},
            namespace=namespace,
        )

    async def create_run(
        self, name: str = "r1", namespace: str = NS, **spec: Any
    ) -> dict[str, Any]:
        body = {
            "metadata": {"name": name},
            "spec": {"profileRef": "prof", "target": {"nodeNames": list(self.node_names)}, **spec},
        }
        return await self.client.create(RUNS, body, namespace=namespace)

    async def reconcile(self, name: str = "r1", namespace: str = NS) -> Result:
        return await self.reconciler.reconcile(f"{namespace}/{name}")

    async def run(self, name: str = "r1", namespace: str = NS) -> dict[str, Any]:
        return await self.client.get(RUNS, name, namespace=namespace)

    def pods(self) -> list[dict[str, Any]]:
        return self.client.objects(PODS)

    def node(self, name: str) -> dict[str, Any]:
        return next(n for n in self.client.objects(NODES) if n["metadata"]["name"] == name)

    async def kubelet(
        self,
        pod: str,
        *,
        exit_code: int | None,
        log: str = "",
        reason: str = "",
        namespace: str = NS,
        waiting: str = "",
    ) -> None:
        """Move a pod to running (exit_code None) or terminated, with its log."""
        stamp = self.clock.strftime("%Y-%m-%dT%H:%M:%SZ")
        if waiting:
            state: dict[str, Any] = {"waiting": {"reason": waiting, "message": "pull failed"}}
            status: dict[str, Any] = {"phase": "Pending"}
        elif exit_code is None:
            state = {"running": {"startedAt": stamp}}
            status = {"phase": "Running", "startTime": stamp}
        else:
            state = {
                "terminated": {
                    "exitCode": exit_code,
                    "reason": reason or "Completed",
                    "startedAt": stamp,
                    "finishedAt": stamp,
                }
            }
            status = {"phase": "Succeeded" if exit_code == 0 else "Failed", "startTime": stamp}
        status["containerStatuses"] = [{"name": names.RUNNER_CONTAINER, "state": state}]
        await self.client.patch(
            PODS, pod, {"status": status}, namespace=namespace, subresource="status"
        )
        self.client.set_pod_log(pod, namespace=namespace, text=log)

    def live_pods(self) -> list[dict[str, Any]]:
        return [
            p
            for p in self.pods()
            if (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
        ]


def custom_test(command: str, **extra: Any) -> dict[str, Any]:
    return {
        "kind": "custom",
        "scope": "Node",
        "durationSeconds": 5,
        "runner": {"image": "example.com/custom:1", "command": ["sh", "-c", command]},
        **extra,
    }
