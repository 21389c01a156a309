"""An in-memory apiserver behind the `KubeClient` seam, for reconciler unit tests.

It keeps the apiserver behaviours reconcilers rely on, so a reconciler that
passes against the fake is not relying on something the real server refuses:
- a global, increasing `resourceVersion`; writes carrying a stale
  `metadata.resourceVersion` get 409 Conflict;
- `generation` bumps on spec changes; writes to the main resource keep
  `status`, writes to the `status` subresource change only `status`;
- deletes honour finalizers (set `deletionTimestamp`, remove when the last
  finalizer goes) and uid/resourceVersion preconditions;
- watches replay from a resourceVersion, and after `compact()` an old
  resourceVersion gets a 410 ERROR event, as etcd compaction causes;
- errors can be injected per verb;
- every request is recorded in order with what it sent (`requests`), so a test
  can assert the order of writes and what each one carried;
- pod logs are bytes, streamed in chunks, and can be cut after a byte count.

Label selectors are read by the informer cache's `LabelSelector` (equality terms); a
selector it cannot evaluate (set-based, or an invalid key) raises ValueError, as a
field selector does, rather than quietly matching nothing.

Not modelled: field ownership in server-side apply (applied as a JSON merge
patch), strategic merge patch list semantics (merged as a JSON merge patch),
admission, and defaulting.
"""

from __future__ import annotations

import asyncio
import copy
import datetime
import uuid
from collections import defaultdict
from collections.abc import AsyncGenerator, Mapping
from typing import Any

import attrs

from glimmer.engine.cache import LabelSelector
from glimmer.engine.client import (
    JSON,
    LOG_CHUNK_BYTES,
    PODS,
    ApiError,
    PatchType,
    Resource,
    WatchEvent,
)

_Key = tuple[Resource, str, str]


@attrs.frozen
class Request:
    """One call made to the fake, as the apiserver would have received it."""

    verb: str
    """get, list, watch, create, replace, patch, apply, delete or log."""
    resource: str
    namespace: str | None
    name: str | None
    body: Any = None
    """A deep copy of the body or patch sent (None for reads and deletes)."""
    subresource: str | None = None
    patch_type: str | None = None
    """The patch's content type for `patch` and `apply`."""


@attrs.frozen
class _PodLog:
    data: bytes
    fail_after_bytes: int | None = None


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def _status_error(code: int, reason: str, message: str) -> ApiError:
    return ApiError(
        status=code,
        reason=reason,
        body={"kind": "Status", "status": "Failure", "reason": reason, "message": message,
              "code": code},
    )  # fmt: skip


class _Watcher:
    def __init__(self, resource: Resource, namespace: str | None, selector: str | None) -> None:
        self.resource = resource
        self.namespace = namespace
        self.selector = LabelSelector.parse(selector)
        self.events: asyncio.Queue[WatchEvent | None] = asyncio.Queue()

    def wants(self, resource: Resource, obj: Mapping[str, Any]) -> bool:
        if resource != self.resource:
            return False
        ns = (obj.get("metadata") or {}).get("namespace")
        if self.namespace is not None and ns != self.namespace:
            return False
        return self.selector.matches(obj)


