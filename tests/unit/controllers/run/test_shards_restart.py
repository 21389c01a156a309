"""A run that shards mid-way, across a manager restart (I9): every pass re-derives
from status + pods (E1); the shards are evidence, never needed to continue."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from glimmer.api import status_layout
from glimmer.controllers.kit import checkpoint, names
from glimmer.controllers.kit.names import PROFILES
from glimmer.engine import CONFIGMAPS
from glimmer.sinks import build
from glimmer.sinks.fanout import SINKS

from .harness import NS, Cluster, custom_test

NODES = 30


@pytest.fixture
def small_shards(monkeypatch: pytest.MonkeyPatch) -> None:
    """Shard at a few KiB, so a 30-node run shards like a 1,000-node one."""
    monkeypatch.setattr(checkpoint, "SHARD_AT_BYTES", 4 * 1024)
    monkeypatch.setattr(checkpoint, "SHARD_MIN_BYTES", 2 * 1024)


async def _launch(cluster: Cluster) -> None:
    for _ in range(5):
        if cluster.live_pods():
            return
        await cluster.reconcile()


async def _settle_live_pods(cluster: Cluster) -> int:
    pods = cluster.live_pods()
    for pod in pods:
        node = pod["metadata"]["labels"][names.NODE_LABEL]
        await cluster.kubelet(pod["metadata"]["name"], exit_code=0, log=f"bw={len(node)}\n")
    return len(pods)


async def run_to_verdict(cluster: Cluster) -> dict[str, Any]:
    """Reconcile, launching and settling every pod, until the run is terminal."""
    for _ in range(10):
        await cluster.reconcile()
        if (await cluster.run())["status"].get("phase") in ("Passed", "Failed", "Error"):
            break
        await _launch(cluster)
        await _settle_live_pods(cluster)
    return await cluster.run()


async def test_shards_a_manager_restart_mid_run_re_derives_from_status_and_shards(
    small_shards: None,
) -> None:
    cluster = Cluster(nodes=NODES)
    await cluster.setup(
        tests={
            "a": custom_test(
                "echo bw=1",
                thresholds=[{"metric": "bw", "comparison": "GreaterThanOrEqual", "value": "1"}],
            ),
            "b": custom_test("echo bw=1"),
        }
    )
    await cluster.client.create(
        SINKS, {"metadata": {"name": "s"}, "spec": {"type": "ConfigMap"}}, namespace=NS
    )
    await cluster.client.patch(PROFILES, "prof", {"spec": {"sinks": ["s"]}}, namespace=NS)
    await cluster.create_run(maxConcurrentNodes=NODES)
    await _launch(cluster)
    assert await _settle_live_pods(cluster) == NODES  # test a, everywhere
    await cluster.reconcile()
    mid = await cluster.run()
    compact = [
        r for r in status_layout.status_results(mid["status"]) if status_layout.is_compact(r)
    ]
    assert compact, "the first settled batch moved to shards"
    assert all(r["phase"] == "Passed" for r in compact)
    # The manager restarts: a new reconciler, nothing in memory, only status + pods.
    cluster.reconciler = cluster.new_reconciler()
    run = await run_to_verdict(cluster)
    status = run["status"]
    assert status["phase"] == "Passed"
    assert (status["passed"], status["failed"], status["errored"]) == (2 * NODES, 0, 0)
    pods = [p for p in cluster.pods() if p["metadata"].get("labels")]
    assert len(pods) == 2 * NODES  # nothing re-ran: settled compact units stayed settled
    evidence = await build.read_evidence(cluster.client, run)
    envelope = build.build_envelope(
        run, reason="RunPhaseChanged", event_key="Passed", sent_at=datetime.now(UTC),
        baseline=False, shards=evidence,
    )  # fmt: skip
    assert len(envelope.results) == 2 * NODES
    assert {r.phase for r in envelope.results} == {"Passed"}
    a_results = [r for r in envelope.results if r.name == "a"]
    assert all(r.metrics.get("bw") == str(len(r.nodes[0])) for r in a_results)
    # The terminal envelope the manager sends is built from every result in full.
    [terminal] = [d for d in cluster.delivered.sent if d.reason == "RunPhaseChanged"
                  and d.event_key == "Passed"]  # fmt: skip
    sent = status_layout.status_results(terminal.run["status"])
    assert len(sent) == 2 * NODES
    assert not any(status_layout.is_compact(r) for r in sent)
    assert all(r.get("metrics") for r in sent)


async def test_shards_a_shard_lost_mid_run_shows_its_results_unjudged(
    small_shards: None,
) -> None:
    cluster = Cluster(nodes=NODES)
    await cluster.setup(tests={"a": custom_test("echo bw=1")})
    await cluster.create_run(maxConcurrentNodes=NODES)
    await _launch(cluster)
    await _settle_live_pods(cluster)
    await cluster.reconcile()
    run = await cluster.run()
    lost = [
        c["metadata"]["name"]
        for c in cluster.client.objects(CONFIGMAPS)
        if (c["metadata"].get("labels") or {}).get(checkpoint.SHARD_LABEL)
    ]
    assert lost
    for name in lost:
        await cluster.client.delete(CONFIGMAPS, name, namespace="team")
    evidence = await build.read_evidence(cluster.client, run)
    envelope = build.build_envelope(
        run, reason="Checkpoint", event_key="c", sent_at=datetime.now(UTC), baseline=False,
        shards=evidence,
    )  # fmt: skip
    assert len(envelope.results) == NODES
    compact = sum(status_layout.is_compact(r) for r in status_layout.status_results(run["status"]))
    assert sum(r.phase == "Error" for r in envelope.results) == compact > 0
    assert "Passed" not in {r.phase for r in envelope.results if "unjudged" in r.message}
