"""Runs with thousands of results (I9): compact records in status, evidence in
run-owned shards (docs/status-checkpoint.md). FakeClient, so 6,000 results are cheap."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

import pytest

from glimmer.api import status_layout
from glimmer.controllers.kit import checkpoint
from glimmer.controllers.kit import names as kit_names
from glimmer.engine import CONFIGMAPS, ApiError, FakeClient
from glimmer.sinks import build

NS = "team"


def full_result(index: int, *, phase: str = "Passed", test: str = "gpu-burn") -> dict[str, Any]:
    """A settled single-node result shaped as the sweep writes one (a KWOK-run size)."""
    node = f"kwok-node-{index:04d}"
    return {
        "name": test,
        "kind": "Custom",
        "scope": "Node",
        "phase": phase,
        "nodes": [node],
        "startedAt": "2026-12-01T12:00:00Z",
        "finishedAt": "2026-12-01T12:00:09Z",
        "metrics": {"exit_code": "0", "duration_seconds": "9", "bw_gbps": f"{400 + index % 7}"},
        "message": f"{test} {phase.lower()} on {node}: every gate met",
        "repeatsRequired": 1,
        "repeatsCompleted": 1 if phase == "Passed" else 0,
        "errorRetries": 0,
        "attempts": [
            {
                "attempt": 1,
                "trigger": "Initial",
                "phase": phase,
                "exitCode": 0,
                "node": node,
                "podName": f"r1-{test}-{node}-a1-x7k2q",
                "podUID": f"6f1c2a9e-0000-4000-8000-{index:012d}",
                "startedAt": "2026-12-01T12:00:00Z",
                "finishedAt": "2026-12-01T12:00:09Z",
                "deciding": True,
                "provenance": "unknown",
            }
        ],
        "provenance": "unknown",
    }


def open_result(index: int, *, test: str = "gpu-burn") -> dict[str, Any]:
    node = f"kwok-node-{index:04d}"
    return {
        "name": test,
        "kind": "Custom",
        "scope": "Node",
        "phase": "Running",
        "nodes": [node],
        "repeatsRequired": 1,
        "repeatsCompleted": 0,
        "errorRetries": 0,
        "attempts": [{"attempt": 1, "trigger": "Initial", "phase": "Running", "exitCode": 0,
                      "node": node, "podName": f"r1-{test}-{node}-a1", "podUID": "u"}],
    }  # fmt: skip


async def new_run(client: FakeClient, name: str = "r1") -> dict[str, Any]:
    return await client.create(
        kit_names.RUNS,
        {"metadata": {"name": name}, "spec": {"profileRef": "prof"}, "status": {}},
        namespace=NS,
    )


async def envelope_results(client: FakeClient, run: dict[str, Any]) -> list[Any]:
    """Every result as a sink would send it (the read sinks and reports share)."""
    evidence = await build.read_evidence(client, run)
    envelope = build.build_envelope(
        run,
        reason="Checkpoint",
        event_key="checkpoint-1",
        sent_at=datetime.now(UTC),
        baseline=False,
        shards=evidence,
    )
    return list(envelope.results)


def shard_objects(client: FakeClient) -> list[dict[str, Any]]:
    return [
        c
        for c in client.objects(CONFIGMAPS)
        if (c["metadata"].get("labels") or {}).get(checkpoint.SHARD_LABEL) == "true"
    ]


TESTS = ("gpu-burn", "memory-bw", "nccl", "dcgm-diag", "host-health", "clock-probe")


async def grow(client: FakeClient, *, nodes: int, batch: int) -> tuple[dict[str, Any], list[int]]:
    """A 6-test run over ``nodes`` nodes settling ``batch`` results per status write
    (each write also carries ``batch`` open results, as a pass mid-run does). Returns
    the run and the size of every status write as sent."""
    run = await new_run(client)
    expected = [full_result(n, test=t) for t in TESTS for n in range(nodes)]
    sizes: list[int] = []
    for start in range(0, len(expected), batch):
        results = [dict(r) for r in status_layout.status_results(run["status"])]
        results += copy.deepcopy(expected[start : start + batch])
        following = [open_result(n % nodes) for n in range(start + batch, start + 2 * batch)]
        run["status"]["results"] = results + following
        run = await checkpoint.write_status(client, run)
        sizes.append(checkpoint.encoded_size(run))
        run["status"]["results"] = [
            r for r in run["status"]["results"] if r.get("phase") != "Running"
        ]
    run = await checkpoint.write_status(client, run, terminal=True)
    sizes.append(checkpoint.encoded_size(run))
    return run, sizes


async def test_shards_a_6000_result_run_fits_every_status_write_and_shows_every_result() -> None:
    client = FakeClient()
    run, sizes = await grow(client, nodes=1000, batch=100)
    assert max(sizes) <= checkpoint.STATUS_BUDGET_BYTES  # every write accepted, none clamped
    recorded = status_layout.status_results(run["status"])
    assert len(recorded) == 6000
    compact = sum(status_layout.is_compact(r) for r in recorded)
    assert compact >= 5500  # the newest few settled stay full until 256 KiB can move
    results = await envelope_results(client, run)
    assert len(results) == 6000
    want = {(t, f"kwok-node-{n:04d}") for t in TESTS for n in range(1000)}
    assert {(r.name, r.nodes[0]) for r in results} == want
    assert {r.phase for r in results} == {"Passed"}
    by_key = {(r.name, r.nodes[0]): r for r in results}
    sample = full_result(123, test="nccl")
    got = by_key[("nccl", "kwok-node-0123")]
    assert dict(got.metrics) == sample["metrics"]
    assert got.message == sample["message"]
    assert got.finished_at == sample["finishedAt"]
    assert len(shard_objects(client)) <= 25  # few, large: ~5 MB of evidence / 256 KiB


async def test_shards_a_run_that_fits_is_written_exactly_as_before() -> None:
    client = FakeClient()
    run = await new_run(client)
    run["status"]["results"] = [full_result(n) for n in range(50)] + [open_result(51)]
    sent = copy.deepcopy(run["status"])
    run = await checkpoint.write_status(client, run)
    assert run["status"] == sent  # wire compatible: full TestResults, no shard fields
    assert shard_objects(client) == []


async def test_shards_open_and_pair_results_always_stay_full() -> None:
    client = FakeClient()
    run = await new_run(client)
    pair = full_result(1, test="nccl-pair") | {"scope": "Pair", "nodes": ["a", "b"]}
    run["status"]["results"] = [full_result(n) for n in range(900)] + [open_result(7), pair]
    run = await checkpoint.write_status(client, run)
    *settled, still_open, kept_pair = status_layout.status_results(run["status"])
    assert all(status_layout.is_compact(r) for r in settled)
    assert still_open == open_result(7)
    assert kept_pair == pair


class RefusingShards(FakeClient):
    """A FakeClient whose ConfigMap creates fail (``code``: quota/RBAC, or an outage)."""

    def __init__(self, code: int) -> None:
        super().__init__()
        self.code = code

    async def create(self, resource: Any, body: Any, **kwargs: Any) -> Any:
        if resource == CONFIGMAPS:
            raise ApiError(status=self.code, reason="No", body={"message": "refused"})
        return await super().create(resource, body, **kwargs)


@pytest.mark.parametrize(
    ("code", "error"), [(403, checkpoint.StatusTooLargeError), (503, checkpoint.ShardError)]
)
async def test_shards_the_status_is_never_written_before_its_shards_exist(
    code: int, error: type[Exception]
) -> None:
    client = RefusingShards(code)
    run = await new_run(client)
    before = await client.get(kit_names.RUNS, "r1", namespace=NS)
    run["status"]["results"] = [full_result(n) for n in range(900)]
    with pytest.raises(error) as caught:
        await checkpoint.write_status(client, run)
    after = await client.get(kit_names.RUNS, "r1", namespace=NS)
    assert after == before  # no status names a shard that was never made durable
    if isinstance(caught.value, checkpoint.StatusTooLargeError):
        # what the reconciler's terminal Error write starts from: every result whole
        assert not any(
            status_layout.is_compact(r)
            for r in status_layout.status_results(caught.value.run["status"])
        )


async def test_shards_a_terminal_write_never_waits_on_a_refused_shard() -> None:
    client = RefusingShards(403)
    run = await new_run(client)
    run["status"]["results"] = [full_result(n) for n in range(900)]
    written = await checkpoint.write_status(client, run, terminal=True)
    results = status_layout.status_results(written["status"])
    assert len(results) == 900
    assert not any(status_layout.is_compact(r) for r in results)  # no reference to a missing shard
    assert {r["phase"] for r in results} == {"Passed"}


async def test_shards_a_result_no_shard_can_hold_stays_whole() -> None:
    client = FakeClient()
    run = await new_run(client)
    huge = full_result(0) | {"message": "x" * (checkpoint.SHARD_MAX_BYTES + 1)}
    run["status"]["results"] = [huge, *(full_result(n) for n in range(1, 900))]
    run = await checkpoint.write_status(client, run)
    results = status_layout.status_results(run["status"])
    whole = [r for r in results if r["nodes"] == ["kwok-node-0000"]]
    assert whole == [huge]
    assert len(results) == 900
    assert all(status_layout.is_compact(r) for r in results if r is not whole[0])


async def test_shards_a_retried_write_reuses_the_same_shard() -> None:
    client = FakeClient()
    run = await new_run(client)
    run["status"]["results"] = [full_result(n) for n in range(900)]
    first = copy.deepcopy(run)
    stale = copy.deepcopy(run)
    await checkpoint.write_status(client, first)
    made = sorted(c["metadata"]["name"] for c in shard_objects(client))
    with pytest.raises(ApiError) as conflict:
        await checkpoint.write_status(client, stale)  # a stale resourceVersion: 409
    assert conflict.value.status == 409  # the shards were fine: theirs, same bytes
    assert sorted(c["metadata"]["name"] for c in shard_objects(client)) == made


async def _sharded(client: FakeClient, *, count: int = 900) -> dict[str, Any]:
    run = await new_run(client)
    run["status"]["results"] = [full_result(n) for n in range(count)]
    return await checkpoint.write_status(client, run)


async def test_shards_a_missing_shard_makes_its_results_error_never_dropped() -> None:
    client = FakeClient()
    run = await _sharded(client)
    [victim, *_] = shard_objects(client)
    name = victim["metadata"]["name"]
    await client.delete(CONFIGMAPS, name, namespace=NS)
    results = await envelope_results(client, run)
    assert len(results) == 900  # every result is still shown
    lost = [r for r in results if r.phase == "Error"]
    digest = name.rsplit("-", 1)[1]
    recorded = [
        r
        for r in status_layout.status_results(run["status"])
        if r["evidence"].startswith(digest + "/")
    ]
    assert len(lost) == len(recorded) > 0
    assert all(digest in r.message and "unjudged" in r.message for r in lost)
    assert {r.phase for r in results} <= {"Passed", "Error"}


async def _rewrite(client: FakeClient, victim: dict[str, Any]) -> None:
    """Replace a shard behind the manager's back (a person, another tool)."""
    name = victim["metadata"]["name"]
    await client.delete(CONFIGMAPS, name, namespace=NS)
    victim["metadata"] = {k: v for k, v in victim["metadata"].items()
                          if k in ("name", "labels", "ownerReferences")}  # fmt: skip
    await client.create(CONFIGMAPS, victim, namespace=NS)