class FakeClient:
    """An in-memory `KubeClient`."""

    def __init__(self) -> None:
        self._objects: dict[_Key, JSON] = {}
        self._rv = 0
        self._log: dict[Resource, list[tuple[int, str, JSON]]] = defaultdict(list)
        self._compacted: dict[Resource, int] = defaultdict(int)
        self._watchers: list[_Watcher] = []
        self._errors: dict[str, list[BaseException]] = defaultdict(list)
        self._pod_logs: dict[tuple[str, str], _PodLog] = {}
        self.requests: list[Request] = []
        """Every call in the order it was made, with what it sent."""
        self.calls: list[tuple[str, str, str | None, str | None]] = []
        """(verb, resource, namespace, name) of every call (`requests`, abridged)."""

    # --- test controls -----------------------------------------------------

    def inject_error(self, verb: str, error: BaseException, *, times: int = 1) -> None:
        """Make the next `times` calls of `verb` (get, list, watch, create, ...) raise."""
        self._errors[verb].extend([error] * times)

    def compact(self) -> None:
        """Forget history: watches from any earlier resourceVersion now get 410."""
        for resource in set(self._log) | set(self._compacted):
            self._log[resource].clear()
            self._compacted[resource] = self._rv

    def close_watches(self) -> None:
        """End every open watch stream, as a server timeout or restart would."""
        for watcher in self._watchers:
            watcher.events.put_nowait(None)
        self._watchers.clear()

    @property
    def open_watches(self) -> int:
        return len(self._watchers)

    def set_pod_log(
        self,
        name: str,
        *,
        namespace: str,
        text: str | bytes,
        fail_after_bytes: int | None = None,
    ) -> None:
        """The pod's log (``str`` is stored as UTF-8). ``fail_after_bytes``: every read
        breaks with ``OSError`` after that many bytes, as a dropped connection would."""
        data = text.encode() if isinstance(text, str) else bytes(text)
        self._pod_logs[(namespace, name)] = _PodLog(data, fail_after_bytes)

    def objects(self, resource: Resource) -> list[JSON]:
        return [copy.deepcopy(o) for (r, _, _), o in self._objects.items() if r == resource]

    @property
    def resource_version(self) -> int:
        return self._rv

    # --- internals ---------------------------------------------------------

    def _record(
        self,
        verb: str,
        resource: Resource,
        namespace: str | None,
        name: str | None,
        *,
        body: Any = None,
        subresource: str | None = None,
        patch_type: str | None = None,
    ) -> None:
        self.requests.append(
            Request(
                verb=verb,
                resource=str(resource),
                namespace=namespace,
                name=name,
                body=copy.deepcopy(body),
                subresource=subresource,
                patch_type=patch_type,
            )
        )
        self.calls.append((verb, str(resource), namespace, name))
        if self._errors[verb]:
            raise self._errors[verb].pop(0)

    def _key(self, resource: Resource, name: str, namespace: str | None) -> _Key:
        if resource.namespaced and not namespace:
            raise ValueError(f"{resource} is namespaced; a namespace is required")
        return (resource, (namespace or "") if resource.namespaced else "", name)

    def _bump(self, resource: Resource, event: str, obj: JSON) -> None:
        self._rv += 1
        obj["metadata"]["resourceVersion"] = str(self._rv)
        snapshot = copy.deepcopy(obj)
        self._log[resource].append((self._rv, event, snapshot))
        for watcher in self._watchers:
            if watcher.wants(resource, snapshot):
                watcher.events.put_nowait(WatchEvent(type=event, object=copy.deepcopy(snapshot)))

    def _existing(self, resource: Resource, name: str, namespace: str | None) -> JSON:
        obj = self._objects.get(self._key(resource, name, namespace))
        if obj is None:
            raise _status_error(404, "NotFound", f'{resource} "{name}" not found')
        return obj

    def _check_rv(self, current: JSON, wanted: Mapping[str, Any]) -> None:
        rv = (wanted.get("metadata") or {}).get("resourceVersion")
        if rv and rv != current["metadata"]["resourceVersion"]:
            name = current["metadata"]["name"]
            raise _status_error(
                409, "Conflict",
                f'Operation cannot be fulfilled on "{name}": the object has been modified; '
                "please apply your changes to the latest version and try again",
            )  # fmt: skip

    def _store(
        self, resource: Resource, current: JSON, updated: JSON, *, subresource: str | None
    ) -> JSON:
        """Write `updated` over `current` with the apiserver's bookkeeping."""
        meta = current["metadata"]
        if subresource == "status":
            result = copy.deepcopy(current)
            result["status"] = copy.deepcopy(updated.get("status"))
        else:
            result = copy.deepcopy(updated)
            if "status" in current:
                result["status"] = copy.deepcopy(current["status"])
            else:
                result.pop("status", None)
            new_meta = result.setdefault("metadata", {})
            for fixed in ("name", "namespace", "uid", "creationTimestamp", "deletionTimestamp"):
                if fixed in meta:
                    new_meta[fixed] = meta[fixed]
            new_meta["generation"] = meta.get("generation", 1)
            if result.get("spec") != current.get("spec"):
                new_meta["generation"] = meta.get("generation", 1) + 1
        if result == current:
            return copy.deepcopy(current)
        key = self._key(resource, meta["name"], meta.get("namespace"))
        if result["metadata"].get("deletionTimestamp") and not result["metadata"].get("finalizers"):
            del self._objects[key]
            self._bump(resource, "DELETED", result)
            return copy.deepcopy(result)
        self._objects[key] = result
        self._bump(resource, "MODIFIED", result)
        return copy.deepcopy(result)

    # --- KubeClient ----------------------------------------------------------

    async def get(self, resource: Resource, name: str, *, namespace: str | None = None) -> JSON:
        self._record("get", resource, namespace, name)
        return copy.deepcopy(self._existing(resource, name, namespace))

    async def list(
        self,
        resource: Resource,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        resource_version: str | None = None,
        limit: int | None = None,
        continue_token: str | None = None,
    ) -> JSON:
        self._record("list", resource, namespace, None)
        if field_selector:
            raise ValueError("FakeClient does not evaluate field selectors")
        selector = LabelSelector.parse(label_selector)
        items = [
            copy.deepcopy(obj)
            for (r, ns, _), obj in sorted(self._objects.items(), key=lambda kv: kv[0][1:])
            if r == resource and (namespace is None or ns == namespace) and selector.matches(obj)
        ]
        start = int(continue_token) if continue_token else 0
        end = len(items) if not limit else start + limit
        meta: JSON = {"resourceVersion": str(self._rv)}
        if end < len(items):
            meta["continue"] = str(end)
        return {
            "apiVersion": resource.api_version,
            "kind": f"{resource.kind}List",
            "metadata": meta,
            "items": items[start:end],
        }

    async def watch(
        self,
        resource: Resource,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        resource_version: str | None = None,
        timeout_seconds: int | None = None,
        allow_bookmarks: bool = True,
    ) -> AsyncGenerator[WatchEvent, None]:
        self._record("watch", resource, namespace, None)
        watcher = _Watcher(resource, namespace, label_selector)
        if resource_version in (None, "", "0"):
            for (r, _, _), obj in sorted(self._objects.items(), key=lambda kv: kv[0][1:]):
                if r == resource and watcher.wants(resource, obj):
                    watcher.events.put_nowait(WatchEvent("ADDED", copy.deepcopy(obj)))
        else:
            since = int(resource_version)
            if since < self._compacted[resource]:
                yield WatchEvent(
                    "ERROR",
                    {"kind": "Status", "status": "Failure", "reason": "Expired", "code": 410,
                     "message": f"too old resource version: {since}"},
                )  # fmt: skip
                return
            for rv, event, obj in self._log[resource]:
                if rv > since and watcher.wants(resource, obj):
                    watcher.events.put_nowait(WatchEvent(event, copy.deepcopy(obj)))
        self._watchers.append(watcher)
        try:
            while True:
                item = await watcher.events.get()
                if item is None:
                    return
                yield item
        finally:
            if watcher in self._watchers:
                self._watchers.remove(watcher)

    async def create(
        self, resource: Resource, body: Mapping[str, Any], *, namespace: str | None = None
    ) -> JSON:
        obj = copy.deepcopy(dict(body))
        meta = obj.setdefault("metadata", {})
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = f"{meta['generateName']}{uuid.uuid4().hex[:5]}"
        name = str(meta.get("name", ""))
        self._record("create", resource, namespace, name, body=obj)
        if not name:
            raise _status_error(422, "Invalid", "metadata.name: Required value")
        key = self._key(resource, name, namespace)
        if key in self._objects:
            raise _status_error(409, "AlreadyExists", f'{resource} "{name}" already exists')
        if resource.namespaced:
            meta["namespace"] = namespace
        meta["uid"] = str(uuid.uuid4())
        meta["generation"] = 1
        meta["creationTimestamp"] = datetime.datetime.now(tz=datetime.UTC).strftime(
            "%Y-%m-%dT%H:%M:%SZ"
        )
        obj.setdefault("apiVersion", resource.api_version)
        obj.setdefault("kind", resource.kind)
        self._objects[key] = obj
        self._bump(resource, "ADDED", obj)
        return copy.deepcopy(obj)

    async def replace(
        self,
        resource: Resource,
        body: Mapping[str, Any],
        *,
        namespace: str | None = None,
        subresource: str | None = None,
    ) -> JSON:
        name = str((body.get("metadata") or {}).get("name", ""))
        self._record("replace", resource, namespace, name, body=body, subresource=subresource)
        current = self._existing(resource, name, namespace)
        self._check_rv(current, body)
        return self._store(resource, current, copy.deepcopy(dict(body)), subresource=subresource)

    async def patch(
        self,
        resource: Resource,
        name: str,
        patch: Any,
        *,
        namespace: str | None = None,
        patch_type: PatchType = PatchType.MERGE,
        subresource: str | None = None,
    ) -> JSON:
        self._record(
            "patch", resource, namespace, name, body=patch, subresource=subresource,
            patch_type=patch_type.value,
        )  # fmt: skip
        current = self._existing(resource, name, namespace)
        if patch_type is PatchType.JSON:
            # Imported here so production, which never builds a FakeClient, does
            # not need jsonpatch installed.
            import jsonpatch
            import jsonpointer

            try:
                updated = jsonpatch.apply_patch(current, patch)
            except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException) as exc:
                raise _status_error(422, "Invalid", str(exc)) from exc
        else:
            self._check_rv(current, patch)
            updated = merge_patch(current, patch)
        return self._store(resource, current, updated, subresource=subresource)

    async def apply(
        self,
        resource: Resource,
        body: Mapping[str, Any],
        *,
        namespace: str | None = None,
        subresource: str | None = None,
        force: bool = False,
    ) -> JSON:
        name = str((body.get("metadata") or {}).get("name", ""))
        key = self._key(resource, name, namespace)
        if key not in self._objects and subresource is None:
            return await self.create(resource, body, namespace=namespace)
        self._record(
            "apply", resource, namespace, name, body=body, subresource=subresource,
            patch_type="application/apply-patch+yaml",
        )  # fmt: skip
        current = self._existing(resource, name, namespace)
        self._check_rv(current, body)
        updated = merge_patch(current, dict(body))
        return self._store(resource, current, updated, subresource=subresource)

    async def delete(
        self,
        resource: Resource,
        name: str,
        *,
        namespace: str | None = None,
        precondition_uid: str | None = None,
        precondition_resource_version: str | None = None,
        propagation_policy: str | None = None,
    ) -> JSON:
        options = {
            "preconditionUid": precondition_uid,
            "preconditionResourceVersion": precondition_resource_version,
            "propagationPolicy": propagation_policy,
        }
        self._record(
            "delete", resource, namespace, name,
            body={k: v for k, v in options.items() if v is not None} or None,
        )  # fmt: skip
        current = self._existing(resource, name, namespace)
        meta = current["metadata"]
        if precondition_uid and precondition_uid != meta["uid"]:
            raise _status_error(
                409,
                "Conflict",
                f"Precondition failed: UID in precondition: {precondition_uid}, "
                f"UID in object meta: {meta['uid']}",
            )
        if (
            precondition_resource_version
            and precondition_resource_version != meta["resourceVersion"]
        ):
            raise _status_error(409, "Conflict", "Precondition failed: resourceVersion")
        if meta.get("finalizers"):
            if not meta.get("deletionTimestamp"):
                meta["deletionTimestamp"] = datetime.datetime.now(tz=datetime.UTC).strftime(
                    "%Y-%m-%dT%H:%M:%SZ"
                )
                self._bump(resource, "MODIFIED", current)
            return copy.deepcopy(current)
        del self._objects[self._key(resource, name, namespace)]
        self._bump(resource, "DELETED", current)
        return copy.deepcopy(current)

    async def stream_pod_log(
        self,
        name: str,
        *,
        namespace: str,
        container: str | None = None,
        previous: bool = False,
        limit_bytes: int | None = None,
        chunk_size: int = LOG_CHUNK_BYTES,
        timeout: float | None = None,
    ) -> AsyncGenerator[bytes, None]:
        self._record("log", PODS, namespace, name)
        self._existing(PODS, name, namespace)
        log = self._pod_logs.get((namespace, name), _PodLog(b""))
        data = log.data if limit_bytes is None else log.data[:limit_bytes]
        if log.fail_after_bytes is not None:
            data = data[: log.fail_after_bytes]
        step = max(chunk_size, 1)
        for start in range(0, len(data), step):
            yield data[start : start + step]
            await asyncio.sleep(0)
        if log.fail_after_bytes is not None:
            raise OSError("connection reset by peer (injected)")

    async def close(self) -> None:
        self.close_watches()
