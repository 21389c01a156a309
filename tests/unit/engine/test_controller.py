"""Controller workers: how a reconcile's outcome feeds back into the queue."""

from __future__ import annotations

import asyncio
import io
import json

import structlog

from glimmer.engine import (
    Controller,
    ControllerOptions,
    EngineMetrics,
    FakeClock,
    Result,
    configure_logging,
    settle,
)


class Scripted:
    """A reconciler that returns (or raises) what each key's script says next."""

    def __init__(self, outcome: object = None) -> None:
        self.outcome = outcome
        self.calls: list[str] = []

    async def reconcile(self, key: str) -> Result:
        self.calls.append(key)
        if isinstance(self.outcome, BaseException):
            raise self.outcome
        if isinstance(self.outcome, Result):
            return self.outcome
        if self.outcome == "hang":
            await asyncio.sleep(3600)
        return Result()


def sample(metrics: EngineMetrics, name: str, **labels: str) -> float:
    value = metrics.registry.get_sample_value(name, labels)
    return 0.0 if value is None else value


async def test_success_forgets_the_key_and_counts_success() -> None:
    metrics, clock = EngineMetrics(), FakeClock()
    controller = Controller("runs", Scripted(), clock=clock, metrics=metrics)
    controller.queue.add_rate_limited("ns/a")  # an earlier failure on record
    await controller.process("ns/a")
    assert controller.queue.num_requeues("ns/a") == 0
    assert (
        sample(metrics, "controller_runtime_reconcile_total", controller="runs", result="success")
        == 1
    )


async def test_exception_requeues_rate_limited_and_counts_an_error() -> None:
    metrics, clock = EngineMetrics(), FakeClock()
    controller = Controller("runs", Scripted(RuntimeError("boom")), clock=clock, metrics=metrics)
    await controller.process("ns/a")
    await controller.process("ns/a")
    assert controller.queue.num_requeues("ns/a") == 2
    assert controller.queue.waiting == 1
    clock.advance(0.005)
    assert len(controller.queue) == 1, "the first failure retries after 5 ms"
    assert sample(metrics, "controller_runtime_reconcile_errors_total", controller="runs") == 2
    assert (
        sample(metrics, "controller_runtime_reconcile_total", controller="runs", result="error")
        == 2
    )


async def test_requeue_after_forgets_then_adds_after_the_delay() -> None:
    metrics, clock = EngineMetrics(), FakeClock()
    controller = Controller(
        "runs", Scripted(Result(requeue_after=30.0)), clock=clock, metrics=metrics
    )
    controller.queue.add_rate_limited("ns/a")  # an earlier failure on record...
    clock.advance(0.005)
    await controller.queue.get()  # ...already retried and now being processed
    await controller.process("ns/a")
    controller.queue.done("ns/a")
    assert controller.queue.num_requeues("ns/a") == 0, "requeue_after forgets failures"
    clock.advance(29.9)
    assert len(controller.queue) == 0
    clock.advance(0.2)
    assert len(controller.queue) == 1
    assert (
        sample(
            metrics, "controller_runtime_reconcile_total", controller="runs", result="requeue_after"
        )
        == 1
    )


async def test_requeue_is_rate_limited_without_counting_an_error() -> None:
    metrics, clock = EngineMetrics(), FakeClock()
    controller = Controller("runs", Scripted(Result(requeue=True)), clock=clock, metrics=metrics)
    await controller.process("ns/a")
    assert controller.queue.num_requeues("ns/a") == 1
    assert sample(metrics, "controller_runtime_reconcile_errors_total", controller="runs") == 0
    assert (
        sample(metrics, "controller_runtime_reconcile_total", controller="runs", result="requeue")
        == 1
    )


async def test_a_reconcile_over_its_timeout_is_cancelled_and_treated_as_an_error() -> None:
    metrics = EngineMetrics()
    controller = Controller(
        "runs",
        Scripted("hang"),
        clock=FakeClock(),
        metrics=metrics,
        options=ControllerOptions(reconcile_timeout=0.05),
    )
    await asyncio.wait_for(controller.process("ns/a"), 5)
    assert controller.queue.num_requeues("ns/a") == 1
    assert sample(metrics, "controller_runtime_reconcile_errors_total", controller="runs") == 1


