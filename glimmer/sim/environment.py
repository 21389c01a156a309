"""A container's environment as the kubelet would build it.

Downward-API ``fieldRef`` values, ConfigMap/Secret keys (``valueFrom`` and ``envFrom``)
and ``$(VAR)`` expansion follow the kubelet's rules, because runners read their
configuration from exactly these variables in production.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

JSON = dict[str, Any]

#: Fetch ``kind`` ("configmaps" or "secrets") ``name`` in the pod's namespace; None if absent.
Fetch = Callable[[str, str], Awaitable[JSON | None]]


class ContainerConfigError(Exception):
    """Env refers to something that does not exist: ``CreateContainerConfigError``."""


_REFERENCE = re.compile(r"\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)|\$\$")


def expand(value: str, env: Mapping[str, str]) -> str:
    """Kubernetes ``$(VAR)`` expansion: unknown references stay as written, ``$$`` is ``$``."""

    def substitute(match: re.Match[str]) -> str:
        if match.group(0) == "$$":
            return "$"
        name = match.group(1)
        return env.get(name, match.group(0))

    return _REFERENCE.sub(substitute, value)


def field_value(pod: JSON, path: str) -> str:
    metadata = pod.get("metadata", {})
    spec = pod.get("spec", {})
    status = pod.get("status", {})
    label = re.fullmatch(r"metadata\.(labels|annotations)\['(.+)'\]", path)
    if label:
        return str(metadata.get(label.group(1), {}).get(label.group(2), ""))
    simple: dict[str, object] = {
        "metadata.name": metadata.get("name"),
        "metadata.namespace": metadata.get("namespace"),
        "metadata.uid": metadata.get("uid"),
        "spec.nodeName": spec.get("nodeName"),
        "spec.serviceAccountName": spec.get("serviceAccountName"),
        "status.podIP": status.get("podIP"),
        "status.hostIP": status.get("hostIP"),
    }
    if path not in simple:
        raise ContainerConfigError(f"unsupported fieldRef {path!r}")
    return str(simple[path] or "")


def _decode(kind: str, value: str) -> str:
    return base64.b64decode(value).decode() if kind == "secrets" else value


async def build_env(
    pod: JSON, container: JSON, *, fetch: Fetch, base: Mapping[str, str]
) -> dict[str, str]:
    """``base`` (the node's process env), then ``envFrom``, then ``env``, in that order."""
    env = dict(base)
    cache: dict[tuple[str, str], JSON | None] = {}

    async def source(kind: str, name: str) -> JSON | None:
        if (kind, name) not in cache:
            cache[(kind, name)] = await fetch(kind, name)
        return cache[(kind, name)]

    for entry in container.get("envFrom", []):
        for kind, key in (("configmaps", "configMapRef"), ("secrets", "secretRef")):
            ref = entry.get(key)
            if ref is None:
                continue
            document = await source(kind, ref["name"])
            if document is None:
                if ref.get("optional"):
                    continue
                raise ContainerConfigError(f"{kind[:-1]} {ref['name']!r} not found")
            for k, v in (document.get("data") or {}).items():
                env[entry.get("prefix", "") + k] = _decode(kind, v)

    for var in container.get("env", []):
        name = var["name"]
        if "valueFrom" not in var:
            env[name] = expand(str(var.get("value", "")), env)
            continue
        value_from = var["valueFrom"]
        if "fieldRef" in value_from:
            env[name] = field_value(pod, value_from["fieldRef"]["fieldPath"])
            continue
        if "resourceFieldRef" in value_from:
            env[name] = _resource_value(container, value_from["resourceFieldRef"])
            continue
        for kind, key in (("configmaps", "configMapKeyRef"), ("secrets", "secretKeyRef")):
            ref = value_from.get(key)
            if ref is None:
                continue
            document = await source(kind, ref["name"])
            data = (document or {}).get("data") or {}
            if ref["key"] in data:
                env[name] = _decode(kind, data[ref["key"]])
            elif not ref.get("optional"):
                raise ContainerConfigError(
                    f"key {ref['key']!r} of {kind[:-1]} {ref['name']!r} not found"
                )
    return env


def _resource_value(container: JSON, ref: JSON) -> str:
    section, _, resource = str(ref["resource"]).partition(".")
    value = container.get("resources", {}).get(section, {}).get(resource)
    if value is None:
        raise ContainerConfigError(f"resourceFieldRef {ref['resource']!r} is not set")
    return str(value)
