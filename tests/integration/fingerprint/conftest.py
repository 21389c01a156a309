"""Fingerprint tests: the operator (or its fingerprint reconciler) against a real apiserver."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest_asyncio

from glimmer.engine import ApiServerClient, ClientOptions


@pytest_asyncio.fixture(loop_scope="function")
async def kube(control_plane: Any, glimmer_crds: None) -> AsyncIterator[ApiServerClient]:
    client = await ApiServerClient.connect(
        str(control_plane.kubeconfig_path), options=ClientOptions(qps=200, burst=400)
    )
    try:
        yield client
    finally:
        await client.close()
