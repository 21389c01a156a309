"""When envelopes are sent (L4, P12) and what the terminal one records (E19, sinkStatus).

The reconciler on a fake apiserver with a hand-driven kubelet; deliveries are recorded
by a deliverer that can also refuse, as a reporting one does in production.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

import pytest

from glimmer.controllers.kit import names
from glimmer.controllers.kit.names import RUNS
from glimmer.controllers.run.delivery import Delivery, NoDelivery, Reason
from glimmer.engine import ApiError
from glimmer.sinks import FanoutReport, SinkOutcome
from tests.unit.controllers.run.harness import NS, Cluster, custom_test


class ScriptedDelivery(NoDelivery):
    """Records deliveries; the terminal one is refused while ``refuse`` holds."""

    def __init__(self) -> None:
        super().__init__()
        self.refuse = False

    async def deliver(self, delivery: Delivery) -> bool:
        return (await self.deliver_reporting(delivery)).ok

    async def deliver_reporting(self, delivery: Delivery) -> FanoutReport:
        self.sent.append(delivery)
        if self.refuse:
            return FanoutReport((SinkOutcome("hook", False, "HTTP 503: down"),
                                 SinkOutcome("store", True)))  # fmt: skip
        return FanoutReport((SinkOutcome("hook", True), SinkOutcome("store", True)))


def sent(cluster: Cluster) -> list[tuple[Reason, str]]:
    return [(d.reason, d.event_key) for d in cluster.delivered.sent]


async def test_L4_P12_units_settled_en_masse_by_cancel_send_no_test_completed() -> None:
    cluster = Cluster(nodes=2)
    await cluster.setup(tests={"t": custom_test("sleep 100")})
    await cluster.create_run(maxConcurrentNodes=2, cancelPolicy="Immediate")
    await cluster.reconcile()
    first, second = sorted(p["metadata"]["name"] for p in cluster.live_pods())
    await cluster.kubelet(first, exit_code=0, log="ok=1\n")
    await cluster.kubelet(second, exit_code=None)
    run = await cluster.run()
    await cluster.client.patch(RUNS, "r1", {"spec": {"cancel": True}}, namespace=NS)
    await cluster.reconcile()
    run = await cluster.run()
    assert run["status"]["phase"] == "Cancelled"
    phases = sorted(r["phase"] for r in run["status"]["results"])
    assert phases == ["Cancelled", "Passed"]
    completed = [key for reason, key in sent(cluster) if reason is Reason.TEST_COMPLETED]
    assert len(completed) == 1  # the harvested unit only, never the cancelled one
    assert sent(cluster)[-1] == (Reason.RUN_PHASE_CHANGED, "Cancelled")


async def test_L4_P12_units_settled_by_the_deadline_send_no_test_completed() -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": custom_test("sleep 100")})
    await cluster.create_run(deadlineSeconds=60)
    await cluster.reconcile()
    [pod] = [p["metadata"]["name"] for p in cluster.live_pods()]
    await cluster.kubelet(pod, exit_code=None)
    cluster.advance(61)
    await cluster.reconcile()
    assert (await cluster.run())["status"]["phase"] == "Error"
    assert sent(cluster) == [
        (Reason.RUN_PHASE_CHANGED, "Running"), (Reason.RUN_PHASE_CHANGED, "Error"),
    ]  # fmt: skip


async def test_L4_a_run_refused_at_start_sends_only_its_terminal_envelope() -> None:
    cluster = Cluster(nodes=1)
    bad = [{"metric": "bw", "comparison": "GreaterThanOrEqual", "value": "fast"}]
    await cluster.setup(tests={"t": custom_test("echo", thresholds=bad)})
    await cluster.create_run()
    await cluster.reconcile()
    run = await cluster.run()
    assert run["status"]["phase"] == "Error" and run["status"]["results"][0]["kind"] == ""
    assert sent(cluster) == [(Reason.RUN_PHASE_CHANGED, "Error")]  # no TestCompleted


async def one_test_exited(scripted: ScriptedDelivery) -> Cluster:
    """A one-node run of one test whose pod has exited 0, its verdict not yet written."""
    cluster = Cluster(nodes=1)
    cluster.delivered = scripted
    cluster.clock = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
    cluster.reconciler = cluster.new_reconciler()
    await cluster.setup(tests={"t": custom_test("echo")})
    await cluster.create_run()
    await cluster.reconcile()
    [pod] = [p["metadata"]["name"] for p in cluster.live_pods()]
    await cluster.kubelet(pod, exit_code=0, log="ok=1\n")
    return cluster


async def test_E19_terminal_outcome_is_recorded_in_sink_status_and_re_sent_until_accepted() -> None:
    scripted = ScriptedDelivery()
    scripted.refuse = True
    cluster = await one_test_exited(scripted)
    result = await cluster.reconcile()
    run = await cluster.run()
    assert run["status"]["phase"] == "Passed"  # a refused delivery never changes the run
    assert run["metadata"]["annotations"][names.PENDING_TERMINAL_DELIVERY] == "Passed"
    assert run["status"]["sinkStatus"] == {
        "hook": "Failed 2026-12-01T12:00:00.000Z: HTTP 503: down",
        "store": "Delivered 2026-12-01T12:00:00.000Z",
    }
    assert result.requeue_after == 300.0  # E19: every 5 minutes
    # Our own annotation and finalizer writes wake the run at once: not due, not re-sent.
    cluster.advance(10)
    result = await cluster.reconcile()
    assert sent(cluster).count((Reason.RUN_PHASE_CHANGED, "Passed")) == 1
    assert result.requeue_after == 290.0
    cluster.advance(-10)
    # Still refused: re-sent, still pending.
    cluster.advance(300)
    await cluster.reconcile()
    assert sent(cluster).count((Reason.RUN_PHASE_CHANGED, "Passed")) == 2
    # Accepted: the annotation goes and the record says so.
    scripted.refuse = False
    cluster.advance(300)
    result = await cluster.reconcile()
    run = await cluster.run()
    assert names.PENDING_TERMINAL_DELIVERY not in (run["metadata"].get("annotations") or {})
    assert run["status"]["sinkStatus"]["hook"] == "Delivered 2026-12-01T12:10:00.000Z"
    assert run["status"]["phase"] == "Passed"
    assert not result.requeue_after
    # Only the terminal envelope is ever re-sent (L5).
    assert sent(cluster).count((Reason.TEST_COMPLETED, "t/n0")) == 1
    await cluster.reconcile()
    assert sent(cluster).count((Reason.RUN_PHASE_CHANGED, "Passed")) == 3


class HangingDelivery(NoDelivery):
    """A receiver that answers only when every delivery of the pass is waiting on it."""

    def __init__(self, expect: int) -> None:
        super().__init__()
        self.expect = expect
        self.waiting = 0
        self.most_at_once = 0
        self._all_in: asyncio.Event = asyncio.Event()

    async def deliver(self, delivery: Delivery) -> bool:
        self.sent.append(delivery)
        if delivery.reason is not Reason.TEST_COMPLETED:
            return True
        self.waiting += 1
        self.most_at_once = max(self.most_at_once, self.waiting)
        if self.waiting >= self.expect:
            self._all_in.set()
        try:
            await asyncio.wait_for(self._all_in.wait(), timeout=5)
        except TimeoutError:
            return False
        finally:
            self.waiting -= 1
        return True


async def test_L5_a_passes_test_completed_envelopes_go_together_not_one_budget_each() -> None:
    """Three units settled in one pass: their envelopes are in flight at once, so a
    hanging receiver costs the pass one delivery budget, never three (a pass longer
    than the reconcile timeout would be cut before its cordons and events were recorded)."""
    cluster = Cluster(nodes=3)
    hanging = HangingDelivery(expect=3)
    cluster.delivered = hanging
    cluster.reconciler = cluster.new_reconciler()
    await cluster.setup(tests={"t": custom_test("echo")})
    await cluster.create_run(maxConcurrentNodes=3)
    await cluster.reconcile()
    for pod in sorted(p["metadata"]["name"] for p in cluster.live_pods()):
        await cluster.kubelet(pod, exit_code=0, log="ok=1\n")
    await cluster.reconcile()
    assert hanging.most_at_once == 3
    completed = [d for d in hanging.sent if d.reason is Reason.TEST_COMPLETED]
    assert len(completed) == 3


async def test_E19_a_cut_verdict_pass_still_delivers_the_terminal_envelope(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The pass that writes the verdict may be cut before it delivers (a conflict while
    unloading, a restart): the next pass sees a terminal run with no pending marker, and
    the finalizer it still holds is what says the envelope was never sent."""
    cluster = await one_test_exited(ScriptedDelivery())
    finisher = cluster.reconciler.finisher
    unload = finisher._unload
    cut: list[dict[str, Any]] = []

    async def conflicted(run: dict[str, Any]) -> dict[str, Any]:
        if not cut:
            cut.append(run)
            raise ApiError(status=409, reason="Conflict")
        return await unload(run)

    monkeypatch.setattr(finisher, "_unload", conflicted)
    result = await cluster.reconcile()
    assert cut and result.requeue  # the verdict was written, the pass cut
    assert (await cluster.run())["status"]["phase"] == "Passed"
    assert (Reason.RUN_PHASE_CHANGED, "Passed") not in sent(cluster)
    await cluster.reconcile()
    assert sent(cluster).count((Reason.RUN_PHASE_CHANGED, "Passed")) == 1
    run = await cluster.run()
    assert names.FINALIZER not in run["metadata"].get("finalizers", [])
    assert run["status"]["sinkStatus"]["hook"].startswith("Delivered ")
    await cluster.reconcile()  # delivered once: a later pass sends nothing more
    assert sent(cluster).count((Reason.RUN_PHASE_CHANGED, "Passed")) == 1
