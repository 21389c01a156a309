"""Evidence rules (I10) against the in-memory apiserver: the whole log is judged as
bytes (I11, I19), provenance is the operator's own knowledge (I14), and an end the
runner did not reach by itself is Error (I17)."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from glimmer.controllers.run import evidence
from glimmer.engine import CONFIGMAPS, NODES, PODS
from glimmer.verdict.termination import DEADLINE_MESSAGE
from tests.unit.controllers.run.harness import NS, Cluster, custom_test

BW_GATE = [{"metric": "bw", "comparison": "GreaterThanOrEqual", "value": "10"}]
MIB = 1 << 20
#: 2000 lines of about 600 bytes: the last 2000 lines hold more than 1 MiB.
CHATTER = b"".join(b"progress %04d " % i + b"." * 600 + b"\n" for i in range(2000))


async def started_pod(cluster: Cluster, **test: Any) -> str:
    await cluster.setup(tests={"t": custom_test("echo", thresholds=BW_GATE, **test)})
    await cluster.create_run()
    await cluster.reconcile()
    [pod] = cluster.live_pods()
    name = str(pod["metadata"]["name"])
    await cluster.kubelet(name, exit_code=None)
    await cluster.reconcile()
    return name


async def finish(
    cluster: Cluster, pod: str, *, log: bytes, exit_code: int = 0, **status: Any
) -> dict[str, Any]:
    """Terminate ``pod`` with ``log``; ``status`` is merged into the pod status after."""
    await cluster.kubelet(pod, exit_code=exit_code)
    cluster.client.set_pod_log(pod, namespace=NS, text=log)
    if status:
        await cluster.client.patch(
            PODS, pod, {"status": status}, namespace=NS, subresource="status"
        )
    await cluster.reconcile()
    result: dict[str, Any] = (await cluster.run())["status"]["results"][0]
    return result


# --- I11: never judge a cut log -------------------------------------------------------


async def test_I11_the_final_metric_past_the_first_mib_of_the_tail_decides() -> None:
    cluster = Cluster(nodes=1)
    pod = await started_pod(cluster)
    assert len(CHATTER) > MIB
    result = await finish(cluster, pod, log=b"bw=12\n" + CHATTER + b"bw=3\n")
    # A 2000-line tail cut at 1 MiB would have kept bw=12 and passed.
    assert result["phase"] == "Failed", result
    assert result["metrics"]["bw"] == "3"


async def test_I11_a_log_past_the_read_bound_is_error_naming_the_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(evidence, "LOG_MAX_BYTES", MIB)
    cluster = Cluster(nodes=1)
    pod = await started_pod(cluster)
    result = await finish(cluster, pod, log=b"bw=12\n" + CHATTER + b"bw=12\n")
    assert result["phase"] == "Error", result
    assert f"{MIB}-byte read bound" in result["message"]
    assert "bw" not in (result.get("metrics") or {})  # a prefix is never judged


async def test_I11_a_read_broken_mid_stream_is_never_judged() -> None:
    cluster = Cluster(nodes=1)
    pod = await started_pod(cluster)
    await cluster.kubelet(pod, exit_code=0)
    log = b"bw=12\n" + CHATTER + b"bw=3\n"
    cluster.client.set_pod_log(pod, namespace=NS, text=log, fail_after_bytes=len(log) - 10)
    await cluster.reconcile()
    result = (await cluster.run())["status"]["results"][0]
    assert result["phase"] == "Error", result
    assert "read broke after" in result["message"]


async def test_I11_a_runner_exit_1_stays_failed_when_its_log_is_cut(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(evidence, "LOG_MAX_BYTES", MIB)
    cluster = Cluster(nodes=1)
    pod = await started_pod(cluster)
    result = await finish(cluster, pod, log=CHATTER, exit_code=1)
    assert result["phase"] == "Failed", result
    assert "read bound" in result["message"]


async def test_I11_a_checkpoint_reads_the_whole_log_and_never_half_a_line() -> None:
    cluster = Cluster(nodes=1)
    pod = await started_pod(cluster, checkpointIntervalSeconds=10)
    # The runner is mid-write: "bw=1" is the start of "bw=100".
    cluster.client.set_pod_log(pod, namespace=NS, text=b"bw=5\n" + CHATTER + b"bw=12\nbw=1")
    cluster.advance(11)
    await cluster.reconcile()
    result = (await cluster.run())["status"]["results"][0]
    assert result["phase"] == "Running"
    assert result["metrics"] == {"bw": "12"}
    assert result["attempts"][-1]["metrics"] == {"bw": "12"}
    assert result["attempts"][-1]["lastCheckpointAt"] == result["lastCheckpointAt"]


async def test_I11_a_cut_checkpoint_read_stores_nothing() -> None:
    cluster = Cluster(nodes=1)
    pod = await started_pod(cluster, checkpointIntervalSeconds=10)
    log = b"bw=12\n" + CHATTER + b"bw=3\n"
    cluster.client.set_pod_log(pod, namespace=NS, text=log, fail_after_bytes=len(log) - 10)
    cluster.advance(11)
    await cluster.reconcile()
    result = (await cluster.run())["status"]["results"][0]
    assert result["phase"] == "Running"
    assert not result.get("metrics") and not result.get("lastCheckpointAt")


# --- I19: logs are bytes end to end -------------------------------------------------


async def test_I19_a_non_utf8_log_is_judged_and_the_node_released() -> None:
    cluster = Cluster(nodes=1)
    pod = await started_pod(cluster)
    result = await finish(cluster, pod, log=b"\xff\xfe\xc3 garbage\nbw=12\nDONE \xe9\n")
    assert result["phase"] == "Passed", result
    run = await cluster.run()
    assert run["status"]["phase"] == "Passed"
    assert not cluster.node("n0")["spec"].get("unschedulable")


async def test_I19_a_non_utf8_artifact_reaches_binary_data() -> None:
    cluster = Cluster(nodes=1)
    pod = await started_pod(cluster)
    payload = b"\x89PNG\xff\x00\x01"
    log = (
        b"-----BEGIN BURNIN ARTIFACT trace.bin application/octet-stream-----\n"
        + payload
        + b"\n-----END BURNIN ARTIFACT-----\nbw=12\n"
    )
    result = await finish(cluster, pod, log=log)
    assert result["phase"] == "Passed", result
    [store] = cluster.client.objects(CONFIGMAPS)
    [(key, value)] = store["binaryData"].items()
    assert key.endswith(".trace.bin")
    assert base64.b64decode(value) == payload + b"\n"


# --- I31: artifact refs in document order ---------------------------------------------


async def test_I31_a_dropped_fence_before_an_accepted_one_is_listed_first() -> None:
    cluster = Cluster(nodes=1)
    pod = await started_pod(cluster)
    oversized = b"x" * (300 << 10) + b"\n"
    log = (
        b"-----BEGIN BURNIN ARTIFACT outer.txt text/plain-----\n"
        + oversized
        + b"-----END BURNIN ARTIFACT-----\n"
        + b"-----BEGIN BURNIN ARTIFACT inner.txt text/plain-----\nhello\n"
        + b"-----END BURNIN ARTIFACT-----\nbw=12\n"
    )
    result = await finish(cluster, pod, log=log)
    assert result["phase"] == "Passed", result
    refs = result["artifacts"]
    # Accepted-first would list inner.txt before the dropped outer.txt printed above it.
    assert [(r["name"], "dropped" in r) for r in refs] == [
        ("outer.txt", True),
        ("inner.txt", False),
    ], refs


# --- I14: the operator records sim itself ----------------------------------------------


async def label_node(cluster: Cluster, label: str, value: str = "h100x8") -> None:
    await cluster.client.patch(NODES, "n0", {"metadata": {"labels": {label: value}}})


@pytest.mark.parametrize("label", evidence.SIM_NODE_LABELS)
async def test_I14_a_pod_on_a_simulated_node_is_sim_whatever_its_log_says(label: str) -> None:
    cluster = Cluster(nodes=1)
    pod = await started_pod(cluster)
    await label_node(cluster, label)
    log = b"provenance=sim\n" + CHATTER + b"provenance=silicon\nbw=12\n"
    result = await finish(cluster, pod, log=log)
    assert result["provenance"] == "sim", result
    assert result["attempts"][-1]["provenance"] == "sim"


async def test_I14_a_simulated_node_with_no_declaration_is_never_silicon() -> None:
    cluster = Cluster(nodes=1)
    pod = await started_pod(cluster)
    await label_node(cluster, "sim.glimmer.dev/simulated-gpu")
    result = await finish(cluster, pod, log=b"bw=12\n")
    assert result["provenance"] == "sim", result


async def test_I14_glimmer_sim_gpu_in_the_runner_env_is_sim() -> None:
    cluster = Cluster(nodes=1)
    runner = {
        "image": "example.com/custom:1",
        "command": ["sh", "-c", "echo"],
        "env": [{"name": "GLIMMER_SIM_GPU", "value": "h100x8"}],
    }
    pod = await started_pod(cluster, runner=runner)
    result = await finish(cluster, pod, log=b"provenance=silicon\nbw=12\n")
    assert result["provenance"] == "sim", result


async def test_I14_a_plain_node_leaves_the_runner_declaration_standing() -> None:
    cluster = Cluster(nodes=1)
    pod = await started_pod(cluster)
    result = await finish(cluster, pod, log=b"provenance=silicon\nbw=12\n")
    assert result["provenance"] == "silicon", result


# --- I17: ends the runner did not reach by itself --------------------------------------

PASSING = b"bw=12\nRESULT: ok\n"


async def test_I17_an_evicted_pod_whose_runner_exited_0_is_error() -> None:
    cluster = Cluster(nodes=1)
    pod = await started_pod(cluster)
    result = await finish(
        cluster, pod, log=PASSING, phase="Failed", reason="Evicted",
        message="The node was low on resource: memory.",
    )  # fmt: skip
    assert result["phase"] == "Error", result
    assert 'reason "Evicted"' in result["message"]
    assert "low on resource" in result["message"]
    assert result["metrics"] == {"bw": "12"}  # the evidence stays, the verdict does not


@pytest.mark.parametrize(
    ("reason", "phase"),
    [("TerminationByKubelet", "Failed"), ("EvictionByEvictionAPI", "Succeeded"),
     ("PreemptionByScheduler", "Succeeded"), ("DeletionByTaintManager", "Succeeded")],
)  # fmt: skip
async def test_I17_a_disruption_target_pod_is_error_even_when_succeeded(
    reason: str, phase: str
) -> None:
    cluster = Cluster(nodes=1)
    pod = await started_pod(cluster)
    stamp = cluster.clock.strftime("%Y-%m-%dT%H:%M:%SZ")
    condition = {"type": "DisruptionTarget", "status": "True", "reason": reason,
                 "message": "stopped", "lastTransitionTime": stamp}  # fmt: skip
    result = await finish(cluster, pod, log=PASSING, phase=phase, conditions=[condition])
    assert result["phase"] == "Error", result
    assert reason in result["message"]


async def test_I17_a_disruption_after_the_runner_finished_does_not_undo_its_verdict() -> None:
    cluster = Cluster(nodes=1)
    pod = await started_pod(cluster)
    later = (cluster.clock.replace(year=cluster.clock.year + 1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    condition = {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler",
                 "lastTransitionTime": later}  # fmt: skip
    result = await finish(cluster, pod, log=PASSING, conditions=[condition])
    assert result["phase"] == "Passed", result


@pytest.mark.parametrize(
    "reason", ["Terminated", "NodeShutdown", "Shutdown", "UnexpectedAdmission"]
)
async def test_I17_a_pod_the_kubelet_failed_is_error_whatever_the_exit_code(reason: str) -> None:
    cluster = Cluster(nodes=1)
    pod = await started_pod(cluster)
    result = await finish(cluster, pod, log=PASSING, phase="Failed", reason=reason)
    assert result["phase"] == "Error", result
    assert f'reason "{reason}"' in result["message"]


async def test_I17_an_oom_killed_runner_is_error_even_with_exit_0() -> None:
    cluster = Cluster(nodes=1)
    pod = await started_pod(cluster)
    await cluster.kubelet(pod, exit_code=0, reason="OOMKilled")
    cluster.client.set_pod_log(pod, namespace=NS, text=PASSING)
    await cluster.reconcile()
    result = (await cluster.run())["status"]["results"][0]
    assert result["phase"] == "Error", result
    assert "OOMKilled" in result["message"]


async def test_I17_a_pod_deleted_while_its_runner_ran_is_error() -> None:
    cluster = Cluster(nodes=1)
    pod = await started_pod(cluster)
    # The kubelet reports the runner's end while the pod is being deleted (grace period).
    await cluster.client.patch(PODS, pod, {"metadata": {"finalizers": ["test/hold"]}}, namespace=NS)
    await cluster.client.delete(PODS, pod, namespace=NS)
    result = await finish(cluster, pod, log=PASSING)
    assert result["phase"] == "Error", result
    assert 'reason "Deleted"' in result["message"]


async def test_I17_A14_a_deadline_still_replaces_the_runner_line() -> None:
    cluster = Cluster(nodes=1)
    pod = await started_pod(cluster)
    result = await finish(cluster, pod, log=PASSING, phase="Failed", reason="DeadlineExceeded")
    assert result["phase"] == "Error", result
    assert result["message"] == DEADLINE_MESSAGE


# --- I23 (checkpoint side): checkpointed metrics are evidence ---------------------------


async def test_I23_checkpointed_metrics_stay_on_the_in_flight_attempt_across_passes() -> None:
    cluster = Cluster(nodes=1)
    pod = await started_pod(cluster, checkpointIntervalSeconds=10)
    cluster.client.set_pod_log(pod, namespace=NS, text=b"miscompares=12\nbw=12\n")
    cluster.advance(11)
    await cluster.reconcile()
    # Later passes: one with nothing to read, one whose read is cut. Neither may lose them.
    cluster.client.set_pod_log(pod, namespace=NS, text=b"")
    cluster.advance(11)
    await cluster.reconcile()
    cluster.client.set_pod_log(pod, namespace=NS, text=b"bw=1\n" * 10, fail_after_bytes=7)
    cluster.advance(11)
    await cluster.reconcile()
    result = (await cluster.run())["status"]["results"][0]
    flight = result["attempts"][-1]
    assert flight["phase"] == "Running"
    assert flight["metrics"] == result["metrics"] == {"bw": "12", "miscompares": "12"}
    assert flight["lastCheckpointAt"] == result["lastCheckpointAt"]
