"""Rules E1-E19 and H on the fake apiserver, with a hand-driven kubelet."""

from __future__ import annotations

from glimmer.controllers.kit import names as kit_names
from glimmer.engine import PODS
from tests.unit.controllers.run.harness import NS, Cluster, custom_test

BW_GATE = [{"metric": "bw", "comparison": "GreaterThanOrEqual", "value": "10"}]


async def finish_all(cluster: Cluster, *, exit_code: int, log: str) -> None:
    for pod in cluster.live_pods():
        await cluster.kubelet(pod["metadata"]["name"], exit_code=exit_code, log=log)


async def test_E10_E12_E19_a_passing_run_cordons_nodes_while_loaded_and_restores_them() -> None:
    cluster = Cluster(nodes=3)
    await cluster.setup(tests={"t": custom_test("echo", thresholds=BW_GATE)}, unschedulable=("n2",))
    await cluster.create_run(maxConcurrentNodes=3)
    await cluster.reconcile()
    run = await cluster.run()
    assert run["status"]["phase"] == "Running"
    assert kit_names.FINALIZER in run["metadata"]["finalizers"]
    assert run["status"]["priorUnschedulable"] == {"n0": False, "n1": False, "n2": True}
    assert len(cluster.live_pods()) == 3
    assert all(cluster.node(n)["spec"].get("unschedulable") for n in ("n0", "n1", "n2"))
    assert run["status"]["cordonedNodes"] == ["n0", "n1", "n2"]
    await finish_all(cluster, exit_code=0, log="bw=12\n")
    await cluster.reconcile()
    run = await cluster.run()
    assert run["status"]["phase"] == "Passed", run["status"]
    assert run["status"]["passed"] == 3
    assert kit_names.FINALIZER not in run["metadata"].get("finalizers", [])
    assert not cluster.node("n0")["spec"].get("unschedulable")
    assert cluster.node("n2")["spec"].get("unschedulable") is True  # admin's cordon kept
    assert kit_names.CORDON_OWNER not in (cluster.node("n2")["metadata"].get("annotations") or {})


async def test_D1_D6_a_gate_shortfall_is_failed_exit_two_unmarked_is_error_failed_wins() -> None:
    cluster = Cluster(nodes=2)
    await cluster.setup(tests={"t": custom_test("echo", thresholds=BW_GATE)})
    await cluster.create_run(maxConcurrentNodes=2)
    await cluster.reconcile()
    pods = sorted(p["metadata"]["name"] for p in cluster.live_pods())
    by_node = {
        p["spec"]["nodeSelector"]["kubernetes.io/hostname"]: p["metadata"]["name"]
        for p in cluster.pods()
    }
    await cluster.kubelet(by_node["n0"], exit_code=0, log="bw=3\n")
    await cluster.kubelet(by_node["n1"], exit_code=2, log="something odd\n")
    assert len(pods) == 2
    await cluster.reconcile()
    run = await cluster.run()
    phases = {r["nodes"][0]: r["phase"] for r in run["status"]["results"]}
    assert phases == {"n0": "Failed", "n1": "Error"}
    assert run["status"]["phase"] == "Failed"  # Failed beats Error (D6)
    assert (run["status"]["failed"], run["status"]["errored"]) == (1, 1)


async def test_D3_an_error_is_retried_under_the_live_budget_with_its_trigger_recorded() -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": custom_test("echo")})
    await cluster.create_run(retryOnErrorLimit=1)
    await cluster.reconcile()
    first = cluster.live_pods()[0]["metadata"]["name"]
    await cluster.kubelet(first, exit_code=3, log="no device\n")
    await cluster.reconcile()
    second = [p["metadata"]["name"] for p in cluster.live_pods()]
    assert len(second) == 1 and second[0] != first
    await cluster.kubelet(second[0], exit_code=0, log="ok=1\n")
    await cluster.reconcile()
    run = await cluster.run()
    result = run["status"]["results"][0]
    assert result["phase"] == "Passed"
    assert [a["trigger"] for a in result["attempts"]] == ["Initial", "ErrorRetry"]
    assert [a["phase"] for a in result["attempts"]] == ["Error", "Passed"]
    assert result["errorRetries"] == 1


