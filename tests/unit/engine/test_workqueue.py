"""Workqueue semantics (client-go's queue / dirty / processing sets)."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glimmer.engine import (
    Controller,
    ControllerOptions,
    FakeClock,
    QueueShutDownError,
    Result,
    WorkQueue,
    settle,
)
from glimmer.engine.metrics import EngineMetrics


def _queue(clock: FakeClock | None = None, **kwargs: Any) -> WorkQueue[str]:
    return WorkQueue(name="test", clock=clock or FakeClock(), **kwargs)


async def test_duplicate_adds_collapse_to_one_item() -> None:
    queue = _queue()
    for _ in range(5):
        queue.add("a")
    assert len(queue) == 1
    assert await queue.get() == "a"
    assert len(queue) == 0


async def test_10000_adds_of_100_keys_collapse_to_100_items() -> None:
    queue = _queue()
    rng = random.Random(7)
    keys = [f"ns/obj-{i}" for i in range(100)]
    for _ in range(10_000):
        queue.add(rng.choice(keys))
    assert len(queue) == 100
    got = [await queue.get() for _ in range(100)]
    assert sorted(got) == sorted(keys)
    assert len(queue) == 0


async def test_items_are_handed_out_in_first_add_order() -> None:
    queue = _queue()
    for key in ["c", "a", "b", "a", "c"]:
        queue.add(key)
    assert [await queue.get() for _ in range(3)] == ["c", "a", "b"]


async def test_add_while_processing_is_not_handed_out_until_done() -> None:
    queue = _queue()
    queue.add("a")
    assert await queue.get() == "a"
    queue.add("a")
    queue.add("a")
    assert len(queue) == 0, "a key being processed must not be queued a second time"
    getter = asyncio.create_task(queue.get())
    await settle()
    assert not getter.done()
    queue.done("a")
    assert await asyncio.wait_for(getter, 1) == "a"
    queue.done("a")
    assert len(queue) == 0, "the re-add while processing re-queues exactly once"


async def test_done_without_readd_does_not_requeue() -> None:
    queue = _queue()
    queue.add("a")
    await queue.get()
    queue.done("a")
    assert len(queue) == 0


async def test_get_waits_for_an_add() -> None:
    queue = _queue()
    getter = asyncio.create_task(queue.get())
    await settle()
    assert not getter.done()
    queue.add("x")
    assert await asyncio.wait_for(getter, 1) == "x"


async def test_shutdown_hands_out_remaining_items_then_raises() -> None:
    queue = _queue()
    queue.add("a")
    queue.shutdown()
    queue.add("b")  # refused after shutdown
    assert await queue.get() == "a"
    with pytest.raises(QueueShutDownError):
        await queue.get()


async def test_shutdown_wakes_blocked_getters() -> None:
    queue = _queue()
    getters = [asyncio.create_task(queue.get()) for _ in range(3)]
    await settle()
    queue.shutdown()
    for getter in getters:
        with pytest.raises(QueueShutDownError):
            await asyncio.wait_for(getter, 1)


async def test_shutdown_with_drain_waits_for_items_in_processing() -> None:
    queue = _queue()
    queue.add("a")
    await queue.get()
    drain = asyncio.create_task(queue.shutdown_with_drain())
    await settle()
    assert not drain.done(), "drain must wait for the key still being processed"
    queue.done("a")
    await asyncio.wait_for(drain, 1)


async def test_add_after_releases_the_item_only_when_due() -> None:
    clock = FakeClock()
    queue = _queue(clock)
    queue.add_after("a", 5.0)
    assert len(queue) == 0 and queue.waiting == 1
    clock.advance(4.999)
    assert len(queue) == 0
    clock.advance(0.001)
    assert len(queue) == 1 and queue.waiting == 0
    assert await queue.get() == "a"


async def test_add_after_keeps_the_earliest_ready_time() -> None:
    clock = FakeClock()
    queue = _queue(clock)
    queue.add_after("a", 10.0)
    queue.add_after("a", 2.0)
    queue.add_after("a", 30.0)
    clock.advance(2.0)
    assert len(queue) == 1
    await queue.get()
    queue.done("a")
    clock.advance(100.0)
    assert len(queue) == 0, "the superseded later ready times must not add it again"


async def test_add_after_orders_by_ready_time() -> None:
    clock = FakeClock()
    queue = _queue(clock)
    queue.add_after("late", 3.0)
    queue.add_after("early", 1.0)
    queue.add_after("middle", 2.0)
    clock.advance(3.0)
    assert [await queue.get() for _ in range(3)] == ["early", "middle", "late"]


async def test_add_after_non_positive_delay_adds_now() -> None:
    queue = _queue()
    queue.add_after("a", 0)
    assert len(queue) == 1


async def test_shutdown_discards_delayed_adds() -> None:
    clock = FakeClock()
    queue = _queue(clock)
    queue.add_after("a", 1.0)
    queue.shutdown()
    clock.advance(5.0)
    assert len(queue) == 0


async def test_rate_limited_adds_back_off_per_item_and_forget_resets() -> None:
    clock = FakeClock()
    queue = _queue(clock)
    queue.add_rate_limited("a")  # 5 ms
    queue.add_rate_limited("a")  # 10 ms (the earlier 5 ms wins on the heap)
    assert queue.num_requeues("a") == 2
    clock.advance(0.005)
    assert len(queue) == 1
    queue.forget("a")
    assert queue.num_requeues("a") == 0


async def test_metrics_follow_client_go_names_and_values() -> None:
    clock = FakeClock()
    metrics = EngineMetrics()
    queue = WorkQueue[str](name="runs", clock=clock, metrics=metrics.queue("runs"))
    for key in ["a", "b", "a"]:
        queue.add(key)
    reg = metrics.registry
    assert reg.get_sample_value("workqueue_adds_total", {"name": "runs"}) == 2
    assert reg.get_sample_value("workqueue_depth", {"name": "runs"}) == 2
    clock.advance(1.5)
    item = await queue.get()
    assert reg.get_sample_value("workqueue_queue_duration_seconds_sum", {"name": "runs"}) == 1.5
    clock.advance(2.0)
    assert reg.get_sample_value("workqueue_unfinished_work_seconds", {"name": "runs"}) == 2.0
    assert (
        reg.get_sample_value("workqueue_longest_running_processor_seconds", {"name": "runs"}) == 2.0
    )
    queue.done(item)
    assert reg.get_sample_value("workqueue_work_duration_seconds_sum", {"name": "runs"}) == 2.0
    assert reg.get_sample_value("workqueue_unfinished_work_seconds", {"name": "runs"}) == 0.0
    queue.add_rate_limited("c")
    assert reg.get_sample_value("workqueue_retries_total", {"name": "runs"}) == 1
    assert reg.get_sample_value("workqueue_depth", {"name": "runs"}) == 1


_ops = st.lists(
    st.tuples(st.integers(min_value=0, max_value=7), st.integers(min_value=0, max_value=3)),
    min_size=1,
    max_size=120,
)


@settings(max_examples=60, deadline=None)
@given(ops=_ops, workers=st.integers(min_value=1, max_value=6), slowness=st.integers(1, 12))
def test_no_key_is_processed_concurrently_and_every_last_write_is_reconciled(
    ops: list[tuple[int, int]], workers: int, slowness: int
) -> None:
    """A deliberately slow reconciler, many workers, writes racing reconciles.

    Each op writes a new version of a key and enqueues it, then yields the
    loop `pause` times. The reconciler reads the latest version, yields for a
    while (so later writes land mid-reconcile), and records what it saw.
    """

    async def scenario() -> None:
        written: dict[str, int] = {}
        seen: dict[str, int] = {}
        in_flight: set[str] = set()
        overlaps: list[str] = []

        class SlowReconciler:
            async def reconcile(self, key: str) -> Result:
                if key in in_flight:
                    overlaps.append(key)
                in_flight.add(key)
                version = written[key]
                for _ in range(slowness):
                    await asyncio.sleep(0)
                seen[key] = version
                in_flight.discard(key)
                return Result()

        controller = Controller(
            "slow",
            SlowReconciler(),
            clock=FakeClock(),
            options=ControllerOptions(max_concurrent_reconciles=workers),
        )
        queue = controller.queue
        controller.start()
        for index, pause in ops:
            key = f"k{index}"
            written[key] = written.get(key, 0) + 1
            queue.add(key)
            for _ in range(pause):
                await asyncio.sleep(0)
        for _ in range(10_000):
            if len(queue) == 0 and not queue.processing:
                break
            await asyncio.sleep(0)
        await asyncio.wait_for(controller.stop(), 5)
        assert overlaps == [], f"keys reconciled by two workers at once: {overlaps}"
        assert seen == written, "the last write of every key must have been reconciled"

    asyncio.run(scenario())
