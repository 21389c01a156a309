"""Sink tests end to end: real apiserver, simulated kubelets, the embedded operator (which
delivers through :class:`~glimmer.controllers.run.delivery.SinkDeliverer`, as the manager
does) and a real HTTPS receiver on loopback."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

import glimmer.testing.operator as embedded
from glimmer.engine import ApiServerClient
from glimmer.sinks import FanoutOptions
from glimmer.sinks.destinations import DestinationGuard
from tests.unit.sinks.receiver import Receiver

#: The test receiver listens on loopback, which the webhook destination guard refuses.
RECEIVER_ALLOWED = DestinationGuard.from_flags(allow=["127.0.0.1"])


@pytest.fixture(autouse=True)
def embedded_operator_allows_the_loopback_receiver(monkeypatch: pytest.MonkeyPatch) -> None:
    """The embedded operator's sinks may reach the loopback receiver.

    A bridge until ``EmbeddedOperator`` takes ``fanout_options`` itself (with a
    loopback-allowing default, as its other test-friendly defaults): it wires
    ``operator_registrations`` with that guard unless the caller chose one."""
    real = embedded.operator_registrations

    def wired(**kwargs: Any) -> Any:
        kwargs.setdefault("fanout_options", FanoutOptions(destinations=RECEIVER_ALLOWED))
        return real(**kwargs)

    monkeypatch.setattr(embedded, "operator_registrations", wired)


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
