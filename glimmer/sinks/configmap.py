"""ConfigMap delivery (L7): one ``data`` entry per deliveryId, never evicting.

The entry is the compact envelope JSON under its deliveryId, so a retry rewrites
nothing (an identical value is a no-op) and ``glimmer report --run`` reads the same
documents a webhook received. A ConfigMap holds about 1 MiB; past 900 KiB of keys and
values the delivery is a permanent error rather than dropping older verdicts to make
room: losing the record of an earlier run silently is worse than failing loudly.

The manager writes only ConfigMaps its sink created: whoever may create a BurnInSink
could otherwise point it at any ConfigMap of the namespace (``payments-app-config``)
and have the manager, with its own write access, add keys to it. A ConfigMap the sink
creates carries the label ``burnin.glimmer.ai/sink: <sink name>`` and an
ownerReference to the BurnInSink (its UID); one that exists without both is refused
and never modified. The owner reference also means deleting the BurnInSink deletes
its ConfigMap (garbage collection), as it does any object a controller owns.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from glimmer.api import GROUP, VERSION
from glimmer.engine import CONFIGMAPS, ApiError, KubeClient, is_conflict, is_not_found
from glimmer.engine.client import is_already_exists, is_transient
from glimmer.sinks.errors import DeliveryError, permanent, retryable

#: Keys plus values, in bytes, a sink ConfigMap may hold (900 KiB, as artifacts).
CONFIGMAP_BUDGET_BYTES: Final = 921600
#: Conflicting writers (two runs delivering to one ConfigMap) are retried this often.
_CONFLICT_RETRIES: Final = 5
#: The label naming the BurnInSink that created (and alone writes) a ConfigMap.
SINK_LABEL: Final = f"{GROUP}/sink"
SINK_KIND: Final = "BurnInSink"
_LABEL_VALUE_MAX: Final = 63


@dataclass(frozen=True)
class SinkOwner:
    """The BurnInSink a ConfigMap belongs to: its name and UID."""

    name: str
    uid: str

    def reference(self) -> dict[str, Any]:
        return {"apiVersion": f"{GROUP}/{VERSION}", "kind": SINK_KIND, "name": self.name,
                "uid": self.uid, "controller": True}  # fmt: skip

    def owns(self, configmap: Mapping[str, Any]) -> bool:
        """Both marks: our label, and an ownerReference to this sink by UID."""
        meta = configmap.get("metadata")
        meta = meta if isinstance(meta, Mapping) else {}
        labels = meta.get("labels")
        if not isinstance(labels, Mapping) or labels.get(SINK_LABEL) != self.name:
            return False
        refs = meta.get("ownerReferences")
        return isinstance(refs, list) and any(
            isinstance(ref, Mapping)
            and ref.get("kind") == SINK_KIND
            and str(ref.get("apiVersion") or "").partition("/")[0] == GROUP
            and ref.get("name") == self.name
            and ref.get("uid") == self.uid
            for ref in refs
        )


def _not_ours(where: str, owner: SinkOwner) -> DeliveryError:
    return permanent(
        f"ConfigMap {where} exists and was not created by BurnInSink {owner.name} (it lacks "
        f"the label {SINK_LABEL}={owner.name} and an ownerReference to this sink); the "
        "manager writes only ConfigMaps its sink created and has not touched it. Set "
        "configMap.name to a ConfigMap that does not exist yet (docs/sinks.md#configmap)"
    )


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


async def store(
    client: KubeClient, *, namespace: str, name: str, owner: SinkOwner, key: str, value: str
) -> bool:
    """Put ``value`` under ``key`` of the ConfigMap ``owner`` created (creating it when
    absent); True when written, False when already there."""
    where = f"{namespace}/{name}"
    if not owner.uid:
        raise permanent(f"BurnInSink {owner.name} has no UID to own ConfigMap {where} with")
    if len(owner.name) > _LABEL_VALUE_MAX:
        raise permanent(
            f"BurnInSink {owner.name}: a ConfigMap sink's name must be at most "
            f"{_LABEL_VALUE_MAX} characters (it is the value of the {SINK_LABEL} label "
            "on its ConfigMap); recreate the sink under a shorter name"
        )
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
                "metadata": {
                    "name": name,
                    "namespace": namespace,
                    "labels": {SINK_LABEL: owner.name},
                    "ownerReferences": [owner.reference()],
                },
                "data": {key: value},
            }
            try:
                await client.create(CONFIGMAPS, body, namespace=namespace)
            except ApiError as err:
                if is_already_exists(err):
                    continue  # created meanwhile: read it (and whose it is) again
                raise _api_failure(err, where=where) from None
            return True
        if not owner.owns(current):
            raise _not_ours(where, owner)
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
