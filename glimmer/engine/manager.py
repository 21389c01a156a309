"""The manager: informers, controllers and leader election as one process.

Start-up order is what makes a restart safe:
1. health and metrics servers come up (liveness passes, readiness does not);
2. informers start on every replica, leader or not, so a standby's caches
   are warm when it takes over;
3. the lease is acquired (or election is off);
4. once every cache has synced, controllers start their workers, so no
   reconciler ever acts on a half-filled cache.

Losing the lease stops the controllers and makes `run` raise
`LeadershipLostError`: the process must exit non-zero and restart as a standby,
because in-memory state (queues, caches) built as leader cannot be trusted
once another replica may have acted. A stop request (SIGTERM) drains
in-flight reconciles, releases the lease and returns within
`graceful_shutdown_timeout`.

Reconcilers plug in through `ControllerRegistration`: a name, a `Reconciler`
and the `Watch`es whose events map to its keys. With none registered the
manager still elects, serves health and metrics.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.metadata
import json
from collections.abc import Callable, Iterable, Mapping, Sequence

import attrs
import structlog
from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from glimmer.engine.cache import IndexFunc
from glimmer.engine.client import KubeClient, Resource, object_key
from glimmer.engine.clock import Clock, MonotonicClock
from glimmer.engine.controller import Controller, ControllerOptions, LogContext, Reconciler
from glimmer.engine.informer import (
    InformerEvent,
    InformerFactory,
    InformerOptions,
    Transform,
)
from glimmer.engine.leaderelection import LeaderElectionConfig, LeaderElector
from glimmer.engine.metrics import EngineMetrics

log = structlog.get_logger("glimmer.engine.manager")

KeyMapper = Callable[[InformerEvent], Iterable[str]]


def own_key(event: InformerEvent) -> list[str]:
    """Enqueue the changed object itself ("namespace/name")."""
    return [object_key(event.obj)]


@attrs.frozen
class Watch:
    """A resource whose changes enqueue keys for a controller."""

    resource: Resource
    namespace: str | None = None
    """Namespace to watch; None means the manager's namespace (all if that is None too)."""
    label_selector: str | None = None
    transform: Transform | None = None
    """Ingest transform for the shared informer (see `informer.keep_fields`)."""
    indexers: Mapping[str, IndexFunc] = attrs.field(factory=dict)
    to_keys: KeyMapper = own_key
    """Which reconcile keys an event concerns (e.g. a pod -> its run)."""


@attrs.frozen
class ControllerRegistration:
    """A reconciler and what it watches."""

    name: str
    reconciler: Reconciler
    watches: Sequence[Watch] = ()
    options: ControllerOptions = attrs.field(factory=ControllerOptions)
    log_context: LogContext | None = None
    """Log fields derived from a key, bound on every line of its reconcile."""


@attrs.frozen
class ManagerOptions:
    """Process-level behaviour of `glimmer manager`."""

    namespace: str | None = None
    """Namespace to watch; None watches all namespaces."""
    metrics_bind_address: str = ":8080"
    """host:port for `/metrics`; "0" disables the metrics server."""
    health_probe_bind_address: str = ":8081"
    """host:port for `/healthz` and `/readyz`; "0" disables the probe server."""
    leader_elect: bool = True
    """Elect a leader on a Lease; only the leader runs controllers."""
    leader_election_namespace: str = "glimmer-system"
    """Namespace of the leader-election Lease."""
    leader_election_id: str = "glimmer-manager"
    """Name of the leader-election Lease (`glimmer manager` names its own)."""
    lease_duration: float = 15.0
    """Seconds a standby waits before taking an unrenewed lease (client-go default)."""
    renew_deadline: float = 10.0
    """Seconds the leader retries renewal before giving up (client-go default)."""
    retry_period: float = 2.0
    """Seconds between lease attempts (client-go default)."""
    leader_release_on_cancel: bool = True
    """Clear the Lease holder on a graceful stop so a standby takes over at once."""
    leader_identity: str | None = None
    """Holder identity; None means hostname_uuid."""
    graceful_shutdown_timeout: float = 30.0
    """Upper bound in seconds on shutdown after a stop request."""
    cache_sync_timeout: float = 120.0
    """Controllers fail to start if caches have not synced within this many seconds."""
    informer: InformerOptions = attrs.field(factory=InformerOptions)


