"""The fake apiserver keeps the behaviours reconcilers rely on (so tests mean something)."""

from __future__ import annotations

import contextlib

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


async def test_pod_log_reads_honour_tail_lines_and_limit_bytes() -> None:
    client = FakeClient()
    await client.create(PODS, {"metadata": {"name": "p"}}, namespace="ns")
    client.set_pod_log("p", namespace="ns", text="one\ntwo\nthree\n")
    assert await client.read_pod_log("p", namespace="ns", tail_lines=2) == "two\nthree\n"
    assert await client.read_pod_log("p", namespace="ns", limit_bytes=5) == "one\nt"


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
