"""A pod's volumes as the kubelet would mount them, on a node with no mount namespace.

Each volume a container mounts is written to a directory of the pod's sandbox: the
projected ServiceAccount token (a TokenRequest bound to the pod, as the kubelet asks for
it), ConfigMap and Secret keys, downward-API fields, and an empty directory for
``emptyDir``; a ``hostPath`` is the host's own path. A process cannot see those
directories at the paths its container mounts them on, so the container is told where
each mount landed (``GLIMMER_SIM_MOUNTS``: JSON ``{mountPath: directory}``); the manager
image runs through ``glimmer.sim.incluster``, which points the Kubernetes client at the
ServiceAccount mount. Other volume kinds (PVCs, CSI ...) are not mounted.

A ConfigMap or Secret that does not exist (and is not ``optional``) stops the pod from
starting, as a failed mount does on a real node: :class:`ContainerConfigError`, retried.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

from glimmer.sim.environment import ContainerConfigError, Fetch, field_value

JSON = dict[str, Any]

#: Where every pod's ServiceAccount credentials are mounted (the kube-api-access volume).
SERVICE_ACCOUNT_MOUNT = "/var/run/secrets/kubernetes.io/serviceaccount"
#: The variable that tells a container where its mounts are.
MOUNTS_ENV = "GLIMMER_SIM_MOUNTS"
_DEFAULT_TOKEN_SECONDS = 3607

#: ``(service_account, audiences, expiration_seconds) -> token`` for this pod.
RequestToken = Callable[[str, list[str], int], Awaitable[str]]


async def materialize(
    pod: JSON, root: Path, *, fetch: Fetch, request_token: RequestToken
) -> dict[str, Path]:
    """Write every mountable volume of ``pod`` under ``root``: volume name -> directory."""
    written: dict[str, Path] = {}
    for volume in pod["spec"].get("volumes") or []:
        name = str(volume["name"])
        if "hostPath" in volume:
            written[name] = Path(str(volume["hostPath"].get("path", "")))
            continue
        files = await _files(pod, volume, fetch=fetch, request_token=request_token)
        if files is None:
            continue
        directory = root / name
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        for relative, content in files.items():
            target = directory / relative
            if not target.resolve().is_relative_to(directory.resolve()):
                raise ContainerConfigError(f"volume {name}: path {relative!r} leaves the volume")
            target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            target.write_bytes(content)
            target.chmod(0o600)
        written[name] = directory
    return written


def mounts_env(container: JSON, volumes: Mapping[str, Path]) -> dict[str, str]:
    """``GLIMMER_SIM_MOUNTS`` for a container: its mount paths -> where they landed."""
    mounts: dict[str, str] = {}
    for mount in container.get("volumeMounts") or []:
        directory = volumes.get(str(mount.get("name")))
        if directory is None:
            continue
        sub_path = str(mount.get("subPath") or "")
        mounts[str(mount["mountPath"])] = str(directory / sub_path if sub_path else directory)
    return {MOUNTS_ENV: json.dumps(mounts, sort_keys=True)} if mounts else {}


async def _files(
    pod: JSON, volume: JSON, *, fetch: Fetch, request_token: RequestToken
) -> dict[str, bytes] | None:
    if "emptyDir" in volume:
        return {}
    if "configMap" in volume:
        return await _keys(volume["configMap"], "configmaps", fetch=fetch)
    if "secret" in volume:
        source = {**volume["secret"], "name": volume["secret"].get("secretName")}
        return await _keys(source, "secrets", fetch=fetch)
    if "downwardAPI" in volume:
        return _downward(pod, volume["downwardAPI"])
    if "projected" in volume:
        files: dict[str, bytes] = {}
        for source in volume["projected"].get("sources") or []:
            files.update(await _projected(pod, source, fetch=fetch, request_token=request_token))
        return files
    return None


async def _projected(
    pod: JSON, source: JSON, *, fetch: Fetch, request_token: RequestToken
) -> dict[str, bytes]:
    if "serviceAccountToken" in source:
        wanted = source["serviceAccountToken"]
        account = str(pod["spec"].get("serviceAccountName") or "default")
        audience = wanted.get("audience")
        seconds = int(wanted.get("expirationSeconds") or _DEFAULT_TOKEN_SECONDS)
        token = await request_token(account, [audience] if audience else [], seconds)
        return {str(wanted["path"]): token.encode()}
    if "configMap" in source:
        return await _keys(source["configMap"], "configmaps", fetch=fetch)
    if "secret" in source:
        return await _keys(source["secret"], "secrets", fetch=fetch)
    if "downwardAPI" in source:
        return _downward(pod, source["downwardAPI"])
    return {}


async def _keys(source: JSON, kind: str, *, fetch: Fetch) -> dict[str, bytes]:
    name = str(source.get("name") or "")
    found = await fetch(kind, name)
    if found is None:
        if source.get("optional"):
            return {}
        raise ContainerConfigError(f'{kind[:-1]} "{name}" not found (a volume mounts it)')
    data = {key: _decoded(kind, value) for key, value in (found.get("data") or {}).items()}
    items = source.get("items")
    if not items:
        return data
    files: dict[str, bytes] = {}
    for item in items:
        key = str(item["key"])
        if key not in data:
            if source.get("optional"):
                continue
            raise ContainerConfigError(
                f'{kind[:-1]} "{name}" has no key {key!r} (a volume mounts it)'
            )
        files[str(item.get("path") or key)] = data[key]
    return files


def _decoded(kind: str, value: str) -> bytes:
    return base64.b64decode(value) if kind == "secrets" else value.encode()


def _downward(pod: JSON, source: JSON) -> dict[str, bytes]:
    return {
        str(item["path"]): field_value(pod, str(item["fieldRef"]["fieldPath"])).encode()
        for item in source.get("items") or []
        if "fieldRef" in item
    }
