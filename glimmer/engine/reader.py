"""Two ways to read objects, named so that every read says which one it is.

A reconciler reads through :class:`Readers`:

- ``cached`` answers from the informers' stores: no request and no rate-limit token,
  but eventually consistent. It lags the apiserver by the watch delay, so it does not
  yet show a write this process has just made, and it holds only what the informer's
  ingest transform kept.
- ``live`` asks the apiserver: consistent (a quorum read from etcd), at the price of a
  request against the client's QPS budget.

Cached is the default. A read goes live when acting on a stale copy would do harm the
apiserver cannot catch: a decision that leads to a write without a resourceVersion
precondition, a read right after our own write, a read whose "not found" would be taken
as "gone". Each such read names the rule that demands it at the call site.

The cached reader fails closed. A read that no informer can answer completely raises
:class:`NotCachedError` instead of answering "not found" or an empty list: no informer
for the resource, one scoped to another namespace, one whose label selector may exclude
objects the caller asks for, one without the requested index, or one that has not
finished its first list. Objects come back as deep copies, so a reconciler that edits
what it read cannot corrupt the cache (controller-runtime's default too). The two
exceptions are named as such: :meth:`CachedReader.by_index_view` and
``by_index(..., shared=True)`` hand out the store's own objects, for hot paths whose
caller only reads (runs at fleet scale).
"""

from __future__ import annotations

import copy
import marshal
from collections.abc import Callable, Mapping
from typing import Any, Protocol, TypeVar

import attrs

from glimmer.engine.cache import LabelSelector
from glimmer.engine.client import JSON, ApiError, KubeClient, Resource, object_key
from glimmer.engine.informer import Informer, InformerFactory

T = TypeVar("T")

Objects = list[JSON]
"""What a list read returns (named so that methods called ``list`` can return it)."""


def copy_json(obj: JSON) -> JSON:
    """A deep copy of a decoded JSON object, as `copy.deepcopy` makes, ~5x faster.

    Cached reads copy every object they return, and a reconciler that reads a large run
    each pass spent a third of its CPU in `copy.deepcopy` (docs/performance.md's profile). A
    `marshal` round trip copies dicts, lists, strings and numbers in C, keeping key
    order and any sharing inside the object (as deepcopy's memo does). Anything marshal
    cannot carry (a transform that stored another type) falls back to deepcopy.
    """
    try:
        copied = marshal.loads(marshal.dumps(obj))
    except ValueError:
        return copy.deepcopy(obj)
    result: JSON = copied
    return result


class Reader(Protocol):
    """Reads objects; `get` raises `ApiError` 404 when the object does not exist."""

    async def get(self, resource: Resource, name: str, *, namespace: str | None = None) -> JSON: ...

    async def list(
        self,
        resource: Resource,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
    ) -> Objects:
        """Every matching object (all pages), each with `apiVersion` and `kind` set."""
        ...


class NotCachedError(LookupError):
    """The informer caches cannot answer this read completely; read live, or watch it."""


def _not_found(resource: Resource, name: str) -> ApiError:
    return ApiError(
        status=404,
        reason="Not Found",
        body={
            "kind": "Status",
            "status": "Failure",
            "reason": "NotFound",
            "message": f'{resource} "{name}" not found in the informer cache',
            "code": 404,
        },
    )


class LiveReader:
    """Reads straight from the apiserver through `client` (uncached)."""

    def __init__(self, client: KubeClient, *, page_size: int = 500) -> None:
        self.client = client
        self.page_size = page_size

    async def get(self, resource: Resource, name: str, *, namespace: str | None = None) -> JSON:
        return await self.client.get(resource, name, namespace=namespace)

    async def list(
        self,
        resource: Resource,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
    ) -> Objects:
        items: Objects = []
        token: str | None = None
        while True:
            page = await self.client.list(
                resource,
                namespace=namespace,
                label_selector=label_selector,
                limit=self.page_size,
                continue_token=token,
            )
            for item in page.get("items") or []:
                # List items omit apiVersion/kind; restore them so a listed object
                # reads like a fetched (or cached) one.
                item.setdefault("apiVersion", resource.api_version)
                item.setdefault("kind", resource.kind)
                items.append(item)
            token = (page.get("metadata") or {}).get("continue") or None
            if not token:
                return items


