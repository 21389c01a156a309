"""The fake apiserver keeps the behaviours reconcilers rely on (so tests mean something)."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest

from glimmer.engine import (
    CONFIGMAPS,
    NODES,
    PODS,
    ApiError,
    FakeClient,
    PatchType,
    is_conflict,
    is_not_found,
)


async def test_stale_resource_version_is_a_conflict_never_a_blind_overwrite() -> None:
    client = FakeClient()
    created = await client.create(
        CONFIGMAPS, {"metadata": {"name": "c"}, "data": {"a": "1"}}, namespace="ns"
    )
    fresh = dict(created, data={"a": "2"})
    await client.replace(CONFIGMAPS, fresh, namespace="ns")
    stale = dict(created, data={"a": "3"})
    with pytest.raises(ApiError) as caught:
        await client.replace(CONFIGMAPS, stale, namespace="ns")
    assert is_conflict(caught.value)
    assert (await client.get(CONFIGMAPS, "c", namespace="ns"))["data"] == {"a": "2"}


async def test_status_subresource_writes_only_status_and_main_writes_keep_it() -> None:
    client = FakeClient()
    await client.create(PODS, {"metadata": {"name": "p"}, "spec": {"x": 1}}, namespace="ns")
    await client.patch(
        PODS,
        "p",
        {"status": {"phase": "Running"}, "spec": {"x": 9}},
        namespace="ns",
        subresource="status",
    )
    got = await client.get(PODS, "p", namespace="ns")
    assert got["spec"] == {"x": 1} and got["status"] == {"phase": "Running"}
    await client.patch(PODS, "p", {"spec": {"x": 2}, "status": {"phase": "Failed"}}, namespace="ns")
    got = await client.get(PODS, "p", namespace="ns")
    assert got["spec"] == {"x": 2} and got["status"] == {"phase": "Running"}
    assert got["metadata"]["generation"] == 2


async def test_json_patch_applies_and_a_failed_test_op_is_refused() -> None:
    client = FakeClient()
    await client.create(NODES, {"metadata": {"name": "n", "labels": {"a": "1"}}})
    await client.patch(
        NODES,
        "n",
        [{"op": "add", "path": "/spec", "value": {"unschedulable": True}}],
        patch_type=PatchType.JSON,
    )
    assert (await client.get(NODES, "n"))["spec"] == {"unschedulable": True}
    with pytest.raises(ApiError):
        await client.patch(
            NODES,
            "n",
            [{"op": "test", "path": "/metadata/labels/a", "value": "2"}],
            patch_type=PatchType.JSON,
        )


async def test_delete_with_finalizers_marks_then_removes_when_the_last_goes() -> None:
    client = FakeClient()
    await client.create(
        CONFIGMAPS, {"metadata": {"name": "c", "finalizers": ["x/y"]}}, namespace="ns"
    )
    await client.delete(CONFIGMAPS, "c", namespace="ns")
    marked = await client.get(CONFIGMAPS, "c", namespace="ns")
    assert marked["metadata"]["deletionTimestamp"]
    await client.patch(CONFIGMAPS, "c", {"metadata": {"finalizers": None}}, namespace="ns")
    with pytest.raises(ApiError) as caught:
        await client.get(CONFIGMAPS, "c", namespace="ns")
    assert is_not_found(caught.value)


async def test_delete_preconditions_are_enforced() -> None:
    client = FakeClient()
    created = await client.create(CONFIGMAPS, {"metadata": {"name": "c"}}, namespace="ns")
    with pytest.raises(ApiError) as caught:
        await client.delete(CONFIGMAPS, "c", namespace="ns", precondition_uid="other")
    assert is_conflict(caught.value)
    await client.delete(
        CONFIGMAPS, "c", namespace="ns", precondition_uid=created["metadata"]["uid"]
    )


async def test_apply_creates_then_merges() -> None:
    client = FakeClient()
    await client.apply(CONFIGMAPS, {"metadata": {"name": "c"}, "data": {"a": "1"}}, namespace="ns")
    await client.apply(CONFIGMAPS, {"metadata": {"name": "c"}, "data": {"b": "2"}}, namespace="ns")
    got = await client.get(CONFIGMAPS, "c", namespace="ns")
    assert got["data"] == {"a": "1", "b": "2"}


async def _log(client: FakeClient, **options: Any) -> list[bytes]:
    async with contextlib.aclosing(client.stream_pod_log("p", namespace="ns", **options)) as s:
        return [chunk async for chunk in s]


async def test_pod_logs_are_bytes_streamed_in_chunks_with_a_byte_limit() -> None:
    client = FakeClient()
    await client.create(PODS, {"metadata": {"name": "p"}}, namespace="ns")
    client.set_pod_log("p", namespace="ns", text=b"one\n\xfftwo\nthree\n")
    assert await _log(client, chunk_size=4) == [b"one\n", b"\xfftwo", b"\nthr", b"ee\n"]
    assert b"".join(await _log(client, limit_bytes=5)) == b"one\n\xff"
    client.set_pod_log("p", namespace="ns", text="é\n")
    assert await _log(client) == ["é\n".encode()]


async def test_a_pod_log_can_be_cut_after_a_byte_count() -> None:
    client = FakeClient()
    await client.create(PODS, {"metadata": {"name": "p"}}, namespace="ns")
    client.set_pod_log("p", namespace="ns", text=b"a=1\nb=2\n", fail_after_bytes=5)
    got: list[bytes] = []
    with pytest.raises(OSError):
        async with contextlib.aclosing(client.stream_pod_log("p", namespace="ns")) as s:
            async for chunk in s:
                got.append(chunk)
    assert b"".join(got) == b"a=1\nb"


async def test_every_request_is_recorded_in_order_with_what_it_sent() -> None:
    client = FakeClient()
    uid = (await client.create(NODES, {"metadata": {"name": "n"}}))["metadata"]["uid"]
    await client.patch(NODES, "n", {"metadata": {"annotations": {"a": "1"}}})
    await client.patch(NODES, "n", {"spec": {"unschedulable": True}})
    await client.patch(
        NODES, "n", {"status": {"x": 1}}, subresource="status", patch_type=PatchType.MERGE
    )
    await client.get(NODES, "n")
    await client.delete(NODES, "n", precondition_uid=uid, propagation_policy="Background")
    assert [(r.verb, r.resource, r.name) for r in client.requests] == [
        ("create", "nodes", "n"),
        ("patch", "nodes", "n"),
        ("patch", "nodes", "n"),
        ("patch", "nodes", "n"),
        ("get", "nodes", "n"),
        ("delete", "nodes", "n"),
    ]
    create, stamp, cordon, status, get, delete = client.requests
    assert create.body["metadata"]["name"] == "n"
    assert stamp.body == {"metadata": {"annotations": {"a": "1"}}}
    assert cordon.body == {"spec": {"unschedulable": True}}
    assert (cordon.subresource, cordon.patch_type) == (None, PatchType.MERGE.value)
    assert (status.subresource, status.body) == ("status", {"status": {"x": 1}})
    assert get.body is None
    assert delete.body == {"preconditionUid": uid, "propagationPolicy": "Background"}


async def test_recorded_bodies_are_copies_not_the_callers_objects() -> None:
    client = FakeClient()
    patch: dict[str, Any] = {"metadata": {"labels": {"a": "1"}}}
    await client.create(NODES, {"metadata": {"name": "n"}})
    await client.patch(NODES, "n", patch)
    patch["metadata"]["labels"]["a"] = "changed"
    assert client.requests[-1].body == {"metadata": {"labels": {"a": "1"}}}


async def test_watch_from_a_compacted_version_reports_410() -> None:
    client = FakeClient()
    created = await client.create(PODS, {"metadata": {"name": "p"}}, namespace="ns")
    await client.create(PODS, {"metadata": {"name": "q"}}, namespace="ns")
    client.compact()
    stream = client.watch(PODS, resource_version=created["metadata"]["resourceVersion"])
    async with contextlib.aclosing(stream) as events:
        first = await anext(events)
    assert first.type == "ERROR" and first.object["code"] == 410


async def test_injected_errors_fire_once_per_count() -> None:
    client = FakeClient()
    client.inject_error("list", ApiError(status=500, reason="x"), times=2)
    for _ in range(2):
        with pytest.raises(ApiError):
            await client.list(PODS)
    await client.list(PODS)


async def _labelled(client: FakeClient) -> None:
    for name, labels in {
        "a": {"role": "gpu", "zone": "1"},
        "b": {"role": "gpu", "zone": "2"},
        "c": {"role": "cpu"},
        "d": {},
    }.items():
        await client.create(NODES, {"metadata": {"name": name, "labels": labels}})


@pytest.mark.parametrize(
    ("selector", "names"),
    [
        (None, ["a", "b", "c", "d"]),
        ("", ["a", "b", "c", "d"]),
        ("role=gpu", ["a", "b"]),
        ("role==gpu", ["a", "b"]),
        ("role!=gpu", ["c", "d"]),
        ("zone", ["a", "b"]),
        ("!zone", ["c", "d"]),
        ("role=gpu,zone!=1", ["b"]),
        (" role = gpu , zone ", ["a", "b"]),
        ("role=tpu", []),
    ],
)
async def test_list_label_selectors_match_like_the_apiserver(
    selector: str | None, names: list[str]
) -> None:
    client = FakeClient()
    await _labelled(client)
    listed = await client.list(NODES, label_selector=selector)
    assert [item["metadata"]["name"] for item in listed["items"]] == names


async def test_a_watch_delivers_only_what_its_label_selector_matches() -> None:
    client = FakeClient()
    await _labelled(client)
    stream = client.watch(NODES, label_selector="role=gpu,zone!=1")
    async with contextlib.aclosing(stream) as events:
        first = await anext(events)
        await client.create(NODES, {"metadata": {"name": "e", "labels": {"role": "cpu"}}})
        await client.create(NODES, {"metadata": {"name": "f", "labels": {"role": "gpu"}}})
        second = await anext(events)
    assert [first.object["metadata"]["name"], second.object["metadata"]["name"]] == ["b", "f"]


@pytest.mark.parametrize("selector", ["role in (gpu,cpu)", "role notin (gpu)", "bad key=1"])
async def test_a_selector_the_fake_cannot_evaluate_raises_instead_of_matching_nothing(
    selector: str,
) -> None:
    client = FakeClient()
    await _labelled(client)
    with pytest.raises(ValueError, match="selector"):
        await client.list(NODES, label_selector=selector)
    with pytest.raises(ValueError, match="selector"):
        async with contextlib.aclosing(client.watch(NODES, label_selector=selector)) as events:
            await anext(events)
