"""Engine tests against a real kube-apiserver + etcd (fixtures from glimmer.testing)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest_asyncio

from glimmer.engine import ApiServerClient, ClientOptions


@pytest_asyncio.fixture(loop_scope="function")
async def engine_client(control_plane: Any) -> AsyncIterator[ApiServerClient]:
    """An `ApiServerClient` as cluster admin, on the test's own event loop."""
    client = await ApiServerClient.connect(
        str(control_plane.kubeconfig_path), options=ClientOptions(qps=200, burst=400)
    )
    try:
        yield client
    finally:
        await client.close()
