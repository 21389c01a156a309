"""I8: a pass decodes each result once, steps each unit with explicit
outcomes, and its log lines about a unit carry the unit's test and node."""

from __future__ import annotations

from typing import Any

import pytest
import structlog

from glimmer.controllers.kit.names import PROFILES
from glimmer.controllers.run import wire
from glimmer.controllers.run.evidence import Evidence
from tests.unit.controllers.run.harness import NS, Cluster, custom_test


async def test_I8_a_pass_decodes_each_result_once(monkeypatch: pytest.MonkeyPatch) -> None:
    cluster = Cluster(nodes=3)
    await cluster.setup(tests={"t": custom_test("echo")})
    # failFast: D7 asks for every result's state each pass, and must not re-parse them.
    await cluster.client.patch(PROFILES, "prof", {"spec": {"failFast": True}}, namespace=NS)
    await cluster.create_run(maxConcurrentNodes=3)
    await cluster.reconcile()
    for pod in cluster.live_pods():
        await cluster.kubelet(pod["metadata"]["name"], exit_code=None)
    await cluster.reconcile()  # three open results, each with its in-flight attempt
    decoded: list[str] = []
    original = wire.state_from_wire

    def counting(result: Any, *, required: bool) -> Any:
        decoded.append(str(result.get("nodes")))
        return original(result, required=required)

    monkeypatch.setattr(wire, "state_from_wire", counting)
    cluster.advance(1)
    await cluster.reconcile()  # nothing changes: every unit is still running
    assert decoded == [], decoded  # the run's index holds them, decoded from this JSON
    cluster.reconciler = cluster.new_reconciler()  # a restart: nothing kept
    await cluster.reconcile()
    assert sorted(decoded) == ["['n0']", "['n1']", "['n2']"], decoded


async def test_I8_log_context_names_the_unit_while_it_is_stepped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[dict[str, Any]] = []
    judge = Evidence.judge

    async def spy(self: Evidence, work: Any, test: Any, pod: Any) -> Any:
        seen.append(dict(structlog.contextvars.get_contextvars()))
        return await judge(self, work, test, pod)

    monkeypatch.setattr(Evidence, "judge", spy)
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": custom_test("echo")})
    await cluster.create_run()
    await cluster.reconcile()
    (pod,) = cluster.live_pods()
    await cluster.kubelet(pod["metadata"]["name"], exit_code=0, log="ok=1\n")
    await cluster.reconcile()
    assert seen and seen[0].get("test") == "t" and seen[0].get("node") == "n0", seen
    assert "test" not in structlog.contextvars.get_contextvars()  # unbound after the unit


async def test_I8_E16_a_live_pods_error_retry_waits_for_the_old_pod_to_go() -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": custom_test("echo")})
    await cluster.create_run(retryOnErrorLimit=1)
    await cluster.reconcile()
    (first,) = cluster.live_pods()
    await cluster.kubelet(first["metadata"]["name"], exit_code=None, waiting="InvalidImageName")
    await cluster.reconcile()  # attempt 1 settled Error, its pod deleted after the write
    names = [p["metadata"]["name"] for p in cluster.pods()]
    assert names == [], names  # the retry is not created beside the old pod
    await cluster.reconcile()
    (second,) = cluster.live_pods()
    assert second["metadata"]["labels"]["burnin.glimmer.ai/attempt"] == "2"
