"""The cached and live readers: what each answers, and that the cache fails closed."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from glimmer.engine import (
    NODES,
    PODS,
    ApiError,
    CachedReader,
    FakeClient,
    FakeClock,
    InformerFactory,
    LabelSelector,
    LiveReader,
    NotCachedError,
    Readers,
    is_not_found,
    label_index,
    strip_managed_fields,
)

RUN = "burnin.glimmer.ai/run"


def pod(name: str, *, run: str | None = None, **labels: str) -> dict[str, Any]:
    all_labels = {**labels, **({RUN: run} if run else {})}
    return {
        "metadata": {
            "name": name,
            "labels": all_labels,
            "managedFields": [{"manager": "kubectl"}],
        },
        "spec": {"nodeName": "n1"},
        "status": {"phase": "Running"},
    }


async def settle_watches(client: FakeClient, factory: InformerFactory) -> None:
    """Until every informer has listed and opened its watch, and the loop is idle."""
    await factory.wait_for_sync()
    for _ in range(200):
        if client.open_watches == len(factory.informers):
            break
        await asyncio.sleep(0)
    for _ in range(20):
        await asyncio.sleep(0)


@pytest_asyncio.fixture(loop_scope="function")
async def world() -> AsyncIterator[tuple[FakeClient, InformerFactory, Readers]]:
    """Pods in two namespaces; informers over labelled pods everywhere and over nodes."""
    client = FakeClient()
    await client.create(PODS, pod("a", run="r1"), namespace="ns1")
    await client.create(PODS, pod("b", run="r2", tier="gpu"), namespace="ns1")
    await client.create(PODS, pod("c", run="r1"), namespace="ns2")
    await client.create(PODS, pod("plain"), namespace="ns1")
    await client.create(NODES, {"metadata": {"name": "n1", "labels": {}}})
    factory = InformerFactory(client, clock=FakeClock())
    factory.informer(
        PODS,
        label_selector=RUN,
        transform=strip_managed_fields,
        indexers={"run": label_index(RUN)},
    )
    factory.informer(NODES)
    factory.start()
    await settle_watches(client, factory)
    yield client, factory, Readers.over(client, factory)
    await factory.stop()


async def test_cached_get_answers_from_the_store_as_a_copy(world: Any) -> None:
    client, _, readers = world
    calls = len(client.calls)
    got = await readers.cached.get(PODS, "a", namespace="ns1", label_selector=RUN)
    assert got["metadata"]["labels"][RUN] == "r1"
    assert "managedFields" not in got["metadata"]  # what the ingest transform kept
    assert len(client.calls) == calls  # no request
    got["metadata"]["labels"][RUN] = "edited"
    again = await readers.cached.get(PODS, "a", namespace="ns1", label_selector=RUN)
    assert again["metadata"]["labels"][RUN] == "r1"  # the cache was not edited through it


async def test_cached_get_of_an_absent_object_is_a_404(world: Any) -> None:
    _, _, readers = world
    with pytest.raises(ApiError) as caught:
        await readers.cached.get(PODS, "nope", namespace="ns1", label_selector=RUN)
    assert is_not_found(caught.value)
    with pytest.raises(ApiError) as caught:
        await readers.cached.get(NODES, "n9")
    assert is_not_found(caught.value)


async def test_the_cache_refuses_a_get_its_label_selector_may_hide(world: Any) -> None:
    """The pod cache holds only labelled pods: "not found" would be a guess."""
    _, _, readers = world
    with pytest.raises(NotCachedError):
        await readers.cached.get(PODS, "plain", namespace="ns1")
    with pytest.raises(NotCachedError):
        await readers.cached.list(PODS, namespace="ns1")
    with pytest.raises(NotCachedError):
        await readers.cached.list(PODS, namespace="ns1", label_selector="tier=gpu")


async def test_the_cache_refuses_what_no_informer_watches(world: Any) -> None:
    from glimmer.engine import CONFIGMAPS

    _, _, readers = world
    with pytest.raises(NotCachedError):
        await readers.cached.get(CONFIGMAPS, "x", namespace="ns1")


async def test_a_namespaced_informer_does_not_answer_for_another_namespace() -> None:
    client = FakeClient()
    await client.create(PODS, pod("a"), namespace="ns1")
    await client.create(PODS, pod("z"), namespace="ns2")
    factory = InformerFactory(client, clock=FakeClock())
    factory.informer(PODS, namespace="ns1")
    factory.start()
    await settle_watches(client, factory)
    cached = CachedReader(factory)
    assert [p["metadata"]["name"] for p in await cached.list(PODS, namespace="ns1")] == ["a"]
    with pytest.raises(NotCachedError):
        await cached.get(PODS, "z", namespace="ns2")
    with pytest.raises(NotCachedError):
        await cached.list(PODS)  # all namespaces: this informer sees one
    await factory.stop()


async def test_the_cache_refuses_to_answer_before_its_first_list() -> None:
    client = FakeClient()
    await client.create(NODES, {"metadata": {"name": "n1"}})
    factory = InformerFactory(client, clock=FakeClock())
    factory.informer(NODES)  # never started
    with pytest.raises(NotCachedError, match="not synced"):
        await CachedReader(factory).get(NODES, "n1")


async def test_cached_list_filters_by_namespace_and_selector_in_key_order(world: Any) -> None:
    _, _, readers = world
    names = [p["metadata"]["name"] for p in await readers.cached.list(PODS, label_selector=RUN)]
    assert names == ["a", "b", "c"]
    in_ns1 = await readers.cached.list(PODS, namespace="ns1", label_selector=f"{RUN}=r1")
    assert [p["metadata"]["name"] for p in in_ns1] == ["a"]
    gpu = await readers.cached.list(PODS, label_selector=f"{RUN},tier=gpu")
    assert [p["metadata"]["name"] for p in gpu] == ["b"]
    assert all(p["kind"] == "Pod" and p["apiVersion"] == "v1" for p in gpu)


async def test_by_index_answers_from_the_index_and_refuses_a_missing_one(world: Any) -> None:
    _, _, readers = world
    everywhere = readers.cached.by_index(PODS, "run", "r1", label_selector=RUN)
    assert [(p["metadata"]["namespace"], p["metadata"]["name"]) for p in everywhere] == [
        ("ns1", "a"),
        ("ns2", "c"),
    ]
    only_ns2 = readers.cached.by_index(PODS, "run", "r1", namespace="ns2", label_selector=RUN)
    assert [p["metadata"]["name"] for p in only_ns2] == ["c"]
    with pytest.raises(NotCachedError, match="index"):
        readers.cached.by_index(NODES, "run", "r1")


async def test_by_index_view_answers_the_same_objects_in_place_and_refuses_a_missing_index(
    world: Any,
) -> None:
    _, _, readers = world
    copies = readers.cached.by_index(PODS, "run", "r1", label_selector=RUN)
    names = readers.cached.by_index_view(
        PODS, "run", "r1", label_selector=RUN,
        view=lambda p: (p["metadata"]["namespace"], p["metadata"]["name"]),
    )  # fmt: skip
    assert names == tuple((p["metadata"]["namespace"], p["metadata"]["name"]) for p in copies)
    only_ns2 = readers.cached.by_index_view(
        PODS, "run", "r1", namespace="ns2", label_selector=RUN, view=lambda p: p["metadata"]["name"]
    )
    assert only_ns2 == ("c",)
    # In place: the view sees the cache's own objects, not copies (why it must not keep them).
    [stored] = readers.cached.by_index_view(
        PODS, "run", "r1", namespace="ns2", label_selector=RUN, view=lambda p: p
    )
    assert (
        stored
        is readers.cached.by_index_view(
            PODS, "run", "r1", namespace="ns2", label_selector=RUN, view=lambda p: p
        )[0]
    )
    with pytest.raises(NotCachedError, match="index"):
        readers.cached.by_index_view(NODES, "run", "r1", view=lambda p: p)


async def test_the_cache_does_not_see_our_own_write_until_the_watch_delivers_it(
    world: Any,
) -> None:
    """Why rules that act on what was just written (E10, H) read live."""
    client, factory, readers = world
    await client.create(PODS, pod("fresh", run="r1"), namespace="ns1")
    with pytest.raises(ApiError):
        await readers.cached.get(PODS, "fresh", namespace="ns1", label_selector=RUN)
    assert (await readers.live.get(PODS, "fresh", namespace="ns1"))["metadata"]["name"] == "fresh"
    await settle_watches(client, factory)
    assert await readers.cached.get(PODS, "fresh", namespace="ns1", label_selector=RUN)


async def test_live_list_follows_every_page_and_names_the_kind() -> None:
    client = FakeClient()
    for name in ("a", "b", "c", "d", "e"):
        await client.create(PODS, pod(name, run="r"), namespace="ns")
    live = LiveReader(client, page_size=2)
    listed = await live.list(PODS, namespace="ns", label_selector=f"{RUN}=r")
    assert [p["metadata"]["name"] for p in listed] == ["a", "b", "c", "d", "e"]
    assert all(p["kind"] == "Pod" and p["apiVersion"] == "v1" for p in listed)
    assert [c[0] for c in client.calls[-3:]] == ["list", "list", "list"]


def test_label_selector_parses_equality_and_existence_terms() -> None:
    selector = LabelSelector.parse("a=1, b==2,c!=3,d,!e")
    assert selector.matches({"metadata": {"labels": {"a": "1", "b": "2", "d": ""}}})
    assert not selector.matches({"metadata": {"labels": {"a": "1", "b": "2", "c": "3", "d": ""}}})
    assert not selector.matches({"metadata": {"labels": {"a": "1", "b": "2", "d": "", "e": ""}}})
    assert LabelSelector.parse(None).matches({"metadata": {}})


@pytest.mark.parametrize("text", ["a in (x,y)", "a notin (x)", "(a)", "=x"])
def test_label_selector_refuses_what_it_cannot_read(text: str) -> None:
    with pytest.raises(ValueError):
        LabelSelector.parse(text)


@pytest.mark.parametrize(
    ("narrow", "wide", "implied"),
    [
        ("a=1", "a", True),
        ("a=1,b=2", "a=1", True),
        ("a=1", "a!=2", True),
        ("a=1", "", True),
        ("a", "a=1", False),
        ("b=1", "a", False),
        ("a=1", "a!=1", False),
        ("", "a", False),
    ],
)
def test_label_selector_implication_is_decided_only_where_certain(
    narrow: str, wide: str, implied: bool
) -> None:
    assert LabelSelector.parse(narrow).implies(LabelSelector.parse(wide)) is implied
