"""Controllers: a workqueue drained by N workers calling one reconciler.

The public contract is small, as in controller-runtime's `reconcile.go`:
a reconciler is `async def reconcile(key) -> Result`. How the result feeds
back into the queue is fixed here, in one place:
- an exception (including the per-reconcile timeout) is a rate-limited
  requeue, counted and logged with the key and traceback: a failing object
  backs off 5 ms doubling to 1000 s instead of spinning;
- `Result(requeue_after=s)` forgets the failure history and re-adds after s;
- `Result(requeue=True)` is a rate-limited requeue without an error;
- `Result()` forgets the key: done until the next event.

The queue guarantees a key is never held by two workers, so a reconciler may
assume it is the only one working on its object in this process.

Every log line written during a reconcile carries `controller`, `key` and
`reconcile_id` (structlog contextvars), plus whatever the registration's
`log_context` derives from the key (e.g. `run`, `node`): the engine does not know
what a key names, the registration does.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Callable, Mapping
from typing import Protocol

import attrs
import structlog

from glimmer.engine.clock import Clock, MonotonicClock
from glimmer.engine.metrics import EngineMetrics
from glimmer.engine.ratelimit import RateLimiter
from glimmer.engine.workqueue import QueueShutDownError, WorkQueue

log = structlog.get_logger("glimmer.engine.controller")

LogContext = Callable[[str], Mapping[str, str]]
"""Log fields for a key (bound for the whole reconcile of that key)."""


@attrs.frozen
class Result:
    """What a reconcile asks of the queue next."""

    requeue_after: float | None = None
    """Reconcile again after this many seconds (the failure history is forgotten)."""
    requeue: bool = False
    """Reconcile again after the rate limiter's delay, without counting an error."""


class Reconciler(Protocol):
    """Drives one object (named by `key`, "namespace/name") towards its spec."""

    async def reconcile(self, key: str) -> Result: ...


@attrs.frozen
class ControllerOptions:
    """How a controller runs its reconciler."""

    max_concurrent_reconciles: int = 1
    """Workers; distinct keys reconcile in parallel, one key never does."""
    reconcile_timeout: float = 60.0
    """A reconcile running longer is cancelled and treated as an error."""
    shutdown_timeout: float = 25.0
    """On stop, how long in-flight reconciles may take before they are cancelled."""


class Controller:
    """A named workqueue plus workers for one reconciler."""

    def __init__(
        self,
        name: str,
        reconciler: Reconciler,
        *,
        options: ControllerOptions | None = None,
        clock: Clock | None = None,
        metrics: EngineMetrics | None = None,
        rate_limiter: RateLimiter[str] | None = None,
        log_context: LogContext | None = None,
    ) -> None:
        self.name = name
        self.reconciler = reconciler
        self._log_context = log_context
        self.options = options or ControllerOptions()
        if self.options.max_concurrent_reconciles < 1:
            raise ValueError("max_concurrent_reconciles must be at least 1")
        self._clock: Clock = clock if clock is not None else MonotonicClock()
        self._metrics = metrics
        self.queue: WorkQueue[str] = WorkQueue(
            name=name,
            clock=self._clock,
            rate_limiter=rate_limiter,
            metrics=metrics.queue(name) if metrics is not None else None,
        )
        self._workers: list[asyncio.Task[None]] = []
        self._stopping = False
        if metrics is not None:
            metrics.max_concurrent_reconciles.labels(controller=name).set(
                self.options.max_concurrent_reconciles
            )
            metrics.active_workers.labels(controller=name).set(0)
            for result in ("success", "error", "requeue", "requeue_after"):
                metrics.reconcile_total.labels(controller=name, result=result)
            metrics.reconcile_errors.labels(controller=name)

    @property
    def running(self) -> bool:
        return bool(self._workers)

    def start(self) -> None:
        """Start the workers (call once caches have synced)."""
        if self._workers:
            return
        self._workers = [
            asyncio.create_task(self._worker(), name=f"controller:{self.name}:{i}")
            for i in range(self.options.max_concurrent_reconciles)
        ]

    async def stop(self) -> None:
        """Take no new keys, let in-flight reconciles finish (bounded), stop workers."""
        self._stopping = True
        try:
            async with asyncio.timeout(self.options.shutdown_timeout):
                await self.queue.shutdown_with_drain()
        except TimeoutError:
            log.warning("reconciles still running at shutdown; cancelling", controller=self.name)
        for task in self._workers:
            task.cancel()
        for task in self._workers:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._workers = []

    async def _worker(self) -> None:
        while True:
            try:
                key = await self.queue.get()
            except QueueShutDownError:
                return
            try:
                if not self._stopping:
                    await self.process(key)
            finally:
                self.queue.done(key)

    async def process(self, key: str) -> None:
        """Reconcile `key` once and feed the outcome back into the queue."""
        reconcile_id = str(uuid.uuid4())
        metrics = self._metrics
        fields = {
            **self._key_fields(key),
            "controller": self.name,
            "key": key,
            "reconcile_id": reconcile_id,
        }
        with structlog.contextvars.bound_contextvars(**fields):
            if metrics is not None:
                metrics.active_workers.labels(controller=self.name).inc()
            started = self._clock.now()
            try:
                async with asyncio.timeout(self.options.reconcile_timeout):
                    result = await self.reconciler.reconcile(key)
            except Exception as exc:
                outcome = "error"
                self.queue.add_rate_limited(key)
                if metrics is not None:
                    metrics.reconcile_errors.labels(controller=self.name).inc()
                if isinstance(exc, TimeoutError):
                    log.error("reconcile timed out", timeout_s=self.options.reconcile_timeout,
                              requeues=self.queue.num_requeues(key))  # fmt: skip
                else:
                    log.exception("reconcile failed", requeues=self.queue.num_requeues(key))
            else:
                if result.requeue_after is not None and result.requeue_after > 0:
                    outcome = "requeue_after"
                    self.queue.forget(key)
                    self.queue.add_after(key, result.requeue_after)
                elif result.requeue:
                    outcome = "requeue"
                    self.queue.add_rate_limited(key)
                else:
                    outcome = "success"
                    self.queue.forget(key)
            finally:
                if metrics is not None:
                    metrics.active_workers.labels(controller=self.name).dec()
            if metrics is not None:
                metrics.reconcile_total.labels(controller=self.name, result=outcome).inc()
                metrics.reconcile_time.labels(controller=self.name).observe(
                    max(0.0, self._clock.now() - started)
                )
            log.debug("reconciled", result=outcome)

    def _key_fields(self, key: str) -> dict[str, str]:
        if self._log_context is None:
            return {}
        try:
            return {str(k): str(v) for k, v in self._log_context(key).items()}
        except Exception:
            # Log fields are a convenience; a bad key must still be reconciled.
            log.exception("log context failed", controller=self.name, key=key)
            return {}
