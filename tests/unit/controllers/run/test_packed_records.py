"""Packed records and the fingerprint shard (I9): a run's status grows by its node
names, not by ~180 bytes a result, so a 5,000-node run and runs of tens of thousands of
results fit (docs/status-checkpoint.md). FakeClient and the unit harness."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glimmer.api import status_layout
from glimmer.controllers.kit import checkpoint
from glimmer.controllers.kit.names import PROFILES
from glimmer.controllers.kit.view import RunView
from glimmer.engine import CONFIGMAPS, ApiError, FakeClient
from glimmer.sinks import build
from glimmer.sinks.fanout import SINKS

from .harness import NS, Cluster, custom_test
from .test_shards_restart import _launch, _settle_live_pods, run_to_verdict
from .test_shards_status import full_result, new_run, open_result

#: What a real GPU node's run-start fingerprint reads like (about 150 bytes).
REAL_PRINT = (
    "kernel=5.15.0-1048-nvidia os=Ubuntu 22.04.4 LTS arch=amd64 "
    "nvidia.com/gpu.product=NVIDIA-H200 glimmer.ai/gpu-arch=hopper glimmer.ai/hw-class=hgx-8"
)


def compact(
    index: int, *, phase: str = "Passed", shard: str = "0123456789abcdef"
) -> dict[str, Any]:
    return status_layout.compact_result(full_result(index, phase=phase), shard=shard, index=index)


# --- the codec ---------------------------------------------------------------------------


records = st.lists(
    st.builds(
        compact,
        st.integers(min_value=0, max_value=40),
        phase=st.sampled_from(["Passed", "Failed", "Error", "Skipped"]),
        shard=st.sampled_from(["aaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbb"]),
    ),
    max_size=60,
)


@settings(max_examples=60, deadline=None)
@given(records)
def test_I9_packing_is_canonical_and_loses_no_distinct_record(given: list[dict[str, Any]]) -> None:
    packed = status_layout.pack_records(given)
    unpacked = status_layout.unpack_records(packed)
    distinct = {status_layout.canonical(r) for r in given}
    assert sorted(status_layout.canonical(r) for r in unpacked) == sorted(distinct)
    assert status_layout.pack_records(unpacked) == packed  # packing what it unpacks is idempotent
    assert sorted(
        map(status_layout.canonical, status_layout.pack_records(reversed(unpacked)))
    ) == sorted(map(status_layout.canonical, packed))  # the same groups whatever the order
    assert all(status_layout.packable(r) for r in unpacked)


def test_I9_a_packed_group_whose_lists_disagree_reads_error_for_every_node() -> None:
    [group] = status_layout.pack_records([compact(0), compact(1), compact(2)])
    group["indexes"] = group["indexes"][:2]  # edited by hand: one index short
    unpacked = status_layout.unpack_records([group])
    assert [r["nodes"] for r in unpacked] == [[f"kwok-node-000{i}"] for i in range(3)]
    assert {r["phase"] for r in unpacked} == {"Error"}
    expanded = [status_layout.expand_result(r, {}) for r in unpacked]
    assert {r["phase"] for r in expanded} == {"Error"}
    assert all("unjudged" in r["message"] for r in expanded)


def test_I9_a_packed_member_with_a_negative_index_reads_error() -> None:
    [group] = status_layout.pack_records([compact(0), compact(1)])
    group["indexes"] = [0, -1]
    phases = [r["phase"] for r in status_layout.unpack_records([group])]
    assert phases == ["Passed", "Error"]


def test_I9_status_results_reads_packed_records_before_the_results_list() -> None:
    status = {
        status_layout.PACKED_KEY: status_layout.pack_records([compact(0), compact(1)]),
        "results": [open_result(2), "junk"],
    }
    got = status_layout.status_results(status)
    assert [r["nodes"] for r in got] == [["kwok-node-0000"], ["kwok-node-0001"], ["kwok-node-0002"]]
    assert RunView({"status": status}).results == got


# --- the write path ----------------------------------------------------------------------


async def test_I9_a_pass_writing_back_its_view_never_counts_a_packed_result_twice() -> None:
    client = FakeClient()
    run = await new_run(client)
    run["status"]["results"] = [full_result(n) for n in range(900)]
    run = await checkpoint.write_status(client, run)
    assert run["status"][status_layout.PACKED_KEY], "900 compact records pack"
    for _ in range(3):  # as a pass does: every result its view read, plus a new one
        view = RunView(run)
        view.status["results"] = [dict(r) for r in view.results] + [open_result(901)]
        run = await checkpoint.write_status(client, run)
        run["status"]["results"] = [r for r in run["status"]["results"] if r["phase"] != "Running"]
    results = status_layout.status_results(run["status"])
    assert len(results) == 900
    assert len({r["nodes"][0] for r in results}) == 900
    assert len(run["status"]["results"]) == 0  # every settled one is packed, none twice


def test_I9_a_unit_in_results_supersedes_its_packed_record() -> None:
    status = {
        status_layout.PACKED_KEY: status_layout.pack_records([compact(0), compact(1)]),
        "results": [full_result(1, phase="Passed")],  # unit 1 again, as a pass writes back
    }
    got = status_layout.status_results(status)
    assert [r["nodes"] for r in got] == [["kwok-node-0000"], ["kwok-node-0001"]]
    assert not status_layout.is_compact(got[1])


async def test_I9_a_record_that_differs_from_its_packed_member_is_never_dropped() -> None:
    client = FakeClient()
    run = await new_run(client)
    run["status"]["results"] = [full_result(n) for n in range(900)]
    run = await checkpoint.write_status(client, run)
    [member] = [
        r for r in status_layout.status_results(run["status"]) if r["nodes"] == ["kwok-node-0007"]
    ]
    edited = member | {"phase": "Failed"}  # same shard entry, another verdict
    run["status"]["results"] = [edited]
    run = await checkpoint.write_status(client, run)
    [shown] = [
        r for r in status_layout.status_results(run["status"]) if r["nodes"] == ["kwok-node-0007"]
    ]
    assert shown["phase"] == "Failed"  # never silently replaced by the packed Passed
    evidence = await build.read_evidence(client, run)
    assert status_layout.expand_result(shown, evidence)["phase"] == "Error"  # disagrees: unjudged


async def test_I9_a_full_result_with_another_verdict_than_its_packed_unit_is_kept_once() -> None:
    client = FakeClient()
    run = await new_run(client)
    run["status"]["results"] = [full_result(n) for n in range(900)]
    run = await checkpoint.write_status(client, run)
    # The same unit again, in full, with another verdict: it must never be dropped for
    # the packed Passed, and never packed beside it (a unit counted twice).
    run["status"]["results"] = [full_result(7, phase="Failed")] + [
        full_result(n) for n in range(1000, 1900)
    ]  # enough to shard again, so the Failed one is compacted too
    run = await checkpoint.write_status(client, run)
    run = await checkpoint.write_status(client, run)
    results = status_layout.status_results(run["status"])
    seven = [r for r in results if r["nodes"] == ["kwok-node-0007"]]
    assert [r["phase"] for r in seven] == ["Failed"]
    assert len(results) == 1800


async def test_I9_a_second_write_of_a_pass_never_shards_packed_results_again() -> None:
    client = FakeClient()
    run = await new_run(client)
    settled = [full_result(n) for n in range(900)]
    run["status"]["results"] = copy.deepcopy(settled)
    written = await checkpoint.write_status(client, run)
    made = {c["metadata"]["name"] for c in client.objects(CONFIGMAPS)}
    # The pass writes again from its own results list: the same units, in full (and in
    # another order, so a second shard of them would get another name).
    written["status"]["results"] = [*copy.deepcopy(settled[::-1]), open_result(901)]
    again = await checkpoint.write_status(client, written)
    assert {c["metadata"]["name"] for c in client.objects(CONFIGMAPS)} == made
    results = status_layout.status_results(again["status"])
    assert len(results) == 901
    assert sum(status_layout.is_compact(r) for r in results) == 900


async def test_I9_once_packed_every_new_compact_record_packs_too() -> None:
    client = FakeClient()
    run = await new_run(client)
    run["status"]["results"] = [full_result(n) for n in range(900)]
    run = await checkpoint.write_status(client, run)
    before = len(status_layout.status_results(run["status"]))
    # A few more settled results: too few to shard on their own (the status is small now).
    run["status"]["results"] = [full_result(n) for n in range(900, 905)]
    run = await checkpoint.write_status(client, run)
    results = status_layout.status_results(run["status"])
    assert len(results) == before + 5
    assert sum(status_layout.is_compact(r) for r in results) == before  # the new five stay full


async def grow(
    client: FakeClient, *, nodes: int, tests: int, batch: int = 100
) -> tuple[dict[str, Any], list[int]]:
    """A run over ``nodes`` nodes with a real fleet's fingerprint and prior map, settling
    ``batch`` results a write with 100 open ones riding along (maxConcurrentNodes)."""
    run = await new_run(client)
    names = [f"kwok-node-{n:04d}" for n in range(nodes)]
    run["status"]["fingerprint"] = {n: REAL_PRINT for n in names}
    run["status"]["priorUnschedulable"] = dict.fromkeys(names, False)
    await checkpoint.offload_fingerprint(client, run)
    expected = [full_result(n, test=f"t{t}") for t in range(tests) for n in range(nodes)]
    sizes: list[int] = []
    for start in range(0, len(expected), batch):
        results = [dict(r) for r in RunView(run).results]
        results += copy.deepcopy(expected[start : start + batch])
        following = [open_result(n % nodes) for n in range(start + batch, start + batch + 100)]
        RunView(run).status["results"] = results + following
        run = await checkpoint.write_status(client, run)
        sizes.append(checkpoint.encoded_size(run))
        run["status"]["results"] = [r for r in run["status"]["results"] if r["phase"] != "Running"]
    run = await checkpoint.write_status(client, run, terminal=True)
    sizes.append(checkpoint.encoded_size(run))
    return run, sizes


@pytest.mark.timeout(300)
async def test_I9_a_5000_node_run_fits_every_status_write_and_shows_every_result() -> None:
    client = FakeClient()
    run, sizes = await grow(client, nodes=5000, tests=1, batch=500)
    # Every write fits with room to spare: no clamping, far from etcd's limit.
    assert max(sizes) <= checkpoint.STATUS_BUDGET_BYTES // 2, max(sizes)
    assert (
        status_layout.FINGERPRINT_SHARD_KEY in run["status"] and "fingerprint" not in run["status"]
    )
    evidence = await build.read_evidence(client, run)
    envelope = build.build_envelope(
        run, reason="RunPhaseChanged", event_key="Passed", sent_at=datetime.now(UTC),
        baseline=False, shards=evidence,
    )  # fmt: skip
    assert len(envelope.results) == 5000
    assert {r.phase for r in envelope.results} == {"Passed"}
    assert {r.nodes[0] for r in envelope.results} == {f"kwok-node-{n:04d}" for n in range(5000)}
    assert all(r.metrics.get("exit_code") == "0" for r in envelope.results)
    assert len(envelope.fingerprint) == 5000
    assert set(envelope.fingerprint.values()) == {REAL_PRINT}


@pytest.mark.timeout(300)
async def test_I9_a_30000_result_run_fits_every_status_write() -> None:
    client = FakeClient()
    run, sizes = await grow(client, nodes=5000, tests=6, batch=3000)
    assert max(sizes) <= checkpoint.STATUS_BUDGET_BYTES
    assert len(status_layout.status_results(run["status"])) == 30000


# --- the fingerprint shard -----------------------------------------------------------------


async def test_I9_a_small_fingerprint_stays_in_the_status() -> None:
    client = FakeClient()
    run = await new_run(client)
    run["status"]["fingerprint"] = {f"n{i}": REAL_PRINT for i in range(10)}
    await checkpoint.offload_fingerprint(client, run)
    assert len(run["status"]["fingerprint"]) == 10
    assert status_layout.FINGERPRINT_SHARD_KEY not in run["status"]
    assert not client.objects(CONFIGMAPS)


async def test_I9_a_lost_fingerprint_shard_names_itself_against_every_target() -> None:
    client = FakeClient()
    run = await new_run(client)
    names = [f"n{i}" for i in range(1000)]
    run["status"]["fingerprint"] = {n: REAL_PRINT for n in names}
    run["status"]["priorUnschedulable"] = dict.fromkeys(names, False)
    await checkpoint.offload_fingerprint(client, run)
    run = await checkpoint.write_status(client, run)
    [shard] = client.objects(CONFIGMAPS)
    assert shard["immutable"] is True
    assert shard["metadata"]["ownerReferences"][0]["uid"] == run["metadata"]["uid"]
    await client.delete(CONFIGMAPS, shard["metadata"]["name"], namespace=NS)
    shown = build.fingerprint_of(run, await build.read_evidence(client, run))
    assert set(shown) == set(names)
    assert all(
        shard["metadata"]["name"] in text and "unavailable" in text for text in shown.values()
    )
    hydrated = build.expand_run(run, await build.read_evidence(client, run))
    assert hydrated["status"]["fingerprint"] == shown


async def test_I9_a_refused_fingerprint_shard_leaves_the_map_inline() -> None:
    client = FakeClient()
    run = await new_run(client)
    run["status"]["fingerprint"] = {f"n{i}": REAL_PRINT for i in range(1000)}
    client.inject_error(
        "create", ApiError(status=403, reason="Forbidden", body={"message": "forbidden"})
    )
    await checkpoint.offload_fingerprint(client, run)
    assert len(run["status"]["fingerprint"]) == 1000
    assert status_layout.FINGERPRINT_SHARD_KEY not in run["status"]


# --- a whole run, across a manager restart ----------------------------------------------------

NODES = 30


@pytest.fixture
def small_packs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Shard, pack and move the fingerprint at a few KiB, so 30 nodes act like 5,000."""
    monkeypatch.setattr(checkpoint, "SHARD_AT_BYTES", 4 * 1024)
    monkeypatch.setattr(checkpoint, "SHARD_MIN_BYTES", 2 * 1024)
    monkeypatch.setattr(checkpoint, "PACK_AT_BYTES", 512)
    monkeypatch.setattr(checkpoint, "FINGERPRINT_INLINE_BYTES", 256)