async def _tamper(client: FakeClient, edit: Any) -> None:
    [victim, *_] = shard_objects(client)
    victim["data"] = {checkpoint.PAYLOAD_KEY: edit(victim["data"][checkpoint.PAYLOAD_KEY])}
    await _rewrite(client, victim)


@pytest.mark.parametrize(
    "edit",
    [
        lambda text: "{not json",
        lambda text: "[]",
        lambda text: text.replace('"exit_code":"0"', '"exit_code":"1"', 1),
    ],
)
async def test_shards_an_unreadable_or_altered_shard_reads_error(edit: Any) -> None:
    client = FakeClient()
    run = await _sharded(client)
    await _tamper(client, edit)
    results = await envelope_results(client, run)
    assert len(results) == 900
    errors = [r for r in results if r.phase == "Error"]
    assert errors and all("absent, foreign or altered" in r.message for r in errors)


async def test_shards_a_foreign_shard_is_not_evidence() -> None:
    client = FakeClient()
    run = await _sharded(client)
    for victim in shard_objects(client):
        victim["metadata"]["ownerReferences"][0]["uid"] = "someone-else"
        await _rewrite(client, victim)
    results = await envelope_results(client, run)
    assert {r.phase for r in results} == {"Error"}


async def test_shards_without_the_shards_a_compact_record_never_reads_passed() -> None:
    client = FakeClient()
    run = await _sharded(client)
    envelope = build.build_envelope(
        run, reason="Checkpoint", event_key="c", sent_at=datetime.now(UTC), baseline=False
    )
    assert {r.phase for r in envelope.results} == {"Error"}


