"""Informer: list, watch, relist on 410, transform on ingest, indexes, handlers."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from glimmer.engine import (
    NODES,
    PODS,
    ApiError,
    FakeClient,
    FakeClock,
    Informer,
    InformerEvent,
    InformerFactory,
    annotation_index,
    autojump,
    keep_fields,
    label_index,
    settle,
    strip_managed_fields,
)

# The engine is generic: any label or annotation can key an index.
RUN_LABEL = "example.com/run"
OWNER_ANNOTATION = "example.com/owner"


class SpyClient(FakeClient):
    """Records the arguments of every list and watch."""

    def __init__(self) -> None:
        super().__init__()
        self.list_args: list[dict[str, Any]] = []
        self.watch_args: list[dict[str, Any]] = []

    async def list(self, *args: Any, **kwargs: Any) -> Any:
        self.list_args.append(kwargs)
        return await super().list(*args, **kwargs)

    def watch(self, *args: Any, **kwargs: Any) -> Any:
        self.watch_args.append(kwargs)
        return super().watch(*args, **kwargs)


@pytest_asyncio.fixture(loop_scope="function")
async def jumping_clock() -> AsyncIterator[FakeClock]:
    """A fake clock that jumps to each timer once the loop is quiet (no real sleeping)."""
    clock = FakeClock()
    task = asyncio.create_task(autojump(clock))
    yield clock
    task.cancel()


def pod(name: str, *, run: str | None = None, phase: str = "Pending") -> dict[str, Any]:
    labels = {RUN_LABEL: run} if run else {}
    return {
        "metadata": {
            "name": name,
            "labels": labels,
            "managedFields": [{"manager": "kubectl", "fieldsV1": {"f:spec": {}}}],
        },
        "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "busybox"}]},
        "status": {"phase": phase},
    }


async def wait_until(predicate: Any, *, rounds: int = 200) -> None:
    for _ in range(rounds):
        if predicate():
            return
        await asyncio.sleep(0)
    raise AssertionError("condition not reached")


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []

    def __call__(self, event: InformerEvent) -> None:
        self.events.append((event.type, event.obj["metadata"]["name"]))


async def test_first_list_uses_resource_version_0_then_watches_from_the_listed_version() -> None:
    client = SpyClient()
    await client.create(PODS, pod("a"), namespace="ns")
    informer = Informer(client, PODS, namespace="ns", clock=FakeClock())
    informer.start()
    await informer.wait_for_sync()
    await wait_until(lambda: client.open_watches == 1)
    assert client.list_args[0]["resource_version"] == "0"
    watch = client.watch_args[0]
    assert watch["resource_version"] == str(client.resource_version)
    assert watch["allow_bookmarks"] is True
    assert 300 <= watch["timeout_seconds"] <= 600
    await informer.stop()


async def test_watch_timeouts_are_randomised_between_5_and_10_minutes(
    jumping_clock: FakeClock,
) -> None:
    client = SpyClient()
    informer = Informer(client, PODS, clock=jumping_clock)
    informer.start()
    for _ in range(30):
        await wait_until(lambda: client.open_watches == 1)
        client.close_watches()
    await informer.stop()
    timeouts = {w["timeout_seconds"] for w in client.watch_args}
    assert all(300 <= t <= 600 for t in timeouts)
    assert len(timeouts) > 5


async def test_cache_follows_adds_updates_and_deletes_and_handlers_see_them() -> None:
    client = FakeClient()
    informer = Informer(client, PODS, namespace="ns", clock=FakeClock())
    seen = Recorder()
    informer.add_handler(seen)
    assert not informer.has_synced()
    informer.start()
    await informer.wait_for_sync()
    assert informer.has_synced()
    await client.create(PODS, pod("a"), namespace="ns")
    await client.patch(
        PODS, "a", {"status": {"phase": "Running"}}, namespace="ns", subresource="status"
    )
    await client.create(PODS, pod("b"), namespace="ns")
    await client.delete(PODS, "b", namespace="ns")
    await wait_until(lambda: len(seen.events) == 4)
    assert seen.events == [("add", "a"), ("update", "a"), ("add", "b"), ("delete", "b")]
    cached = informer.store.get("ns/a")
    assert cached is not None and cached["status"]["phase"] == "Running"
    assert "ns/b" not in informer.store
    await informer.stop()


async def test_a_clean_watch_end_resumes_from_the_last_version_without_relisting(
    jumping_clock: FakeClock,
) -> None:
    client = SpyClient()
    informer = Informer(client, PODS, namespace="ns", clock=jumping_clock)
    informer.start()
    await informer.wait_for_sync()
    created = await client.create(PODS, pod("a"), namespace="ns")
    await wait_until(lambda: "ns/a" in informer.store)
    client.close_watches()  # server timeout
    await client.create(PODS, pod("b"), namespace="ns")  # lands while disconnected
    await wait_until(lambda: "ns/b" in informer.store)
    assert informer.lists == 1
    assert client.watch_args[1]["resource_version"] == created["metadata"]["resourceVersion"]
    await informer.stop()


async def test_410_after_compaction_relists_with_no_missed_or_stale_objects(
    jumping_clock: FakeClock,
) -> None:
    client = SpyClient()
    for name in ["keep", "change", "drop"]:
        await client.create(PODS, pod(name), namespace="ns")
    informer = Informer(client, PODS, namespace="ns", clock=jumping_clock)
    seen = Recorder()
    informer.add_handler(seen)
    informer.start()
    await informer.wait_for_sync()
    await wait_until(lambda: client.open_watches == 1)
    client.close_watches()
    # While disconnected: change, delete, create; then history is compacted away.
    await client.patch(PODS, "change", {"metadata": {"labels": {"v": "2"}}}, namespace="ns")
    await client.delete(PODS, "drop", namespace="ns")
    await client.create(PODS, pod("new"), namespace="ns")
    client.compact()
    await wait_until(lambda: informer.lists == 2, rounds=2000)
    await wait_until(lambda: client.open_watches == 1)
    assert sorted(informer.store.keys()) == ["ns/change", "ns/keep", "ns/new"]
    changed = informer.store.get("ns/change")
    assert changed is not None and changed["metadata"]["labels"] == {"v": "2"}
    assert ("delete", "drop") in seen.events
    assert seen.events.count(("add", "new")) == 1
    # The relist asked for the last seen version, not "0".
    assert client.list_args[1]["resource_version"] not in ("0", None)
    await informer.stop()


async def test_watch_error_event_with_410_triggers_relist() -> None:
    client = FakeClient()
    informer = Informer(client, PODS, clock=FakeClock())
    informer.start()
    await informer.wait_for_sync()
    with pytest.raises(Exception, match="too old"):
        informer._handle(
            "ERROR",
            {
                "kind": "Status",
                "code": 410,
                "reason": "Expired",
                "message": "too old resource version",
            },
        )
    await informer.stop()


async def test_bookmark_advances_the_resume_version_without_touching_the_cache() -> None:
    informer = Informer(FakeClient(), PODS, clock=FakeClock())
    informer._handle("BOOKMARK", {"kind": "Pod", "metadata": {"resourceVersion": "4242"}})
    assert informer.last_sync_resource_version == "4242"
    assert len(informer.store) == 0


async def test_list_errors_back_off_on_the_injected_clock_then_recover() -> None:
    client = FakeClient()
    clock = FakeClock()
    client.inject_error("list", ApiError(status=500, reason="InternalError"), times=3)
    informer = Informer(client, PODS, clock=clock)
    informer.start()
    await settle()
    assert not informer.has_synced()
    assert clock.pending_timers == 1, "the informer must be sleeping on the clock"
    for _ in range(3):
        deadline = clock.next_deadline()
        assert deadline is not None
        clock.advance(deadline - clock.now())
        await settle()
    await wait_until(informer.has_synced)
    await informer.stop()


async def test_transform_keeps_only_requested_fields_and_indexes_still_work() -> None:
    client = FakeClient()
    await client.create(PODS, pod("a", run="r1"), namespace="ns")
    await client.create(PODS, pod("b", run="r1"), namespace="ns")
    await client.create(PODS, pod("c", run="r2"), namespace="ns")
    informer = Informer(
        client,
        PODS,
        clock=FakeClock(),
        transform=keep_fields("spec.nodeName", "status.phase"),
        indexers={"run": label_index(RUN_LABEL)},
    )
    informer.start()
    await informer.wait_for_sync()
    stored = informer.store.get("ns/a")
    assert stored is not None
    assert stored["spec"] == {"nodeName": "n1"}
    assert stored["status"] == {"phase": "Pending"}
    assert "managedFields" not in stored["metadata"]
    assert [o["metadata"]["name"] for o in informer.store.by_index("run", "r1")] == ["a", "b"]
    await client.patch(PODS, "a", {"metadata": {"labels": {RUN_LABEL: "r2"}}}, namespace="ns")
    await wait_until(lambda: len(informer.store.by_index("run", "r2")) == 2)
    assert [o["metadata"]["name"] for o in informer.store.by_index("run", "r1")] == ["b"]
    await informer.stop()


async def test_strip_managed_fields_keeps_everything_else() -> None:
    obj = pod("a")
    stripped = strip_managed_fields(obj)
    assert "managedFields" not in stripped["metadata"]
    assert stripped["spec"]["containers"][0]["image"] == "busybox"


async def test_nodes_are_indexed_by_an_annotation() -> None:
    client = FakeClient()
    await client.create(
        NODES,
        {
            "metadata": {
                "name": "n1",
                "annotations": {OWNER_ANNOTATION: "run-a/uid-1"},
            }
        },
    )
    await client.create(NODES, {"metadata": {"name": "n2"}})
    informer = Informer(
        client, NODES, clock=FakeClock(), indexers={"owner": annotation_index(OWNER_ANNOTATION)}
    )
    informer.start()
    await informer.wait_for_sync()
    assert informer.store.index_keys("owner", "run-a/uid-1") == ["n1"]
    await informer.stop()


async def test_handler_added_after_sync_sees_every_cached_object() -> None:
    client = FakeClient()
    await client.create(PODS, pod("a"), namespace="ns")
    informer = Informer(client, PODS, clock=FakeClock())
    informer.start()
    await informer.wait_for_sync()
    late = Recorder()
    informer.add_handler(late)
    assert late.events == [("add", "a")]
    await informer.stop()


async def test_a_failing_handler_does_not_stop_the_cache_or_other_handlers() -> None:
    client = FakeClient()
    informer = Informer(client, PODS, clock=FakeClock())

    def broken(event: InformerEvent) -> None:
        raise RuntimeError("boom")

    seen = Recorder()
    informer.add_handler(broken)
    informer.add_handler(seen)
    informer.start()
    await informer.wait_for_sync()
    await client.create(PODS, pod("a"), namespace="ns")
    await wait_until(lambda: seen.events == [("add", "a")])
    assert "ns/a" in informer.store
    await informer.stop()


async def test_paged_lists_follow_continue_tokens() -> None:
    client = SpyClient()
    for i in range(7):
        await client.create(PODS, pod(f"p{i}"), namespace="ns")
    from glimmer.engine import InformerOptions

    informer = Informer(client, PODS, clock=FakeClock(), options=InformerOptions(page_size=3))
    informer.start()
    await informer.wait_for_sync()
    assert len(informer.store) == 7
    assert len(client.list_args) == 3
    assert client.list_args[1]["resource_version"] is None, "continue pages carry no version"
    await informer.stop()


def test_factory_shares_one_informer_per_resource_namespace_and_selector() -> None:
    factory = InformerFactory(FakeClient(), clock=FakeClock())
    a = factory.informer(PODS, namespace="ns")
    assert factory.informer(PODS, namespace="ns") is a
    assert factory.informer(PODS, namespace="other") is not a
    assert factory.informer(PODS, namespace="ns", label_selector="x=y") is not a
    assert len(factory.informers) == 3


def test_factory_refuses_a_second_different_transform() -> None:
    factory = InformerFactory(FakeClient(), clock=FakeClock())
    factory.informer(PODS, transform=keep_fields("spec.nodeName"))
    with pytest.raises(ValueError, match="different transform"):
        factory.informer(PODS, transform=keep_fields("status.phase"))


async def test_a_watch_closed_at_once_with_no_events_backs_off_instead_of_spinning() -> None:
    class InstantlyClosing(FakeClient):
        watches = 0

        async def watch(self, *args: Any, **kwargs: Any) -> AsyncGenerator[Any, None]:
            self.watches += 1
            return
            yield  # an async generator that ends at once

    client, clock = InstantlyClosing(), FakeClock()
    informer = Informer(client, PODS, clock=clock)
    informer.start()
    await informer.wait_for_sync()
    await settle()
    assert client.watches == 1
    assert clock.pending_timers == 1, "the informer must be sleeping on its back-off"
    deadline = clock.next_deadline()
    assert deadline is not None and 0.8 <= deadline - clock.now() < 1.6
    clock.advance(deadline - clock.now())
    await settle()
    assert client.watches == 2
    assert informer.lists == 1, "a short watch re-watches; it does not relist"
    await informer.stop()