async def test_E16_H_an_unpullable_image_is_error_and_its_pod_deleted_after_the_write() -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": custom_test("echo")})
    await cluster.create_run()
    await cluster.reconcile()
    pod = cluster.live_pods()[0]["metadata"]["name"]
    await cluster.kubelet(pod, exit_code=None, waiting="ErrImagePull")
    cluster.advance(10)
    cluster.client.calls.clear()
    await cluster.reconcile()
    run = await cluster.run()
    assert run["status"]["phase"] == "Error"
    assert "ErrImagePull" in run["status"]["results"][0]["message"]
    calls = [(verb, res, name) for verb, res, _, name in cluster.client.calls]
    status_write = calls.index(("replace", "burninruns.burnin.glimmer.ai", "r1"))
    pod_delete = calls.index(("delete", "pods", pod))
    assert status_write < pod_delete


async def test_H_a_pod_deleted_from_outside_mid_run_is_an_error_not_a_pass() -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": custom_test("echo")})
    await cluster.create_run()
    await cluster.reconcile()
    pod = cluster.live_pods()[0]["metadata"]["name"]
    await cluster.kubelet(pod, exit_code=None)
    await cluster.reconcile()
    await cluster.client.delete(PODS, pod, namespace=NS)
    await cluster.reconcile()
    run = await cluster.run()
    assert run["status"]["phase"] == "Error"
    assert "deleted before it terminated" in run["status"]["results"][0]["message"]


async def test_E1_E13_a_restarted_reconciler_adopts_its_pods_and_creates_none_twice() -> None:
    cluster = Cluster(nodes=2)
    await cluster.setup(tests={"t": custom_test("echo")})
    await cluster.create_run(maxConcurrentNodes=2)
    await cluster.reconcile()
    names = sorted(p["metadata"]["name"] for p in cluster.pods())
    cluster.reconciler = cluster.new_reconciler()
    await cluster.reconcile()
    assert sorted(p["metadata"]["name"] for p in cluster.pods()) == names
    await finish_all(cluster, exit_code=0, log="ok=1\n")
    cluster.reconciler = cluster.new_reconciler()
    await cluster.reconcile()
    assert (await cluster.run())["status"]["phase"] == "Passed"
    creates = [c for c in cluster.client.calls if c[0] == "create" and c[1] == "pods"]
    assert len(creates) == len({c[3] for c in creates})


async def test_E9_the_interlock_never_loads_more_nodes_than_max_concurrent_nodes() -> None:
    cluster = Cluster(nodes=3)
    await cluster.setup(tests={"t": custom_test("echo")})
    await cluster.create_run(maxConcurrentNodes=1)
    await cluster.reconcile()
    assert len(cluster.live_pods()) == 1
    await finish_all(cluster, exit_code=0, log="ok=1\n")
    await cluster.reconcile()
    assert len(cluster.live_pods()) == 1
    run = await cluster.run()
    assert len(run["status"]["cordonedNodes"]) == 1  # the wave's footprint, not the targets


async def test_E8_test_two_starts_nowhere_until_test_one_settled_everywhere() -> None:
    cluster = Cluster(nodes=2)
    await cluster.setup(tests={"a": custom_test("echo"), "b": custom_test("echo")})
    await cluster.create_run(maxConcurrentNodes=2)
    await cluster.reconcile()
    first = {p["metadata"]["labels"][kit_names.TEST_LABEL] for p in cluster.pods()}
    assert first == {"a"}
    await cluster.kubelet(cluster.live_pods()[0]["metadata"]["name"], exit_code=0, log="ok=1\n")
    await cluster.reconcile()
    assert {p["metadata"]["labels"][kit_names.TEST_LABEL] for p in cluster.pods()} == {"a"}


async def test_E2_a_missing_profile_waits_out_the_apply_race_then_is_a_resolve_error() -> None:
    cluster = Cluster(nodes=1)
    await cluster.create_run()
    result = await cluster.reconcile()
    assert result.requeue_after == 15
    waiting = (await cluster.run())["status"]
    assert "phase" not in waiting  # not admitted yet, and said so (E23)
    assert [c["reason"] for c in waiting["conditions"]] == ["ProfileNotFound"]
    cluster.advance(121)
    await cluster.reconcile()
    run = await cluster.run()
    assert run["status"]["phase"] == "Error"
    [synthetic] = run["status"]["results"]
    assert synthetic["name"] == "resolve" and synthetic["kind"] == ""
    assert "scope" not in synthetic and "nodes" not in synthetic
    assert run["status"]["errored"] == 1