class CachedReader:
    """Reads from the informers of one `InformerFactory` (a manager's caches)."""

    def __init__(self, informers: InformerFactory) -> None:
        self.informers = informers

    async def get(
        self,
        resource: Resource,
        name: str,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
    ) -> JSON:
        """The cached object; `ApiError` 404 if the covering cache does not hold it.

        Where the only cache for `resource` is filled through a label selector, pass a
        `label_selector` that implies it: the caller then states it only wants objects
        that selector matches, and a miss is a true "not found".
        """
        return copy_json(self._stored(resource, name, namespace, label_selector))

    async def get_metadata(
        self,
        resource: Resource,
        name: str,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
    ) -> JSON:
        """A copy of only the cached object's ``metadata`` (UID, resourceVersion, labels,
        annotations, owners, finalizers), answered and refused exactly as :meth:`get`.

        For a reader that needs to know *which* object exists, not what it holds: a
        run's status can be a megabyte, its metadata a few hundred bytes.
        """
        obj = self._stored(resource, name, namespace, label_selector)
        meta = obj.get("metadata")
        return copy_json(meta) if isinstance(meta, dict) else {}

    def _stored(
        self, resource: Resource, name: str, namespace: str | None, label_selector: str | None
    ) -> JSON:
        _scope_check(resource, namespace)
        selector = LabelSelector.parse(label_selector)
        informer = self._covering(resource, namespace, selector)
        key = f"{namespace}/{name}" if resource.namespaced else name
        obj = informer.store.get(key)
        if obj is None or not selector.matches(obj):
            raise _not_found(resource, name)
        return obj

    async def list(
        self,
        resource: Resource,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
    ) -> Objects:
        """Matching cached objects, by key. Scans the cache: prefer `by_index` on hot paths."""
        _scope_check(resource, namespace, listing=True)
        selector = LabelSelector.parse(label_selector)
        informer = self._covering(resource, namespace, selector)
        return _select(informer.store.values(), namespace, selector)

    def by_index(
        self,
        resource: Resource,
        index: str,
        value: str,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        shared: bool = False,
    ) -> Objects:
        """Cached objects whose `index` function returned `value` (O(result)), copies.

        ``shared``: the informer store's own objects instead, uncopied (at fleet scale: a run
        pass that deep-copied up to a thousand cached pods, most of them never read,
        spent 12% of the manager's CPU doing so). The caller must not mutate them or
        anything nested in them (copy what it edits), and must not assume an object
        stays current across an await: the informer replaces an object on each event,
        never edits it, so a held reference keeps showing the version it was read at.
        """
        _scope_check(resource, namespace, listing=True)
        selector = LabelSelector.parse(label_selector)
        informer = self._covering(resource, namespace, selector, index=index)
        found = _chosen(informer.store.by_index(index, value), namespace, selector)
        return found if shared else [copy_json(obj) for obj in found]

    def by_index_view(
        self,
        resource: Resource,
        index: str,
        value: str,
        *,
        view: Callable[[Mapping[str, Any]], T],
        namespace: str | None = None,
        label_selector: str | None = None,
    ) -> tuple[T, ...]:
        """``view`` of each object :meth:`by_index` would return, read in place.

        For a reader that derives a small answer from large objects (one node's verdict
        from a run whose status is a megabyte): nothing is copied. ``view`` must not
        mutate the object, and its answer must not hold any part of it (build a new value,
        or copy what it keeps), since the cache's object changes under it later."""
        _scope_check(resource, namespace, listing=True)
        selector = LabelSelector.parse(label_selector)
        informer = self._covering(resource, namespace, selector, index=index)
        chosen = _chosen(informer.store.by_index(index, value), namespace, selector)
        return tuple(view(obj) for obj in chosen)

    def _covering(
        self,
        resource: Resource,
        namespace: str | None,
        selector: LabelSelector,
        *,
        index: str | None = None,
    ) -> Informer:
        """The synced informer holding every object of this scope, else NotCachedError."""
        scoped = [
            informer
            for informer in self.informers.informers
            if informer.resource == resource
            and (informer.namespace is None or informer.namespace == namespace)
            and selector.implies(LabelSelector.parse(informer.label_selector))
        ]
        if index is not None:
            scoped = [i for i in scoped if i.store.has_index(index)]
        where = f" in namespace {namespace!r}" if namespace else ""
        wanted = f" matching {_describe(selector)!r}" if selector.requirements else ""
        indexed = f" with index {index!r}" if index is not None else ""
        if not scoped:
            raise NotCachedError(
                f"no informer caches every {resource}{where}{wanted}{indexed}; "
                "read it live or add a Watch for it"
            )
        for informer in scoped:
            if informer.has_synced():
                return informer
        raise NotCachedError(f"the informer for {resource}{where} has not synced yet")


@attrs.frozen
class Readers:
    """The cached and the live reader a reconciler chooses between at each read."""

    cached: CachedReader
    live: LiveReader

    @classmethod
    def over(cls, client: KubeClient, informers: InformerFactory) -> Readers:
        return cls(cached=CachedReader(informers), live=LiveReader(client))


def _scope_check(resource: Resource, namespace: str | None, *, listing: bool = False) -> None:
    if not resource.namespaced and namespace is not None:
        raise ValueError(f"{resource} is cluster-scoped; got namespace {namespace!r}")
    if resource.namespaced and namespace is None and not listing:
        raise ValueError(f"{resource} is namespaced; a namespace is required")


def _chosen(objects: list[JSON], namespace: str | None, selector: LabelSelector) -> Objects:
    """The stored ``objects`` in ``namespace`` matching ``selector``, by key (uncopied)."""
    chosen = [
        obj
        for obj in objects
        if (namespace is None or _namespace_of(obj) == namespace) and selector.matches(obj)
    ]
    return sorted(chosen, key=object_key)


def _select(objects: list[JSON], namespace: str | None, selector: LabelSelector) -> Objects:
    return [copy_json(obj) for obj in _chosen(objects, namespace, selector)]


def _namespace_of(obj: Mapping[str, Any]) -> str | None:
    namespace = (obj.get("metadata") or {}).get("namespace")
    return str(namespace) if namespace else None


def _describe(selector: LabelSelector) -> str:
    parts = []
    for r in sorted(selector.requirements, key=lambda r: (r.key, r.operator, r.value)):
        if r.operator in ("=", "!="):
            parts.append(f"{r.key}{r.operator}{r.value}")
        else:
            parts.append(r.key if r.operator == "exists" else f"!{r.key}")
    return ",".join(parts)
