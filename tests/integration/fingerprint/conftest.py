"""Fingerprint tests: the operator (or its fingerprint reconciler) against a real apiserver."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest_asyncio

from glimmer.controllers.kit.names import FINGERPRINTS
from glimmer.engine import (
    NAMESPACES,
    NODES,
    ApiError,
    ApiServerClient,
    ClientOptions,
    is_already_exists,
)


@pytest_asyncio.fixture(loop_scope="function")
async def kube(control_plane: Any, glimmer_crds: None) -> AsyncIterator[ApiServerClient]:
    client = await ApiServerClient.connect(
        str(control_plane.kubeconfig_path), options=ClientOptions(qps=200, burst=400)
    )
    try:
        yield client
    finally:
        await client.close()


OPS = "glimmer-system"
NVIDIA = {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3", "nvidia.com/gpu.count": "8"}


@pytest_asyncio.fixture(loop_scope="function")
async def nodes(kube: ApiServerClient) -> AsyncIterator[Callable[..., Awaitable[list[str]]]]:
    """Factory: Node objects (no kubelet) with labels and nodeInfo; deleted afterwards."""
    try:
        await kube.create(NAMESPACES, {"metadata": {"name": OPS}})
    except ApiError as err:
        if not is_already_exists(err):
            raise
    made: list[str] = []

    async def factory(count: int, labels: dict[str, str] | None = None) -> list[str]:
        stem = f"fp-{uuid.uuid4().hex[:5]}"
        names = [f"{stem}-{i}" for i in range(count)]
        for name in names:
            node = await kube.create(
                NODES, {"metadata": {"name": name, "labels": dict(labels or NVIDIA)}}
            )
            node["status"] = {"nodeInfo": {"osImage": "Ubuntu 22.04", "kernelVersion": "6.5.0",
                                           "kubeletVersion": "v1.36.0"}}  # fmt: skip
            await kube.replace(NODES, node, subresource="status")
            made.append(name)
        return names

    try:
        yield factory
    finally:
        for name in made:
            with SuppressNotFound():
                await kube.delete(NODES, name)
            with SuppressNotFound():
                await kube.delete(FINGERPRINTS, name, namespace=OPS)


class SuppressNotFound:
    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: Any, exc: Any, tb: Any) -> bool:
        return isinstance(exc, ApiError) and exc.status == 404