async def test_E3_a_second_run_on_busy_targets_is_refused_unless_forced() -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": custom_test("echo")})
    await cluster.create_run("first")
    await cluster.reconcile("first")
    await cluster.add_profile({"t": custom_test("echo")}, namespace="other")
    await cluster.create_run("second", namespace="other")
    await cluster.reconcile("second", namespace="other")
    second = await cluster.run("second", namespace="other")
    assert second["status"]["phase"] == "Error"
    assert second["status"]["results"][0]["name"] == "admission"
    admitted = {c["type"]: c for c in second["status"]["conditions"]}["Admitted"]
    assert (admitted["status"], admitted["reason"]) == ("False", "TargetsBusy")
    await cluster.create_run("third", force=True)
    await cluster.reconcile("third")
    third = await cluster.run("third")
    admitted = {c["type"]: c for c in third["status"]["conditions"]}["Admitted"]
    assert (admitted["status"], admitted["reason"]) == ("True", "AdmittedByForce")


async def test_E18_immediate_cancel_leaves_open_units_cancelled_and_unloads() -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": custom_test("echo")})
    await cluster.create_run(cancel=False)
    await cluster.reconcile()
    from glimmer.controllers.kit.names import RUNS

    await cluster.client.patch(
        RUNS,
        "r1",
        {"spec": {"cancel": True, "cancelPolicy": "Immediate", "cancelReason": "maint"}},
        namespace=NS,
    )
    await cluster.reconcile()
    run = await cluster.run()
    assert run["status"]["phase"] == "Cancelled"
    assert run["metadata"]["annotations"][kit_names.CANCELLING_ANNOTATION] == "maint"
    assert run["status"]["results"][0]["phase"] == "Cancelled"
    assert not cluster.live_pods()
    assert not cluster.node("n0")["spec"].get("unschedulable")


async def test_E16_the_run_deadline_turns_unreached_work_into_error() -> None:
    cluster = Cluster(nodes=2)
    await cluster.setup(tests={"t": custom_test("echo")})
    await cluster.create_run(deadlineSeconds=60, maxConcurrentNodes=1)
    await cluster.reconcile()
    cluster.advance(61)
    await cluster.reconcile()
    run = await cluster.run()
    assert run["status"]["phase"] == "Error"
    assert {r["phase"] for r in run["status"]["results"]} == {"Error"}
    assert len(run["status"]["results"]) == 2
    assert not cluster.live_pods()


async def test_H1_a_checkpoint_refreshes_metrics_without_changing_the_phase() -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(
        tests={"t": custom_test("echo", thresholds=BW_GATE, checkpointIntervalSeconds=10)}
    )
    await cluster.create_run()
    await cluster.reconcile()
    pod = cluster.live_pods()[0]["metadata"]["name"]
    await cluster.kubelet(pod, exit_code=None)
    await cluster.reconcile()
    cluster.client.set_pod_log(pod, namespace=NS, text="bw=1\n")  # below the gate: no Fail
    cluster.advance(11)
    await cluster.reconcile()
    result = (await cluster.run())["status"]["results"][0]
    assert result["phase"] == "Running"
    assert result["metrics"] == {"bw": "1"}
    assert result["lastCheckpointAt"]
    assert result["attempts"][-1]["metrics"] == {"bw": "1"}


async def test_E17_suspend_launches_nothing_but_keeps_harvesting_and_hands_back_nodes() -> None:
    cluster = Cluster(nodes=2)
    await cluster.setup(tests={"t": custom_test("echo")})
    await cluster.create_run(maxConcurrentNodes=1)
    await cluster.reconcile()
    from glimmer.controllers.kit.names import RUNS

    await cluster.client.patch(RUNS, "r1", {"spec": {"suspend": True}}, namespace=NS)
    await finish_all(cluster, exit_code=0, log="ok=1\n")
    await cluster.reconcile()
    run = await cluster.run()
    assert run["status"]["phase"] == "Running"
    assert [r["phase"] for r in run["status"]["results"]] == ["Passed"]
    assert not cluster.live_pods()
    assert not run["status"].get("cordonedNodes")  # idle nodes handed back
    await cluster.client.patch(RUNS, "r1", {"spec": {"suspend": False}}, namespace=NS)
    await cluster.reconcile()
    assert len(cluster.live_pods()) == 1