class CacheSyncTimeoutError(Exception):
    """Caches did not sync in time; the manager cannot safely reconcile."""


def parse_bind_address(address: str) -> tuple[str, int] | None:
    """ ":8080" -> ("0.0.0.0", 8080); "0" -> None (disabled)."""
    if address in ("0", ""):
        return None
    host, sep, port = address.rpartition(":")
    if not sep:
        raise ValueError(f"bind address {address!r} is not host:port")
    return (host or "0.0.0.0", int(port))


def _version() -> str:
    try:
        return importlib.metadata.version("glimmer")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


class Manager:
    """Runs controllers behind leader election with health and metrics."""

    def __init__(
        self,
        client: KubeClient,
        *,
        options: ManagerOptions | None = None,
        controllers: Sequence[ControllerRegistration] = (),
        clock: Clock | None = None,
        metrics: EngineMetrics | None = None,
    ) -> None:
        self.client = client
        self.options = options or ManagerOptions()
        self._clock: Clock = clock if clock is not None else MonotonicClock()
        self.metrics = metrics if metrics is not None else EngineMetrics()
        self.metrics.build_info.labels(version=_version()).set(1)
        self.informers = InformerFactory(
            client, clock=self._clock, metrics=self.metrics, options=self.options.informer
        )
        self.controllers: list[Controller] = []
        self.elector: LeaderElector | None = None
        if self.options.leader_elect:
            config = LeaderElectionConfig(
                lease_name=self.options.leader_election_id,
                lease_namespace=self.options.leader_election_namespace,
                lease_duration=self.options.lease_duration,
                renew_deadline=self.options.renew_deadline,
                retry_period=self.options.retry_period,
                release_on_cancel=self.options.leader_release_on_cancel,
            )
            if self.options.leader_identity:
                config = attrs.evolve(config, identity=self.options.leader_identity)
            self.elector = LeaderElector(
                client,
                config,
                clock=self._clock,
                metrics=self.metrics,
            )
        self._runners: list[web.AppRunner] = []
        self.addresses: dict[str, tuple[str, int]] = {}
        """Bound addresses by server ("metrics", "health"), known once running."""
        self._controllers_started = False
        for registration in controllers:
            self.add_controller(registration)

    def add_controller(self, registration: ControllerRegistration) -> Controller:
        """Create the controller's queue and hook its watches to it (before `run`)."""
        controller = Controller(
            registration.name,
            registration.reconciler,
            options=registration.options,
            clock=self._clock,
            metrics=self.metrics,
            log_context=registration.log_context,
        )
        for watch in registration.watches:
            namespace = watch.namespace if watch.namespace is not None else self.options.namespace
            if not watch.resource.namespaced:
                namespace = None
            informer = self.informers.informer(
                watch.resource,
                namespace=namespace,
                label_selector=watch.label_selector,
                transform=watch.transform,
                indexers=watch.indexers,
            )
            informer.add_handler(_enqueuer(controller, watch.to_keys))
        self.controllers.append(controller)
        return controller

    # --- state ---------------------------------------------------------------

    @property
    def is_leader(self) -> bool:
        return self.elector.is_leader if self.elector is not None else self._controllers_started

    @property
    def controllers_running(self) -> bool:
        """True once the controllers' workers run (leader, caches synced)."""
        return self._controllers_started

    def caches_synced(self) -> bool:
        return self.informers.has_synced()

    # --- run -----------------------------------------------------------------

    async def run(self, stop: asyncio.Event | None = None) -> None:
        """Run until `stop` is set (returns) or leadership is lost (raises)."""
        stop = stop if stop is not None else asyncio.Event()
        await self._start_servers()
        self.informers.start()
        lead = asyncio.create_task(self._lead(), name="manager:lead")
        stopped = asyncio.create_task(stop.wait(), name="manager:stop")
        try:
            done, _ = await asyncio.wait({lead, stopped}, return_when=asyncio.FIRST_COMPLETED)
            if lead in done:
                lead.result()
        finally:
            stopped.cancel()
            await self._shutdown(lead)

    async def _lead(self) -> None:
        if self.elector is not None:
            await self.elector.acquire()
        try:
            async with asyncio.timeout(self.options.cache_sync_timeout):
                await self.informers.wait_for_sync()
        except TimeoutError as exc:
            raise CacheSyncTimeoutError(
                f"caches not synced after {self.options.cache_sync_timeout}s"
            ) from exc
        for controller in self.controllers:
            controller.start()
        self._controllers_started = True
        log.info("controllers started", controllers=[c.name for c in self.controllers])
        if self.elector is not None:
            await self.elector.hold()
        else:
            await asyncio.Event().wait()

    async def _shutdown(self, lead: asyncio.Task[None]) -> None:
        log.info("shutting down")
        try:
            async with asyncio.timeout(self.options.graceful_shutdown_timeout):
                lead.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await lead
                await asyncio.gather(*(c.stop() for c in self.controllers))
                self._controllers_started = False
                if self.elector is not None:
                    await self.elector.release()
                await self.informers.stop()
        except TimeoutError:
            log.error("graceful shutdown timed out",
                      timeout_s=self.options.graceful_shutdown_timeout)  # fmt: skip
        finally:
            for runner in self._runners:
                with contextlib.suppress(Exception):
                    await runner.cleanup()
            self._runners = []
        log.info("stopped")

    # --- HTTP ------------------------------------------------------------------

    async def _start_servers(self) -> None:
        metrics_at = parse_bind_address(self.options.metrics_bind_address)
        health_at = parse_bind_address(self.options.health_probe_bind_address)
        routes: dict[tuple[str, int], list[web.RouteDef]] = {}
        if metrics_at is not None:
            routes.setdefault(metrics_at, []).append(web.get("/metrics", self._metrics))
        if health_at is not None:
            routes.setdefault(health_at, []).extend(
                [web.get("/healthz", self._healthz), web.get("/readyz", self._readyz)]
            )
        for (host, port), defs in routes.items():
            app = web.Application()
            app.add_routes(defs)
            runner = web.AppRunner(app, access_log=None)
            await runner.setup()
            site = web.TCPSite(runner, host, port)
            await site.start()
            self._runners.append(runner)
            bound = runner.addresses[0]
            address = (str(bound[0]), int(bound[1]))
            if (host, port) == metrics_at:
                self.addresses["metrics"] = address
            if (host, port) == health_at:
                self.addresses["health"] = address

    async def _metrics(self, request: web.Request) -> web.Response:
        body = generate_latest(self.metrics.registry)
        response = web.Response(body=body)
        response.headers["Content-Type"] = CONTENT_TYPE_LATEST
        return response

    async def _healthz(self, request: web.Request) -> web.Response:
        return web.Response(text="ok")

    def not_ready_reasons(self) -> list[str]:
        """Why `/readyz` fails, each with what to do; empty when ready.

        A blocked election makes the process not ready even with synced
        caches: it will never reconcile until someone acts.
        """
        reasons: list[str] = []
        if not self.caches_synced():
            reasons.append("caches not synced yet")
        blocked = self.elector.blocked_reason if self.elector is not None else None
        if blocked is not None:
            reasons.append(f"leader election: {blocked}")
        return reasons

    async def _readyz(self, request: web.Request) -> web.Response:
        reasons = self.not_ready_reasons()
        state = {
            "caches_synced": self.caches_synced(),
            "informers": {i.name: i.has_synced() for i in self.informers.informers},
            "leader_election": self.elector is not None,
            "leader": self.is_leader,
            "controllers_running": self.controllers_running,
            "not_ready": reasons,
        }
        return web.Response(
            status=503 if reasons else 200,
            text=json.dumps(state),
            content_type="application/json",
        )


def _enqueuer(controller: Controller, to_keys: KeyMapper) -> Callable[[InformerEvent], None]:
    def handle(event: InformerEvent) -> None:
        keys = set(to_keys(event))
        if event.old is not None:
            # A relabel can move an object between keys: both must hear of it.
            keys.update(to_keys(InformerEvent("delete", event.old)))
        for key in keys:
            controller.queue.add(key)

    return handle