async def test_workers_reconcile_distinct_keys_in_parallel_up_to_the_limit() -> None:
    metrics = EngineMetrics()
    release = asyncio.Event()
    running: set[str] = set()
    peak = 0

    class Slow:
        async def reconcile(self, key: str) -> Result:
            nonlocal peak
            running.add(key)
            peak = max(peak, len(running))
            await release.wait()
            running.discard(key)
            return Result()

    controller = Controller(
        "runs",
        Slow(),
        clock=FakeClock(),
        metrics=metrics,
        options=ControllerOptions(max_concurrent_reconciles=3),
    )
    for i in range(5):
        controller.queue.add(f"ns/{i}")
    controller.start()
    await settle()
    assert peak == 3
    assert sample(metrics, "controller_runtime_active_workers", controller="runs") == 3
    assert sample(metrics, "controller_runtime_max_concurrent_reconciles", controller="runs") == 3
    release.set()
    for _ in range(100):
        if len(controller.queue) == 0 and not controller.queue.processing:
            break
        await asyncio.sleep(0)
    await controller.stop()
    assert (
        sample(metrics, "controller_runtime_reconcile_total", controller="runs", result="success")
        == 5
    )
    assert sample(metrics, "controller_runtime_active_workers", controller="runs") == 0


async def test_stop_lets_the_in_flight_reconcile_finish() -> None:
    release = asyncio.Event()
    finished: list[str] = []

    class Slow:
        async def reconcile(self, key: str) -> Result:
            await release.wait()
            finished.append(key)
            return Result()

    controller = Controller("runs", Slow(), clock=FakeClock())
    controller.queue.add("ns/a")
    controller.queue.add("ns/b")
    controller.start()
    await settle()
    stopping = asyncio.create_task(controller.stop())
    await settle()
    assert not stopping.done()
    release.set()
    await asyncio.wait_for(stopping, 5)
    assert finished == ["ns/a"], "in-flight work finishes; queued work is not started"
    assert not controller.running


async def test_every_log_line_of_a_reconcile_carries_controller_key_and_reconcile_id() -> None:
    stream = io.StringIO()
    configure_logging(level="debug", stream=stream)
    try:

        class Chatty:
            async def reconcile(self, key: str) -> Result:
                structlog.get_logger("reconciler").info("working")
                raise ValueError("broken spec")

        controller = Controller("runs", Chatty(), clock=FakeClock())
        await controller.process("ns/a")
    finally:
        structlog.reset_defaults()
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert [line["event"] for line in lines] == ["working", "reconcile failed", "reconciled"]
    for line in lines:
        assert line["controller"] == "runs"
        assert line["key"] == "ns/a"
        assert line["reconcile_id"] == lines[0]["reconcile_id"]
    failure = lines[1]
    assert failure["level"] == "error"
    assert "broken spec" in json.dumps(failure["exception"]), "the traceback must be logged"


async def test_the_registrations_log_context_is_bound_on_every_line_of_the_reconcile() -> None:
    """`run`, `node` and the like come from the registration, which knows what a key names."""
    stream = io.StringIO()
    configure_logging(level="debug", stream=stream)
    try:

        class Chatty:
            async def reconcile(self, key: str) -> Result:
                structlog.get_logger("helper").info("deep inside")
                return Result()

        def context(key: str) -> dict[str, str]:
            namespace, _, name = key.partition("/")
            # An attempt to override the engine's own fields must not win.
            return {"namespace": namespace, "run": name, "key": "forged"}

        controller = Controller("runs", Chatty(), clock=FakeClock(), log_context=context)
        await controller.process("ns/a")
    finally:
        structlog.reset_defaults()
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert [line["event"] for line in lines] == ["deep inside", "reconciled"]
    for line in lines:
        assert (line["namespace"], line["run"], line["key"]) == ("ns", "a", "ns/a")
    assert structlog.contextvars.get_contextvars() == {}, "unbound after the reconcile"


async def test_a_failing_log_context_still_reconciles_the_key() -> None:
    def broken(key: str) -> dict[str, str]:
        raise KeyError(key)

    reconciler = Scripted()
    controller = Controller("runs", reconciler, clock=FakeClock(), log_context=broken)
    await controller.process("ns/a")
    assert reconciler.calls == ["ns/a"]
