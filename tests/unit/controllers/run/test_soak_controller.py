"""The run controller's segmented soaks (G1, G2, G5, G6) on the fake apiserver with a
hand-driven kubelet."""

from __future__ import annotations

from typing import Any

from glimmer.engine import Result
from tests.unit.controllers.run.harness import Cluster, custom_test


def soak(segments: int, **extra: Any) -> dict[str, Any]:
    soak_block = {"segmentSeconds": 300, **extra.pop("soak", {})}
    return custom_test("echo", durationSeconds=300 * segments, soak=soak_block, **extra)


async def one_live_pod(cluster: Cluster) -> dict[str, Any]:
    [pod] = cluster.live_pods()
    return pod


async def result_of(cluster: Cluster) -> dict[str, Any]:
    run = await cluster.run()
    [result] = run["status"]["results"]
    return dict(result)


async def finish_segment(cluster: Cluster, log: str, *, exit_code: int = 0) -> str:
    pod = await one_live_pod(cluster)
    name = str(pod["metadata"]["name"])
    await cluster.kubelet(name, exit_code=exit_code, log=log)
    await cluster.reconcile()
    return name


def env(pod: dict[str, Any]) -> dict[str, str]:
    [container] = [c for c in pod["spec"]["containers"] if c.get("env")]
    return {e["name"]: e.get("value", "") for e in container["env"]}


async def test_G1_every_segment_is_a_full_window_and_the_count_is_pinned() -> None:
    cluster = Cluster(nodes=1)
    # 1000 s in 300 s segments: ceil -> 4 segments, each a full 300 s window.
    await cluster.setup(tests={"t": custom_test("echo", durationSeconds=1000,
                                                soak={"segmentSeconds": 300})})  # fmt: skip
    await cluster.create_run()
    await cluster.reconcile()
    pod = await one_live_pod(cluster)
    assert env(pod)["BURNIN_DURATION_SECONDS"] == "300"
    assert pod["spec"]["activeDeadlineSeconds"] == 300 + 120
    await cluster.kubelet(pod["metadata"]["name"], exit_code=None)
    await cluster.reconcile()
    result = await result_of(cluster)
    assert (result["segmentsRequired"], result["segmentSeconds"], result["segmentsCompleted"]) == (
        4,
        300,
        0,
    )


async def test_G5_a_long_soak_caps_its_history_and_never_reuses_a_pod_name() -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": soak(20)})
    await cluster.create_run()
    await cluster.reconcile()
    names = [await finish_segment(cluster, "elapsedS=300\n") for _ in range(20)]
    assert len(set(names)) == 20
    result = await result_of(cluster)
    assert result["phase"] == "Passed", result
    assert result["segmentsCompleted"] == 20
    assert result["aggregatedMetrics"] == {"elapsedS": "6000"}
    assert len(result["attempts"]) == 17
    assert result["truncatedAttempts"] == 3
    numbers = [a["attempt"] for a in result["attempts"]]
    assert numbers == [1, *range(5, 21)]
    assert [a["podName"] for a in result["attempts"]] == [names[0], *names[4:]]


async def test_G6_a_checkpoint_shows_the_fold_and_never_writes_aggregated_metrics() -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": soak(3, checkpointIntervalSeconds=60)})
    await cluster.create_run()
    await cluster.reconcile()
    await finish_segment(cluster, "gpuTempC=80\nelapsedS=300\n")
    pod = await one_live_pod(cluster)
    await cluster.kubelet(pod["metadata"]["name"], exit_code=None)
    await cluster.reconcile()
    cluster.client.set_pod_log(pod["metadata"]["name"], namespace="team",
                               text="gpuTempC=70\nelapsedS=100\n")  # fmt: skip
    cluster.advance(61)
    await cluster.reconcile()
    result = await result_of(cluster)
    assert result["metrics"] == {"elapsedS": "400", "gpuTempC": "80"}  # fold(agg, window)
    assert result["aggregatedMetrics"] == {"elapsedS": "300", "gpuTempC": "80"}
    assert result["attempts"][-1]["metrics"] == {"elapsedS": "100", "gpuTempC": "70"}
    assert result["segmentsCompleted"] == 1
    assert result["phase"] == "Running"


async def test_G2_a_segment_replayed_after_a_restart_is_folded_once() -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": soak(3)})
    await cluster.create_run()
    await cluster.reconcile()
    await finish_segment(cluster, "elapsedS=300\n")
    for _ in range(3):  # a restarted manager, reconciling the same status again
        cluster.reconciler = cluster.new_reconciler()
        outcome = await cluster.reconcile()
        assert isinstance(outcome, Result)
    result = await result_of(cluster)
    assert result["segmentsCompleted"] == 1
    assert result["aggregatedMetrics"] == {"elapsedS": "300"}
    assert len(cluster.live_pods()) == 1  # segment 2, once


async def test_G2_an_errored_segment_is_retried_at_its_index_and_folds_nothing() -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": soak(2)})
    await cluster.create_run(retryOnErrorLimit=1)
    await cluster.reconcile()
    await finish_segment(cluster, "elapsedS=300\n")
    await finish_segment(cluster, "elapsedS=300\nno device\n", exit_code=3)
    result = await result_of(cluster)
    assert result["phase"] == "Running"
    assert result["metrics"] == {"elapsedS": "300"}
    assert result["message"] == "segment 1/2 complete"
    await finish_segment(cluster, "elapsedS=300\n")
    result = await result_of(cluster)
    assert result["phase"] == "Passed"
    assert result["aggregatedMetrics"] == {"elapsedS": "600"}
    assert [(a["trigger"], a["phase"]) for a in result["attempts"]] == [
        ("Initial", "Passed"),
        ("Segment", "Error"),
        ("ErrorRetry", "Passed"),
    ]
