"""Informers: a local, indexed, eventually-consistent copy of one resource.

The reflector loop is client-go's:
1. list (the very first time with resourceVersion "0", served from the
   apiserver's watch cache; paged, following `continue`), and replace the
   store, emitting adds/updates/deletes for the difference;
2. watch from the listed resourceVersion with `allowWatchBookmarks` and a
   randomised 5-10 min `timeoutSeconds`, so a fleet of managers does not
   reconnect in lockstep; a client inactivity timeout (~70 s) catches a dead
   connection;
3. a watch that ends normally (end of stream at the server's timeout, the
   server dropping the connection, or the client's inactivity timeout on an
   idle stream) is re-opened at once from the last seen version, logged at
   debug, as client-go does; a 410
   Gone (HTTP, or an ERROR event with code 410) means the version was
   compacted away, so go back to 1. If even the list says "Expired", list
   again with resourceVersion "" (a consistent read from etcd);
4. any other error backs off 800 ms doubling to 30 s, jittered.

Objects pass through an ingest `transform` before they are stored, so the
cache keeps only fields reconcilers read; at 50,000 pods that is the
difference between a flat and a growing manager.

Event handlers only enqueue keys. They run inline on the informer's task and
must not block; the work happens in the controller's workers.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import Callable, Mapping
from typing import Any, Literal

import aiohttp
import attrs
import structlog

from glimmer.engine.cache import IndexFunc, Store
from glimmer.engine.client import (
    JSON,
    ApiError,
    KubeClient,
    Resource,
    is_gone,
    is_transient,
    object_key,
    resource_version,
)
from glimmer.engine.clock import Clock, MonotonicClock
from glimmer.engine.metrics import EngineMetrics
from glimmer.engine.ratelimit import Backoff

log = structlog.get_logger("glimmer.engine.informer")

Transform = Callable[[JSON], JSON]

_ALWAYS_KEPT_METADATA = (
    "name", "namespace", "uid", "resourceVersion", "generation", "labels", "annotations",
    "ownerReferences", "deletionTimestamp", "finalizers", "creationTimestamp",
)  # fmt: skip


def strip_managed_fields(obj: JSON) -> JSON:
    """Drop `metadata.managedFields`, usually the largest part of an object."""
    meta = obj.get("metadata")
    if isinstance(meta, dict):
        meta.pop("managedFields", None)
    return obj


def keep_fields(*paths: str) -> Transform:
    """A transform keeping identity metadata plus the dotted `paths` given.

    `keep_fields("spec.nodeName", "status.phase")` stores a pod as about a
    tenth of its wire size. Paths through lists keep the whole list.
    """
    split = [tuple(p.split(".")) for p in paths]

    def transform(obj: JSON) -> JSON:
        meta = obj.get("metadata") or {}
        kept: JSON = {
            "apiVersion": obj.get("apiVersion"),
            "kind": obj.get("kind"),
            "metadata": {k: meta[k] for k in _ALWAYS_KEPT_METADATA if k in meta},
        }
        for path in split:
            source: Any = obj
            for part in path:
                if not isinstance(source, dict) or part not in source:
                    break
                source = source[part]
            else:
                target = kept
                for part in path[:-1]:
                    target = target.setdefault(part, {})
                target[path[-1]] = source
        return kept

    return transform


@attrs.frozen
class InformerEvent:
    """What changed in the cache; `old` is set for updates."""

    type: Literal["add", "update", "delete"]
    obj: JSON
    old: JSON | None = None


Handler = Callable[[InformerEvent], None]


@attrs.frozen
class InformerOptions:
    """Timing of the reflector loop (defaults are client-go's)."""

    min_watch_timeout: int = 300
    """Lower bound of the randomised server-side watch timeout, seconds."""
    max_watch_timeout: int = 600
    """Upper bound of the randomised server-side watch timeout, seconds."""
    page_size: int = 500
    """`limit` for list pages; the watch cache may ignore it for resourceVersion "0"."""
    backoff_initial: float = 0.8
    """First delay after an error, seconds."""
    backoff_cap: float = 30.0
    """Largest un-jittered delay after repeated errors, seconds."""


class _WatchGoneError(Exception):
    pass


#: Errors that end an *open* watch stream the way an idle or closing server
#: does (client-go's `IsProbableEOF` and read timeouts): not failures. A
#: refused or failed *open* (connect error, 5xx, 429) is none of these.
_NORMAL_WATCH_END: tuple[type[BaseException], ...] = (
    aiohttp.ServerDisconnectedError,
    aiohttp.ClientPayloadError,
    aiohttp.SocketTimeoutError,
    asyncio.IncompleteReadError,
)


class _VeryShortWatchError(Exception):
    """client-go's "very short watch": closed within a second, having delivered nothing."""


class Informer:
    """List+watch one resource (optionally one namespace/selector) into a `Store`."""

    def __init__(
        self,
        client: KubeClient,
        resource: Resource,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        transform: Transform | None = None,
        indexers: Mapping[str, IndexFunc] | None = None,
        options: InformerOptions | None = None,
        clock: Clock | None = None,
        metrics: EngineMetrics | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self.client = client
        self.resource = resource
        self.namespace = namespace
        self.label_selector = label_selector
        self.transform = transform
        self.store = Store(indexers)
        self.options = options or InformerOptions()
        self._clock: Clock = clock if clock is not None else MonotonicClock()
        self._metrics = metrics
        self._rng = rng or random.Random()
        self._backoff = Backoff(
            clock=self._clock,
            initial=self.options.backoff_initial,
            cap=self.options.backoff_cap,
            rng=self._rng,
        )
        self._handlers: list[Handler] = []
        self._synced = asyncio.Event()
        self._last_rv: str | None = None
        self._rv_unavailable = False
        self._task: asyncio.Task[None] | None = None
        self.lists = 0
        """Full lists performed (initial plus relists)."""
        self._log = log.bind(resource=str(resource), namespace=namespace, selector=label_selector)

    @property
    def name(self) -> str:
        parts = [str(self.resource)]
        if self.namespace:
            parts.append(self.namespace)
        if self.label_selector:
            parts.append(self.label_selector)
        return "/".join(parts)

    # --- public ------------------------------------------------------------

    def add_handler(self, handler: Handler) -> None:
        """Register `handler`; if the cache is already filled it sees an add per object."""
        self._handlers.append(handler)
        if self._synced.is_set():
            for obj in self.store.values():
                handler(InformerEvent("add", obj))

    def add_indexers(self, indexers: Mapping[str, IndexFunc]) -> None:
        self.store.add_indexers(indexers)

    def has_synced(self) -> bool:
        """True once the first full list has been stored."""
        return self._synced.is_set()

    async def wait_for_sync(self) -> None:
        await self._synced.wait()

    @property
    def last_sync_resource_version(self) -> str | None:
        return self._last_rv

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self.run(), name=f"informer:{self.name}")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            try:
                async with asyncio.timeout(10.0):
                    await self._task
            except asyncio.CancelledError:
                pass
            except TimeoutError:
                self._log.error("informer did not stop within 10 s; abandoning it")
            self._task = None

    async def run(self) -> None:
        """The reflector loop; runs until cancelled."""
        while True:
            try:
                await self._list_and_watch()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                await self._back_off(exc)

    async def _back_off(self, exc: Exception) -> None:
        reason = _reason(exc)
        if self._metrics is not None:
            self._metrics.informer_watch_errors.labels(
                resource=str(self.resource), reason=reason
            ).inc()
        delay = self._backoff.next_delay()
        self._log.warning(
            "list/watch failed; backing off",
            reason=reason,
            error=str(exc) or type(exc).__name__,
            delay_s=round(delay, 3),
        )
        await self._clock.sleep(delay)

    # --- reflector -----------------------------------------------------------

    async def _list_and_watch(self) -> None:
        await self._list()
        while True:
            try:
                await self._watch_once()
            except _VeryShortWatchError as exc:
                # A server that closes every watch at once must not be hammered.
                await self._back_off(exc)
            except _WatchGoneError:
                self._log.info("watch resourceVersion expired; relisting", rv=self._last_rv)
                return
            except Exception as exc:
                if is_gone(exc):
                    self._log.info("watch got 410 Gone; relisting", rv=self._last_rv)
                    return
                if not is_transient(exc):
                    raise
                # The cache is still valid: re-watch from the last version.
                await self._back_off(exc)

    def _list_resource_version(self) -> str:
        if self._last_rv is None:
            return "0"
        if self._rv_unavailable:
            return ""
        return self._last_rv

    async def _list(self) -> None:
        rv = self._list_resource_version()
        try:
            items, list_rv = await self._list_pages(rv)
        except ApiError as exc:
            if not is_gone(exc) or rv == "":
                raise
            # The version we asked for is compacted: read the latest from etcd.
            self._rv_unavailable = True
            items, list_rv = await self._list_pages("")
        self._rv_unavailable = False
        self.lists += 1
        if self._metrics is not None:
            self._metrics.informer_lists.labels(resource=str(self.resource)).inc()
        self._replace(items)
        self._last_rv = list_rv
        self._backoff.reset()
        if not self._synced.is_set():
            self._synced.set()
            if self._metrics is not None:
                self._metrics.informer_synced.labels(resource=str(self.resource)).set(1)
        self._log.debug("listed", count=len(items), rv=list_rv)

    async def _list_pages(self, rv: str) -> tuple[list[JSON], str]:
        items: list[JSON] = []
        token: str | None = None
        list_rv = ""
        while True:
            page = await self.client.list(
                self.resource,
                namespace=self.namespace,
                label_selector=self.label_selector,
                # The apiserver refuses resourceVersion together with `continue`.
                resource_version=None if token else rv,
                limit=self.options.page_size,
                continue_token=token,
            )
            meta = page.get("metadata") or {}
            if not token:
                list_rv = str(meta.get("resourceVersion", ""))
            for item in page.get("items") or []:
                # List items omit apiVersion/kind; restore them so the cached
                # object reads like a watched one.
                item.setdefault("apiVersion", self.resource.api_version)
                item.setdefault("kind", self.resource.kind)
                items.append(self._ingest(item))
            token = meta.get("continue") or None
            if not token:
                return items, list_rv

    def _ingest(self, obj: JSON) -> JSON:
        return self.transform(obj) if self.transform is not None else obj

    def _replace(self, items: list[JSON]) -> None:
        fresh = {object_key(obj): obj for obj in items}
        for key in list(self.store.keys()):
            if key not in fresh:
                gone = self.store.remove(key)
                if gone is not None:
                    self._emit(InformerEvent("delete", gone))
        for obj in fresh.values():
            old = self.store.upsert(obj)
            if old is None:
                self._emit(InformerEvent("add", obj))
            else:
                self._emit(InformerEvent("update", obj, old))

    async def _watch_once(self) -> None:
        timeout = self._rng.randint(self.options.min_watch_timeout, self.options.max_watch_timeout)
        stream = self.client.watch(
            self.resource,
            namespace=self.namespace,
            label_selector=self.label_selector,
            resource_version=self._last_rv,
            timeout_seconds=timeout,
            allow_bookmarks=True,
        )
        began = self._clock.now()
        delivered = 0
        ended_by = "end of stream"
        try:
            async with contextlib.aclosing(stream) as events:
                async for event in events:
                    delivered += 1
                    self._handle(event.type, event.object)
        except _NORMAL_WATCH_END as exc:
            ended_by = str(exc) or type(exc).__name__
        if delivered == 0 and self._clock.now() - began < 1.0:
            raise _VeryShortWatchError(f"watch of {self.name} closed at once with no events")
        self._log.debug("watch closed; re-watching", ended_by=ended_by, events=delivered,
                        rv=self._last_rv)  # fmt: skip

    def _handle(self, event_type: str, obj: JSON) -> None:
        if self._metrics is not None:
            self._metrics.informer_events.labels(resource=str(self.resource), type=event_type).inc()
        if event_type == "ERROR":
            code = obj.get("code")
            if code == 410 or obj.get("reason") in ("Expired", "Gone"):
                raise _WatchGoneError(str(obj.get("message", "")))
            raise ApiError(
                status=int(code or 500), reason=str(obj.get("reason", "WatchError")), body=obj
            )
        rv = resource_version(obj)
        if event_type == "BOOKMARK":
            if rv:
                self._last_rv = rv
            return
        stored = self._ingest(obj)
        if event_type in ("ADDED", "MODIFIED"):
            old = self.store.upsert(stored)
            if old is None:
                self._emit(InformerEvent("add", stored))
            else:
                self._emit(InformerEvent("update", stored, old))
        elif event_type == "DELETED":
            gone = self.store.remove(object_key(stored))
            self._emit(InformerEvent("delete", gone if gone is not None else stored))
        else:
            self._log.warning("unknown watch event type", type=event_type)
        if rv:
            self._last_rv = rv

    def _emit(self, event: InformerEvent) -> None:
        for handler in self._handlers:
            try:
                handler(event)
            except Exception:
                # A failing handler must not wedge the cache for everyone else.
                self._log.exception("event handler failed", event_type=event.type)


def _reason(exc: BaseException) -> str:
    if isinstance(exc, ApiError):
        return str(exc.status)
    if isinstance(exc, TimeoutError):
        return "timeout"
    return type(exc).__name__


_FactoryKey = tuple[Resource, str | None, str | None]


class InformerFactory:
    """Shares one informer per (resource, namespace, label selector)."""

    def __init__(
        self,
        client: KubeClient,
        *,
        clock: Clock | None = None,
        metrics: EngineMetrics | None = None,
        options: InformerOptions | None = None,
    ) -> None:
        self.client = client
        self._clock = clock
        self._metrics = metrics
        self._options = options
        self._informers: dict[_FactoryKey, Informer] = {}
        self._started = False

    def informer(
        self,
        resource: Resource,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        transform: Transform | None = None,
        indexers: Mapping[str, IndexFunc] | None = None,
    ) -> Informer:
        """The shared informer for this scope, created on first request.

        A second caller asking for a different transform is refused: the
        cache can only be shaped one way, and silently keeping the first
        would hide fields from the second.
        """
        key = (resource, namespace, label_selector or None)
        informer = self._informers.get(key)
        if informer is None:
            informer = Informer(
                self.client, resource, namespace=namespace, label_selector=label_selector,
                transform=transform, indexers=indexers, options=self._options,
                clock=self._clock, metrics=self._metrics,
            )  # fmt: skip
            self._informers[key] = informer
            if self._started:
                informer.start()
            return informer
        if transform is not None and informer.transform is not transform:
            raise ValueError(f"informer {informer.name} already has a different transform")
        if indexers:
            informer.add_indexers(indexers)
        return informer

    @property
    def informers(self) -> list[Informer]:
        return list(self._informers.values())

    def start(self) -> None:
        self._started = True
        for informer in self._informers.values():
            informer.start()

    def has_synced(self) -> bool:
        return all(i.has_synced() for i in self._informers.values())

    async def wait_for_sync(self) -> None:
        for informer in list(self._informers.values()):
            await informer.wait_for_sync()

    async def stop(self) -> None:
        for informer in self._informers.values():
            await informer.stop()
