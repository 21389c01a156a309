"""Runs at fleet scale (I9) against a real apiserver: a run with thousands of results,
written through ``checkpoint.write_status`` (compact records + evidence shards), every write
accepted, every result readable back through the read sinks use
(docs/status-checkpoint.md)."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

import pytest

from glimmer.api import status_layout
from glimmer.controllers.kit import checkpoint
from glimmer.controllers.kit.names import RUNS
from glimmer.engine import CONFIGMAPS, ApiError, ApiServerClient
from glimmer.sinks import build

from .conftest import create_run

TESTS = ("gpu-burn", "memory-bw", "nccl", "dcgm-diag", "host-health", "clock-probe")


def synthetic(test: str, index: int) -> dict[str, Any]:
    """A settled result of the size a KWOK-run one has."""
    node = f"kwok-node-{index:04d}"
    return {
        "name": test,
        "kind": "custom",
        "scope": "Node",
        "phase": "Passed",
        "nodes": [node],
        "startedAt": "2026-12-01T12:00:00Z",
        "finishedAt": "2026-12-01T12:00:09Z",
        "metrics": {"exit_code": "0", "bw_gbps": f"{400 + index % 7}"},
        "message": f"{test} passed on {node}: every gate met",
        "repeatsRequired": 1,
        "repeatsCompleted": 1,
        "errorRetries": 0,
        "attempts": [
            {"attempt": 1, "trigger": "Initial", "phase": "Passed", "exitCode": 0,
             "node": node, "podName": f"r-{test}-{node}-a1", "podUID": f"uid-{index}",
             "startedAt": "2026-12-01T12:00:00Z", "finishedAt": "2026-12-01T12:00:09Z",
             "deciding": True, "provenance": "unknown"}
        ],
        "provenance": "unknown",
    }  # fmt: skip


@pytest.mark.timeout(600)
async def test_shards_6000_results_every_write_accepted_by_the_apiserver_and_readable(
    kube: ApiServerClient, namespace: str
) -> None:
    nodes = 1000
    run = await create_run(kube, namespace, "big", ["kwok-node-0000"], suspend=True)
    expected = [synthetic(t, n) for t in TESTS for n in range(nodes)]
    for start in range(0, len(expected), 500):
        results = [dict(r) for r in status_layout.status_results(run.get("status", {}))]
        run.setdefault("status", {})["results"] = results + copy.deepcopy(
            expected[start : start + 500]
        )
        run = await checkpoint.write_status(kube, run)  # raises on any refusal
    stored = await kube.get(RUNS, "big", namespace=namespace)
    recorded = status_layout.status_results(stored["status"])
    assert len(recorded) == 6000
    assert (
        sum(status_layout.is_compact(r) for r in recorded) >= 5500
    )  # the apiserver kept `evidence`
    assert len(status_layout.canonical(stored)) <= checkpoint.STATUS_BUDGET_BYTES
    evidence = await build.read_evidence(kube, stored)
    assert evidence and all(isinstance(p, list) for p in evidence.values())
    envelope = build.build_envelope(
        stored, reason="Checkpoint", event_key="c1", sent_at=datetime.now(UTC),
        baseline=False, shards=evidence,
    )  # fmt: skip
    got = {(r.name, r.nodes[0]): r for r in envelope.results}
    assert len(envelope.results) == len(got) == 6000
    assert {r.phase for r in envelope.results} == {"Passed"}
    for want in (expected[0], expected[2345], expected[-1]):
        result = got[(want["name"], want["nodes"][0])]
        assert dict(result.metrics) == want["metrics"]
        assert result.message == want["message"]


async def test_shards_a_shard_is_immutable_and_its_loss_reads_error(
    kube: ApiServerClient, namespace: str
) -> None:
    run = await create_run(kube, namespace, "mid", ["kwok-node-0000"], suspend=True)
    run.setdefault("status", {})["results"] = [synthetic("t", n) for n in range(900)]
    run = await checkpoint.write_status(kube, run)
    digests = status_layout.shard_digests(status_layout.status_results(run["status"]))
    assert digests
    name = status_layout.shard_name("mid", digests[0])
    shard = await kube.get(CONFIGMAPS, name, namespace=namespace)
    shard["data"][checkpoint.PAYLOAD_KEY] = "[]"
    with pytest.raises(ApiError):  # immutable: nothing rewrites evidence a status names
        await kube.replace(CONFIGMAPS, shard, namespace=namespace)
    await kube.delete(CONFIGMAPS, name, namespace=namespace)
    envelope = build.build_envelope(
        run, reason="Checkpoint", event_key="c1", sent_at=datetime.now(UTC), baseline=False,
        shards=await build.read_evidence(kube, run),
    )  # fmt: skip
    assert len(envelope.results) == 900
    assert "Error" in {r.phase for r in envelope.results}  # unjudged, not dropped


async def test_I9_a_status_write_without_field_owners_keeps_the_apiservers(
    kube: ApiServerClient, namespace: str
) -> None:
    """The write leaves ``managedFields`` out of what it sends; the apiserver keeps the
    object's field owners (only an explicit ``[{}]`` would clear them)."""
    run = await create_run(kube, namespace, "owners", ["kwok-node-0000"], suspend=True)
    run.setdefault("status", {})["results"] = [synthetic("gpu-burn", 0)]
    first = await checkpoint.write_status(kube, run)
    owners = first["metadata"].get("managedFields") or []
    assert any(e.get("subresource") == "status" for e in owners), owners
    first["status"]["results"] = [synthetic("gpu-burn", 0), synthetic("gpu-burn", 1)]
    second = await checkpoint.write_status(kube, first)  # sent from an answer that has them
    assert [r["nodes"] for r in second["status"]["results"]] == [["kwok-node-0000"],
                                                                 ["kwok-node-0001"]]  # fmt: skip
    again = second["metadata"].get("managedFields") or []
    assert {(e.get("manager"), e.get("subresource")) for e in again} == {
        (e.get("manager"), e.get("subresource")) for e in owners
    }
