"""The cache shortcuts for runs at fleet scale: the faster cached-read copy and the
compacting transforms.

Both must be invisible to a reader: a copy is as independent as `copy.deepcopy`'s, and
a compacted object equals the original less exactly the fields documented as dropped.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glimmer.engine import (
    NODES,
    PODS,
    ApiError,
    CachedReader,
    FakeClient,
    InformerFactory,
    NotCachedError,
    compact,
    compact_node,
    compact_pod,
    copy_json,
    settle,
)
from glimmer.engine.transforms import NODE_STATUS_DROPPED

SAMPLES = Path(__file__).resolve().parents[3] / "bench" / "engine" / "samples"

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=30,
)


def _types(value: Any) -> Any:
    """The value with each leaf replaced by its type: equality then also checks types
    (``True == 1`` and ``1 == 1.0`` in Python, but a copy must keep each)."""
    if isinstance(value, dict):
        return {k: _types(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_types(v) for v in value]
    return type(value)


@settings(max_examples=60)
@given(st.dictionaries(st.text(), json_values, max_size=5))
def test_a_cached_copy_equals_the_original_in_value_type_and_order(obj: dict[str, Any]) -> None:
    copied = copy_json(obj)
    assert copied == obj
    assert _types(copied) == _types(obj)
    assert json.dumps(copied) == json.dumps(obj)  # key order too


def test_a_cached_copy_shares_no_mutable_part_with_the_cache() -> None:
    cached: dict[str, Any] = {"metadata": {"labels": {"a": "1"}}, "status": {"r": [{"x": 1}]}}
    copied = copy_json(cached)
    copied["metadata"]["labels"]["a"] = "changed"
    copied["status"]["r"][0]["x"] = 2
    copied["status"]["r"].append({})
    assert cached == {"metadata": {"labels": {"a": "1"}}, "status": {"r": [{"x": 1}]}}


def test_a_cached_copy_keeps_internal_sharing_like_deepcopy() -> None:
    shared: dict[str, Any] = {"k": [1]}
    cached = {"a": shared, "b": shared}
    copied = copy_json(cached)
    reference = copy.deepcopy(cached)
    assert (copied["a"] is copied["b"]) == (reference["a"] is reference["b"])
    assert copied["a"] is not shared


class _Opaque:
    def __init__(self) -> None:
        self.items = [1]


def test_a_value_marshal_cannot_carry_is_still_copied() -> None:
    cached = {"odd": _Opaque()}
    copied = copy_json(cached)
    assert isinstance(copied["odd"], _Opaque) and copied["odd"] is not cached["odd"]
    copied["odd"].items.append(2)
    assert cached["odd"].items == [1]


async def test_cached_reads_return_independent_copies() -> None:
    client = FakeClient()
    await client.create(PODS, {"metadata": {"name": "p", "labels": {"a": "1"}}}, namespace="n")
    informers = InformerFactory(client)
    informers.informer(PODS)
    informers.start()
    await informers.wait_for_sync()
    try:
        reader = CachedReader(informers)
        first = await reader.get(PODS, "p", namespace="n")
        first["metadata"]["labels"]["a"] = "mutated"
        (listed,) = await reader.list(PODS, namespace="n")
        listed["metadata"]["labels"]["b"] = "added"
        again = await reader.get(PODS, "p", namespace="n")
        assert again["metadata"]["labels"] == {"a": "1"}
    finally:
        await informers.stop()
        await settle()


def _sample(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((SAMPLES / name).read_text())
    return loaded


def _without(obj: dict[str, Any], *, status_fields: tuple[str, ...] = ()) -> dict[str, Any]:
    expected = copy.deepcopy(obj)
    expected["metadata"].pop("managedFields", None)
    for field in status_fields:
        expected.get("status", {}).pop(field, None)
    return expected


def test_compact_pod_keeps_every_field_but_managed_fields() -> None:
    pod = _sample("kwok-runner-pod.json")
    assert "managedFields" in pod["metadata"]
    assert compact_pod(copy.deepcopy(pod)) == _without(pod)


def test_compact_node_drops_only_managed_fields_images_and_volume_bookkeeping() -> None:
    node = _sample("kwok-node.json")
    node["status"]["images"] = [{"names": ["nvcr.io/x@sha256:00", "nvcr.io/x:1"], "sizeBytes": 1}]
    node["status"]["volumesInUse"] = ["v"]
    node["status"]["volumesAttached"] = [{"name": "v", "devicePath": "/d"}]
    node["spec"]["taints"] = [{"key": "k", "effect": "NoSchedule"}]
    compacted = compact_node(copy.deepcopy(node))
    assert compacted == _without(node, status_fields=NODE_STATUS_DROPPED)
    assert compacted["spec"]["taints"] == node["spec"]["taints"]
    assert compacted["status"]["conditions"] == node["status"]["conditions"]


def test_compact_shares_equal_strings_across_objects() -> None:
    first = compact(json.loads('{"metadata": {"name": "a"}, "status": {"phase": "Running"}}'))
    second = compact(json.loads('{"metadata": {"name": "b"}, "status": {"phase": "Running"}}'))
    assert first["status"]["phase"] is second["status"]["phase"]
    assert next(iter(first["status"])) is next(iter(second["status"]))


def test_long_strings_are_kept_whole_and_left_unshared() -> None:
    first = compact(json.loads(json.dumps({"metadata": {"annotations": {"doc": "x" * 10_000}}})))
    second = compact(json.loads(json.dumps({"metadata": {"annotations": {"doc": "x" * 10_000}}})))
    one, two = (o["metadata"]["annotations"]["doc"] for o in (first, second))
    assert one == two == "x" * 10_000
    assert one is not two  # interning every long message would cost more than it saves


async def test_a_compacting_informer_serves_reads_with_the_kept_fields() -> None:
    client = FakeClient()
    node = _sample("kwok-node.json")
    node["metadata"].pop("resourceVersion")
    node["metadata"].pop("uid")
    node["status"]["images"] = [{"names": ["i"], "sizeBytes": 1}]
    await client.create(NODES, node)
    informers = InformerFactory(client)
    informers.informer(NODES, transform=compact_node)
    informers.start()
    await informers.wait_for_sync()
    try:
        cached = await CachedReader(informers).get(NODES, node["metadata"]["name"])
        assert "images" not in cached["status"] and "managedFields" not in cached["metadata"]
        assert cached["metadata"]["labels"] == node["metadata"]["labels"]
        assert cached["status"]["allocatable"] == node["status"]["allocatable"]
    finally:
        await informers.stop()
        await settle()


async def test_a_metadata_read_answers_like_a_get_with_only_metadata() -> None:
    client = FakeClient()
    await client.create(
        PODS, {"metadata": {"name": "p", "labels": {"a": "1"}}, "spec": {"big": "x"}}, namespace="n"
    )
    informers = InformerFactory(client)
    informers.informer(PODS)
    informers.start()
    await informers.wait_for_sync()
    try:
        reader = CachedReader(informers)
        full = await reader.get(PODS, "p", namespace="n")
        meta = await reader.get_metadata(PODS, "p", namespace="n")
        assert meta == full["metadata"] and meta["uid"]
        meta["labels"]["a"] = "mutated"
        assert (await reader.get(PODS, "p", namespace="n"))["metadata"]["labels"] == {"a": "1"}
        with pytest.raises(ApiError) as missing:
            await reader.get_metadata(PODS, "absent", namespace="n")
        assert missing.value.status == 404
        with pytest.raises(NotCachedError):
            await reader.get_metadata(NODES, "n1")  # no node informer: refused, not "absent"
    finally:
        await informers.stop()
        await settle()
