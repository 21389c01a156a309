"""I2: a watch that ends normally is re-opened at once, quietly."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncGenerator
from typing import Any

import aiohttp
import pytest
from structlog.testing import capture_logs

from glimmer.engine import PODS, ApiError, FakeClient, FakeClock, Informer, settle
from glimmer.engine.client import WatchEvent


class EndingWatches(FakeClient):
    """The first `count` watches stay open `after` seconds, then end with `error`."""

    def __init__(self, clock: FakeClock, *, error: BaseException, after: float, count: int) -> None:
        super().__init__()
        self.clock = clock
        self.error = error
        self.after = after
        self.count = count
        self.opened_at: list[float] = []

    def watch(self, *args: Any, **kwargs: Any) -> Any:
        self.opened_at.append(self.clock.now())
        if len(self.opened_at) > self.count:
            return super().watch(*args, **kwargs)
        return self._ending()

    async def _ending(self) -> AsyncGenerator[WatchEvent, None]:
        await self.clock.sleep(self.after)
        raise self.error
        yield  # pragma: no cover - makes this an async generator


async def drive(clock: FakeClock, seconds: float, *, step: float = 0.5) -> None:
    for _ in range(round(seconds / step)):
        clock.advance(step)
        await settle()


NORMAL_ENDS = [
    aiohttp.ServerDisconnectedError(),
    aiohttp.ClientPayloadError("Response payload is not completed"),
    aiohttp.SocketTimeoutError("Timeout on reading data from socket"),
    asyncio.IncompleteReadError(b"", None),
]


@pytest.mark.parametrize("error", NORMAL_ENDS, ids=lambda e: type(e).__name__)
async def test_I2_a_normal_watch_end_is_a_debug_line_and_an_immediate_rewatch(
    error: BaseException,
) -> None:
    clock = FakeClock()
    client = EndingWatches(clock, error=error, after=70.0, count=3)
    with capture_logs() as logs:
        informer = Informer(client, PODS, namespace="ns", clock=clock)
        informer.start()
        await drive(clock, 3 * 70.0 + 5)
        await informer.stop()
    opened = client.opened_at
    assert len(opened) == 4
    # Each re-watch opens the moment the last one ended: no back-off.
    assert [b - a for a, b in itertools.pairwise(opened)] == [70.0, 70.0, 70.0]
    assert informer.lists == 1
    assert not [e for e in logs if e["log_level"] in ("warning", "error")]
    closed = [e for e in logs if e["event"] == "watch closed; re-watching"]
    assert len(closed) == 3 and {e["log_level"] for e in closed} == {"debug"}


async def test_I2_a_clean_end_of_stream_is_logged_at_debug() -> None:
    clock = FakeClock()
    client = FakeClient()
    with capture_logs() as logs:
        informer = Informer(client, PODS, namespace="ns", clock=clock)
        informer.start()
        await informer.wait_for_sync()
        await drive(clock, 5)
        client.close_watches()
        await drive(clock, 1)
        await informer.stop()
    closed = [e for e in logs if e["event"] == "watch closed; re-watching"]
    assert [e["log_level"] for e in closed] == ["debug"]
    assert closed[0]["ended_by"] == "end of stream"
    assert not [e for e in logs if e["log_level"] in ("warning", "error")]


@pytest.mark.parametrize(
    "error",
    [
        ApiError(status=503, reason="ServiceUnavailable"),
        ApiError(status=429, reason="TooManyRequests"),
        ConnectionRefusedError("connection refused"),
        TimeoutError(),  # the watch could not even be opened in time
    ],
    ids=lambda e: type(e).__name__ + str(getattr(e, "status", "")),
)
async def test_I2_real_watch_errors_still_warn_and_back_off(error: BaseException) -> None:
    clock = FakeClock()
    client = EndingWatches(clock, error=error, after=70.0, count=1)
    with capture_logs() as logs:
        informer = Informer(client, PODS, namespace="ns", clock=clock)
        informer.start()
        await drive(clock, 80)
        await informer.stop()
    gap = client.opened_at[1] - client.opened_at[0]
    assert gap > 70.0  # backed off before re-watching
    warned = [e for e in logs if e["event"] == "list/watch failed; backing off"]
    assert [e["log_level"] for e in warned] == ["warning"]


async def test_I2_a_watch_that_ends_normally_at_once_is_still_backed_off() -> None:
    clock = FakeClock()
    client = EndingWatches(clock, error=aiohttp.ServerDisconnectedError(), after=0.0, count=5)
    with capture_logs() as logs:
        informer = Informer(client, PODS, namespace="ns", clock=clock)
        informer.start()
        await drive(clock, 3)
        await informer.stop()
    assert len(client.opened_at) < 5  # not hammered
    assert any(e["event"] == "list/watch failed; backing off" for e in logs)
