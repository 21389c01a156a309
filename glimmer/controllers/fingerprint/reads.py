"""Cached reads with a live fallback, for the fingerprint and schedule reconcilers.

A cached "not found" is confirmed live before anything acts on it (creating an
object that exists, or taking a node as gone); a read no cache covers goes live.
"""

from __future__ import annotations

from typing import Any

from glimmer.engine import ApiError, NotCachedError, Readers, Resource, is_not_found

JSON = dict[str, Any]


class Reads:
    def __init__(self, readers: Readers) -> None:
        self.readers = readers

    async def get(
        self, resource: Resource, name: str, *, namespace: str | None = None
    ) -> JSON | None:
        """The object, or None when it does not exist; cached, a miss confirmed live."""
        try:
            return await self.readers.cached.get(resource, name, namespace=namespace)
        except NotCachedError:
            pass
        except ApiError as err:
            if not is_not_found(err):
                raise
        return await self.live_get(resource, name, namespace=namespace)

    async def peek(
        self, resource: Resource, name: str, *, namespace: str | None = None
    ) -> JSON | None:
        """The cached object, or None on a cache miss *not* confirmed: only for a caller
        whose next step is a create, which the apiserver refuses (AlreadyExists) when the
        cache lagged. A read no cache covers goes live."""
        try:
            return await self.readers.cached.get(resource, name, namespace=namespace)
        except NotCachedError:
            return await self.live_get(resource, name, namespace=namespace)
        except ApiError as err:
            if is_not_found(err):
                return None
            raise

    async def live_get(
        self, resource: Resource, name: str, *, namespace: str | None = None
    ) -> JSON | None:
        try:
            return await self.readers.live.get(resource, name, namespace=namespace)
        except ApiError as err:
            if is_not_found(err):
                return None
            raise

    async def list(
        self, resource: Resource, *, namespace: str | None = None, label_selector: str | None = None
    ) -> list[JSON]:
        """Cached when a cache covers the whole scope, else live."""
        try:
            return await self.readers.cached.list(
                resource, namespace=namespace, label_selector=label_selector
            )
        except NotCachedError:
            return await self.readers.live.list(
                resource, namespace=namespace, label_selector=label_selector
            )
