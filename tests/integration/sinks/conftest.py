"""Sink tests end to end: real apiserver, simulated kubelets, the embedded operator (which
delivers through :class:`~glimmer.controllers.run.delivery.SinkDeliverer`, as the manager
does) and a real HTTPS receiver on loopback."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from glimmer.engine import ApiServerClient
from tests.unit.sinks.receiver import Receiver


@pytest.fixture(scope="session")
def sink_crds(glimmer_crds: None) -> None:
    """The BurnIn CRDs, installed once per session."""


@pytest_asyncio.fixture(loop_scope="function")
async def kube(control_plane: Any, sink_crds: None) -> AsyncIterator[ApiServerClient]:
    client = await ApiServerClient.connect(str(control_plane.kubeconfig_path))
    try:
        yield client
    finally:
        await client.close()


@pytest_asyncio.fixture(loop_scope="function")
async def receiver() -> AsyncIterator[Receiver]:
    r = Receiver()
    await r.start()
    try:
        yield r
    finally:
        await r.stop()