def test_shards_a_record_that_disagrees_with_its_entry_reads_error() -> None:
    failed = full_result(3, phase="Failed")
    record = status_layout.compact_result(failed, shard="d", index=0)
    assert status_layout.expand_result(record, {"d": [failed]}) == failed
    lying = record | {"phase": "Passed"}  # a status that says Pass over a recorded Fail
    forged = status_layout.expand_result(lying, {"d": [failed]})
    assert forged["phase"] == "Error"
    assert "phase disagrees" in forged["message"]
    assert (
        status_layout.expand_result(record | {"evidence": "d/7"}, {"d": [failed]})["phase"]
        == "Error"
    )
    assert status_layout.expand_result(record | {"evidence": "garbage"}, {"d": [failed]})[
        "phase"
    ] == ("Error")


async def test_shards_every_envelope_of_a_sharded_run_carries_its_results_in_full() -> None:
    """TestCompleted and Checkpoint envelopes too, not only the terminal one: the
    deliverer reads the run's shards (without them every compact record reads Error)."""
    from glimmer.controllers.run.delivery import Delivery, Reason, SinkDeliverer
    from glimmer.sinks import FanoutReport, SinkFanout

    client = FakeClient()
    run = await _sharded(client)
    assert any("evidence" in r for r in status_layout.status_results(run["status"]))  # it did shard
    seen: list[Any] = []

    class Capture(SinkFanout):
        async def deliver(self, envelope: Any, **_: Any) -> FanoutReport:
            seen.append(envelope)
            return FanoutReport()

    deliverer = SinkDeliverer(fanout=Capture(client=client), now=lambda: datetime.now(UTC))
    for reason, key in ((Reason.TEST_COMPLETED, "gpu-burn/n1"), (Reason.CHECKPOINT, "3")):
        await deliverer.deliver(Delivery(reason, key, run, ("hook",)))
    assert len(seen) == 2
    for envelope in seen:
        assert len(envelope.results) == 900
        assert {r.phase for r in envelope.results} == {"Passed"}


async def test_I9_a_status_write_sends_no_field_owners() -> None:
    """A write's answer carries ``managedFields`` (an entry per key of the run's per-node
    maps); the next write leaves them out, and the apiserver keeps them as they are."""
    client = FakeClient()
    run = await new_run(client)
    run["metadata"]["managedFields"] = [{"manager": "glimmer", "operation": "Update"}]
    run["status"]["results"] = [full_result(1)]
    mark = len(client.requests)
    await checkpoint.write_status(client, run)
    [sent] = [r.body for r in client.requests[mark:] if r.verb == "replace"]
    assert "managedFields" not in sent["metadata"]
    assert sent["metadata"]["name"] == run["metadata"]["name"]
    assert run["metadata"]["managedFields"]  # the caller's run is left as it was
