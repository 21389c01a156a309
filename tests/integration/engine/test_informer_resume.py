"""Informer resume and relist against the real apiserver and etcd."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncGenerator
from typing import Any

import pytest

from glimmer.engine import (
    CONFIGMAPS,
    ApiServerClient,
    Informer,
    InformerEvent,
    InformerOptions,
    WatchEvent,
)

pytestmark = [pytest.mark.controlplane, pytest.mark.timeout(180)]

FAST = InformerOptions(backoff_initial=0.2, backoff_cap=2.0)


class PausableClient:
    """Delegates to a real client; can end the open watch and hold new ones back.

    Holding the informer off the apiserver lets a test change objects and
    compact etcd while the informer is disconnected, exactly the window in
    which a 410 arises in production. A watch is ended at its next event
    after `pause` (that event is withheld; the relist must recover it). Every
    event type delivered is recorded.
    """

    def __init__(self, inner: ApiServerClient) -> None:
        self.inner = inner
        self.resumed = asyncio.Event()
        self.resumed.set()
        self.event_types: list[str] = []
        self.open_watches = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def pause(self) -> None:
        self.resumed.clear()

    def resume(self) -> None:
        self.resumed.set()

    async def watch(self, *args: Any, **kwargs: Any) -> AsyncGenerator[WatchEvent, None]:
        await self.resumed.wait()
        self.open_watches += 1
        try:
            async with contextlib.aclosing(self.inner.watch(*args, **kwargs)) as stream:
                async for event in stream:
                    if not self.resumed.is_set():
                        return
                    code = event.object.get("code", "")
                    self.event_types.append(
                        f"ERROR:{code}" if event.type == "ERROR" else event.type
                    )
                    yield event
        finally:
            self.open_watches -= 1


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, str, str]] = []

    def __call__(self, event: InformerEvent) -> None:
        meta = event.obj["metadata"]
        self.events.append((event.type, meta["name"], meta.get("resourceVersion", "")))


def server_state(control_plane: Any, namespace: str) -> dict[str, str]:
    out = control_plane.kubectl("get", "configmaps", "-n", namespace, "-o", "json").stdout
    return {
        item["metadata"]["name"]: item["metadata"]["resourceVersion"]
        for item in json.loads(out)["items"]
        if item["metadata"]["name"] != "kube-root-ca.crt"
    }


def cache_state(informer: Informer) -> dict[str, str]:
    return {
        obj["metadata"]["name"]: obj["metadata"]["resourceVersion"]
        for obj in informer.store.values()
        if obj["metadata"]["name"] != "kube-root-ca.crt"
    }


async def eventually(predicate: Any, *, seconds: float) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(0.05)


def configmap(name: str, value: str) -> dict[str, Any]:
    return {"metadata": {"name": name}, "data": {"v": value}}


async def test_watch_resumes_across_an_apiserver_restart(
    control_plane: Any, namespace: str, engine_client: ApiServerClient
) -> None:
    await engine_client.create(CONFIGMAPS, configmap("before", "1"), namespace=namespace)
    informer = Informer(engine_client, CONFIGMAPS, namespace=namespace, options=FAST)
    informer.start()
    try:
        await asyncio.wait_for(informer.wait_for_sync(), 30)
        await eventually(lambda: "before" in cache_state(informer), seconds=10)
        await asyncio.to_thread(control_plane.restart_apiserver)
        await engine_client.create(CONFIGMAPS, configmap("after", "1"), namespace=namespace)
        await engine_client.patch(CONFIGMAPS, "before", {"data": {"v": "2"}}, namespace=namespace)
        await eventually(
            lambda: cache_state(informer) == server_state(control_plane, namespace), seconds=60
        )
        assert informer.lists == 1, "resuming from the last resourceVersion needs no relist"
    finally:
        await informer.stop()


async def test_410_after_etcd_compaction_relists_with_no_missed_or_duplicated_state(
    control_plane: Any, namespace: str, engine_client: ApiServerClient
) -> None:
    for name in ["keep", "change", "drop"]:
        await engine_client.create(CONFIGMAPS, configmap(name, "1"), namespace=namespace)
    client = PausableClient(engine_client)
    informer = Informer(client, CONFIGMAPS, namespace=namespace, options=FAST)
    seen = Recorder()
    informer.add_handler(seen)
    informer.start()
    try:
        await asyncio.wait_for(informer.wait_for_sync(), 30)
        await eventually(lambda: client.open_watches == 1, seconds=10)
        client.pause()
        # This write ends the open watch (the wrapper withholds it).
        await engine_client.create(CONFIGMAPS, configmap("gap", "1"), namespace=namespace)
        await eventually(lambda: client.open_watches == 0, seconds=10)
        await engine_client.patch(CONFIGMAPS, "change", {"data": {"v": "2"}}, namespace=namespace)
        await engine_client.delete(CONFIGMAPS, "drop", namespace=namespace)
        await engine_client.create(CONFIGMAPS, configmap("new", "1"), namespace=namespace)
        # Unrelated writes so etcd's revision moves well past the informer's.
        for i in range(5):
            await engine_client.create(
                CONFIGMAPS, configmap(f"noise-{i}", "x"), namespace=namespace
            )
            await engine_client.delete(CONFIGMAPS, f"noise-{i}", namespace=namespace)
        await asyncio.to_thread(control_plane.compact_etcd)
        client.resume()
        await eventually(lambda: informer.lists == 2, seconds=60)
        await eventually(
            lambda: cache_state(informer) == server_state(control_plane, namespace), seconds=30
        )
        assert "ERROR:410" in client.event_types, "the resumed watch must have been refused"
        names = [name for _, name, _ in seen.events]
        assert [e for e in seen.events if e[1] == "drop" and e[0] == "delete"], "delete missed"
        assert names.count("new") == 1, "the object created in the gap is announced once"
        assert names.count("gap") == 1
        change_events = [e for e in seen.events if e[1] == "change"]
        assert change_events[-1][2] == server_state(control_plane, namespace)["change"]
        assert not any(name.startswith("noise") for name in names)
    finally:
        await informer.stop()
