"""ConfigMap delivery (L7): one ``data`` entry per deliveryId, never evicting.

The entry is the compact envelope JSON under its deliveryId, so a retry rewrites
nothing (an identical value is a no-op) and ``glimmer report --run`` reads the same
documents a webhook received. A ConfigMap holds about 1 MiB; past 900 KiB of keys and
values the delivery is a permanent error rather than dropping older verdicts to make
room: losing the record of an earlier run silently is worse than failing loudly.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from glimmer.engine import CONFIGMAPS, ApiError, KubeClient, is_conflict, is_not_found
from glimmer.engine.client import is_already_exists, is_transient
from glimmer.sinks.errors import DeliveryError, permanent, retryable

#: Keys plus values, in bytes, a sink ConfigMap may hold (900 KiB, as artifacts).
CONFIGMAP_BUDGET_BYTES: Final = 921600
#: Conflicting writers (two runs delivering to one ConfigMap) are retried this often.
_CONFLICT_RETRIES: Final = 5


def stored_bytes(configmap: Mapping[str, Any]) -> int:
    """Key and value bytes already in the ConfigMap (``data`` and ``binaryData``)."""
    total = 0
    for section in ("data", "binaryData"):
        entries = configmap.get(section) or {}
        if isinstance(entries, Mapping):
            total += sum(len(str(k).encode()) + len(str(v).encode()) for k, v in entries.items())
    return total


def _api_failure(err: ApiError, *, where: str) -> DeliveryError:
    what = f"ConfigMap {where}: {err}"
    return retryable(what) if is_transient(err) else permanent(what)


async def store(client: KubeClient, *, namespace: str, name: str, key: str, value: str) -> bool:
    """Put ``value`` under ``key``; True when written, False when already there."""
    where = f"{namespace}/{name}"
    for _ in range(_CONFLICT_RETRIES):
        try:
            current = await client.get(CONFIGMAPS, name, namespace=namespace)
        except ApiError as err:
            if not is_not_found(err):
                raise _api_failure(err, where=where) from None
            current = None
        if current is None:
            _check_budget(0, key=key, value=value, where=where)
            body = {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": name, "namespace": namespace},
                "data": {key: value},
            }
            try:
                await client.create(CONFIGMAPS, body, namespace=namespace)
            except ApiError as err:
                if is_already_exists(err):
                    continue  # created meanwhile: merge into it
                raise _api_failure(err, where=where) from None
            return True
        data = dict(current.get("data") or {})
        if data.get(key) == value:
            return False
        previous = data.get(key)
        used = stored_bytes(current)
        if previous is not None:
            used -= len(key.encode()) + len(str(previous).encode())
        _check_budget(used, key=key, value=value, where=where)
        data[key] = value
        updated = {**current, "data": data}
        try:
            await client.replace(CONFIGMAPS, updated, namespace=namespace)
        except ApiError as err:
            if is_conflict(err):
                continue  # resourceVersion moved: read again, never overwrite blind
            raise _api_failure(err, where=where) from None
        return True
    raise retryable(f"ConfigMap {where}: still conflicting after {_CONFLICT_RETRIES} tries")


def _check_budget(used: int, *, key: str, value: str, where: str) -> None:
    total = used + len(key.encode()) + len(value.encode())
    if total > CONFIGMAP_BUDGET_BYTES:
        raise permanent(
            f"ConfigMap {where} would hold {total} bytes of keys and values, over its "
            f"{CONFIGMAP_BUDGET_BYTES}-byte budget; older deliveries are never evicted, "
            "so point the sink at a new ConfigMap (or archive and empty this one)"
        )
