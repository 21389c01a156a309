"""Fan-out: a pass's independent requests go out together, bounded, and the logs the
walk judges are read ahead; a foreign pod is never read ahead either (I18)."""

from __future__ import annotations

import asyncio
import copy
import functools
from typing import Any

import pytest

from glimmer.controllers.kit import checkpoint
from glimmer.controllers.kit import names as kit_names
from glimmer.controllers.run.evidence import Evidence
from glimmer.controllers.run.sweep import FANOUT, fan_out
from glimmer.engine import PODS
from tests.unit.controllers.run.harness import NS, Cluster, custom_test


async def replace_with_foreign_pod(cluster: Cluster, ours: dict[str, Any]) -> None:
    """19.8's setup: our pod replaced, under its name, by one running another image,
    which then exits 0 with a log."""
    name = ours["metadata"]["name"]
    foreign = copy.deepcopy(ours)
    foreign["spec"]["containers"][0]["image"] = "example.com/other:1"  # not this test's
    for key in ("uid", "resourceVersion", "creationTimestamp"):
        foreign["metadata"].pop(key, None)
    await cluster.client.delete(PODS, name, namespace=NS)
    await cluster.client.create(PODS, foreign, namespace=NS)
    await cluster.kubelet(name, exit_code=0, log="ok=1\n")


async def test_fan_out_runs_every_call_never_more_than_its_limit_at_once() -> None:
    running = 0
    peak = 0
    done: list[int] = []
    release = asyncio.Event()

    async def call(i: int) -> None:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await release.wait()
        running -= 1
        done.append(i)

    calls = [functools.partial(call, i) for i in range(3 * FANOUT)]
    task = asyncio.ensure_future(fan_out(calls))
    while peak < FANOUT:
        await asyncio.sleep(0)
    for _ in range(10):
        await asyncio.sleep(0)
    assert running == FANOUT  # the rest wait for a slot
    release.set()
    await task
    assert sorted(done) == list(range(3 * FANOUT)) and peak == FANOUT


async def test_fan_out_raises_only_once_every_call_has_ended() -> None:
    ended: list[str] = []

    async def fails() -> None:
        ended.append("fails")
        raise RuntimeError("refused")

    async def slow() -> None:
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        ended.append("slow")

    with pytest.raises(RuntimeError):
        await fan_out([fails, slow])
    assert sorted(ended) == ["fails", "slow"]


async def test_I18_a_foreign_pod_under_our_name_is_never_read_ahead(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    read_ahead: list[str] = []
    original = Evidence.read_ahead

    def spy(self: Evidence, work: Any, test: Any, pod: dict[str, Any], **kwargs: Any) -> None:
        read_ahead.append(pod["metadata"]["name"])
        original(self, work, test, pod, **kwargs)

    monkeypatch.setattr(Evidence, "read_ahead", spy)
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": custom_test("echo")})
    await cluster.create_run()
    await cluster.reconcile()
    (ours,) = cluster.pods()
    await replace_with_foreign_pod(cluster, ours)
    mark = len(cluster.client.requests)
    await cluster.reconcile()
    assert [r for r in cluster.client.requests[mark:] if r.verb == "log"] == []
    assert read_ahead == []
    (result,) = (await cluster.run())["status"]["results"]
    assert result["phase"] == "Error" and "foreign pod" in result["message"], result
    assert kit_names.RUN_LABEL in cluster.pods()[0]["metadata"]["labels"]  # left where it is


async def test_a_pass_harvests_every_finished_pod_and_releases_every_node(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    read_ahead: list[str] = []
    original = Evidence.read_ahead

    def spy(self: Evidence, work: Any, test: Any, pod: dict[str, Any], **kwargs: Any) -> None:
        read_ahead.append(pod["metadata"]["name"])
        original(self, work, test, pod, **kwargs)

    monkeypatch.setattr(Evidence, "read_ahead", spy)
    cluster = Cluster(nodes=5)
    await cluster.setup(tests={"t": custom_test("echo")})
    await cluster.create_run(maxConcurrentNodes=5)
    await cluster.reconcile()
    for pod in cluster.pods():
        await cluster.kubelet(pod["metadata"]["name"], exit_code=0, log="ok=1\n")
    mark = len(cluster.client.requests)
    await cluster.reconcile()
    run = await cluster.run()
    assert run["status"]["phase"] == "Passed"
    assert [r.verb for r in cluster.client.requests[mark:]].count("log") == 5
    assert len(read_ahead) == 5  # every one read ahead of the walk, once
    for node in cluster.node_names:
        assert kit_names.CORDON_OWNER not in (
            cluster.node(node)["metadata"].get("annotations") or {}
        )


class Killed(BaseException):
    """The manager dies here (not an Exception: nothing in the pass may swallow it)."""


async def test_H_a_pass_killed_at_its_status_write_loses_no_settled_result(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Results settled in a pass exist only in memory until its one status write: a kill
    there loses the write, and the next process settles the same results from the pods,
    which are kept (each read again, none created twice)."""
    cluster = Cluster(nodes=4)
    await cluster.setup(tests={"t": custom_test("echo")})
    await cluster.create_run(maxConcurrentNodes=4)
    await cluster.reconcile()
    names = sorted(p["metadata"]["name"] for p in cluster.pods())
    for name in names:
        await cluster.kubelet(name, exit_code=0, log="ok=1\n")

    async def killed(*args: Any, **kwargs: Any) -> Any:
        raise Killed

    with monkeypatch.context() as patch:
        patch.setattr(checkpoint, "write_status", killed)
        with pytest.raises(Killed):
            await cluster.reconcile()  # harvested all four, then died before writing
    assert not [r for r in (await cluster.run())["status"].get("results") or []
                if r.get("phase") == "Passed"]  # fmt: skip
    cluster.reconciler = cluster.new_reconciler()  # a fresh process
    await cluster.reconcile()
    run = await cluster.run()
    assert run["status"]["phase"] == "Passed"
    assert [r["phase"] for r in run["status"]["results"]] == ["Passed"] * 4
    assert sorted(p["metadata"]["name"] for p in cluster.pods()) == names  # none re-created
    for node in cluster.node_names:
        assert kit_names.CORDON_OWNER not in (
            cluster.node(node)["metadata"].get("annotations") or {}
        )
