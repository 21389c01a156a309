"""The confirming reader every reconciler reads the cluster through (docs/development.md
§7; the table is in ``glimmer.controllers.operator``).

One meaning per method, whichever reconciler calls it:

- :meth:`ConfirmingReader.get` / :meth:`~ConfirmingReader.get_metadata` /
  :meth:`~ConfirmingReader.list` read the informer cache. A read the cache cannot
  answer (:class:`~glimmer.engine.NotCachedError`: no informer, another namespace, not
  synced) is made live instead, and so is a cached *miss*: "not found" is the answer a
  stale cache gets harmfully wrong (a run taken as gone, a node taken as absent), and
  a miss is rare, so it is always confirmed.
- :meth:`~ConfirmingReader.get_before_create` is the one exception to the confirmed
  miss: the cached object, None on a cached miss *not* confirmed, live where no cache
  covers the read. Only for a caller whose next step on None is a create, which the
  apiserver refuses (AlreadyExists) when the cache lagged.
- :meth:`~ConfirmingReader.peek` is the cache alone, never a request: None when no
  cache holds it. Only for a write preconditioned on the object's resourceVersion (a
  409 when the cache lagged); what the cache says needs no write is read live.
- :meth:`~ConfirmingReader.live_get` / :meth:`~ConfirmingReader.live_list` ask the
  apiserver; the caller names the rule that demands it (E6, E10-E12, E3, E22, H), and
  :meth:`~ConfirmingReader.confirm` checks a view against a live read.

A reconciler that needs memory of its own (the run controller's behind-our-write chain
and pods created but not yet cached) keeps it in its own subclass.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from glimmer.controllers.kit.view import ObjectView
from glimmer.engine import (
    ApiError,
    CachedReader,
    InformerFactory,
    KubeClient,
    NotCachedError,
    Readers,
    Resource,
    is_not_found,
)

JSON = dict[str, Any]
Objects = list[JSON]
"""What a list read returns (named so that a method called ``list`` can return it)."""


class StaleViewError(Exception):
    """The object as read is older than the apiserver's: the pass stops and requeues."""


def uncached(client: KubeClient) -> Readers:
    """Readers whose cache holds nothing, so every read is live (unit tests, and a
    registration used without a manager's informers)."""
    return Readers.over(client, InformerFactory(client))


class ConfirmingReader:
    """Cached reads with a live fallback and confirmed misses (module docstring)."""

    def __init__(self, readers: Readers) -> None:
        self.readers = readers

    @property
    def cached(self) -> CachedReader:
        """The cache every cached read goes through (``readers.cached``)."""
        return self.readers.cached

    @cached.setter
    def cached(self, reader: CachedReader) -> None:
        self.readers = attrs.evolve(self.readers, cached=reader)

    # --- cached (falls back to live) ---------------------------------------------------

    async def get(
        self, resource: Resource, name: str, *, namespace: str | None = None
    ) -> JSON | None:
        """The object, or None when it does not exist; cached, a miss confirmed live."""
        try:
            return await self.cached.get(resource, name, namespace=namespace)
        except NotCachedError:
            pass
        except ApiError as err:
            if not is_not_found(err):
                raise
        return await self.live_get(resource, name, namespace=namespace)

    async def get_metadata(
        self, resource: Resource, name: str, *, namespace: str | None = None
    ) -> JSON | None:
        """Only the object's ``metadata``, or None when it does not exist; cached (a copy
        of the metadata alone, not of a megabyte of run status), a miss confirmed live."""
        try:
            return await self.cached.get_metadata(resource, name, namespace=namespace)
        except NotCachedError:
            pass
        except ApiError as err:
            if not is_not_found(err):
                raise
        live = await self.live_get(resource, name, namespace=namespace)
        return None if live is None else dict(ObjectView(live).meta)

    async def get_before_create(
        self, resource: Resource, name: str, *, namespace: str | None = None
    ) -> JSON | None:
        """The cached object, or None on a cache miss *not* confirmed: only for a caller
        whose next step is a create, which the apiserver refuses (AlreadyExists) when the
        cache lagged. A read no cache covers goes live."""
        try:
            return await self.cached.get(resource, name, namespace=namespace)
        except NotCachedError:
            return await self.live_get(resource, name, namespace=namespace)
        except ApiError as err:
            if is_not_found(err):
                return None
            raise

    async def peek(
        self, resource: Resource, name: str, *, namespace: str | None = None
    ) -> JSON | None:
        """The cached object alone, never a request: None when no cache holds it.

        Only for a write preconditioned on the object's resourceVersion, so that the
        apiserver refuses it (409) when the cache lagged; what the cache says needs no
        write is no decision at all, and is read live by the caller (E22)."""
        try:
            return await self.cached.get(resource, name, namespace=namespace)
        except NotCachedError:
            return None
        except ApiError as err:
            if is_not_found(err):
                return None
            raise

    async def list(
        self,
        resource: Resource,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
    ) -> Objects:
        """Matching objects from the cache, or live where no cache covers the read."""
        try:
            return await self.cached.list(
                resource, namespace=namespace, label_selector=label_selector
            )
        except NotCachedError:
            return await self.live_list(
                resource, namespace=namespace, label_selector=label_selector
            )

    # --- live ------------------------------------------------------------------------

    async def live_get(
        self, resource: Resource, name: str, *, namespace: str | None = None
    ) -> JSON | None:
        """Uncached; None when the object does not exist."""
        try:
            return await self.readers.live.get(resource, name, namespace=namespace)
        except ApiError as err:
            if is_not_found(err):
                return None
            raise

    async def live_list(
        self,
        resource: Resource,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
    ) -> Objects:
        return await self.readers.live.list(
            resource, namespace=namespace, label_selector=label_selector
        )

    async def confirm(self, resource: Resource, obj: Mapping[str, Any]) -> None:
        """Raise :class:`StaleViewError` unless ``obj`` is what the apiserver holds now
        (same UID and resourceVersion), by a live read."""
        view = ObjectView(obj)
        current = await self.live_get(resource, view.name, namespace=view.namespace or None)
        now = ObjectView(current or {})
        if (now.uid, now.resource_version) != (view.uid, view.resource_version):
            raise StaleViewError(
                f"{resource} {view.name} moved on from resourceVersion {view.resource_version}"
            )