async def test_I9_a_packed_run_restarted_mid_way_finishes_with_every_result_once(
    small_packs: None,
) -> None:
    cluster = Cluster(nodes=NODES)
    await cluster.setup(tests={"a": custom_test("echo bw=1"), "b": custom_test("echo bw=2")})
    await cluster.client.create(
        SINKS, {"metadata": {"name": "s"}, "spec": {"type": "ConfigMap"}}, namespace=NS
    )
    await cluster.client.patch(PROFILES, "prof", {"spec": {"sinks": ["s"]}}, namespace=NS)
    await cluster.create_run(maxConcurrentNodes=NODES)
    await _launch(cluster)
    assert await _settle_live_pods(cluster) == NODES
    await cluster.reconcile()
    mid = (await cluster.run())["status"]
    assert mid.get(status_layout.PACKED_KEY), "the first settled wave packed"
    assert status_layout.FINGERPRINT_SHARD_KEY in mid
    cluster.reconciler = cluster.new_reconciler()  # the manager restarts
    run = await run_to_verdict(cluster)
    status = run["status"]
    assert status["phase"] == "Passed"
    assert (status["passed"], status["failed"], status["errored"]) == (2 * NODES, 0, 0)
    assert len([p for p in cluster.pods() if p["metadata"].get("labels")]) == 2 * NODES
    results = status_layout.status_results(status)
    assert sorted((r["name"], r["nodes"][0]) for r in results) == sorted(
        (t, f"n{n}") for t in "ab" for n in range(NODES)
    )
    [terminal] = [d for d in cluster.delivered.sent if d.reason == "RunPhaseChanged"
                  and d.event_key == "Passed"]  # fmt: skip
    sent = terminal.run["status"]
    assert len(sent["results"]) == 2 * NODES and status_layout.PACKED_KEY not in sent
    assert all(r.get("metrics") for r in sent["results"])
    assert len(sent["fingerprint"]) == NODES
