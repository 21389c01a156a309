"""Rules at the edges of a run: refusal, failFast, images, heat, cancel, TTL, deletion, E21."""

from __future__ import annotations

from collections.abc import Callable

from glimmer.controllers.kit import names
from glimmer.controllers.kit.names import RUNS
from glimmer.controllers.kit.reaper import StampReaper
from glimmer.controllers.run.delivery import Delivery, NoDelivery, Reason
from glimmer.engine import NODES, PODS, FakeClient
from glimmer.engine.fake import Request
from tests.unit.controllers.run.harness import NS, Cluster, custom_test


async def finish_all(cluster: Cluster, *, exit_code: int, log: str) -> None:
    for pod in cluster.live_pods():
        await cluster.kubelet(pod["metadata"]["name"], exit_code=exit_code, log=log)


async def test_E4_C5_a_malformed_threshold_refuses_the_run_at_once_without_cordon() -> None:
    cluster = Cluster(nodes=1)
    bad = [{"metric": "bw", "comparison": "GreaterThanOrEqual", "value": "fast"}]
    await cluster.setup(tests={"t": custom_test("echo", thresholds=bad)})
    await cluster.create_run()
    await cluster.reconcile()
    run = await cluster.run()
    assert run["status"]["phase"] == "Error"
    [refusal] = run["status"]["results"]
    assert (refusal["name"], refusal["kind"]) == ("resolve", "")
    assert not cluster.pods()
    assert not cluster.node("n0")["spec"].get("unschedulable")
    assert names.FINALIZER not in (run["metadata"].get("finalizers") or [])


async def test_E1_an_unreadable_pinned_plan_finalises_error_and_unloads() -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": custom_test("echo")})
    await cluster.create_run()
    await cluster.reconcile()
    await cluster.client.patch(
        RUNS,
        "r1",
        {"metadata": {"annotations": {names.PLAN_ANNOTATION: '{"version":2}'}}},
        namespace=NS,
    )
    await cluster.reconcile()
    run = await cluster.run()
    assert run["status"]["phase"] == "Error"
    assert any(r["name"] == "resolve" and r["kind"] == "" for r in run["status"]["results"])
    assert not cluster.live_pods()
    assert not cluster.node("n0")["spec"].get("unschedulable")


async def test_D7_fail_fast_stops_later_tests_once_a_required_result_failed() -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"a": custom_test("echo"), "b": custom_test("echo")})
    from glimmer.controllers.kit.names import PROFILES

    await cluster.client.patch(PROFILES, "prof", {"spec": {"failFast": True}}, namespace=NS)
    await cluster.create_run()
    await cluster.reconcile()
    await finish_all(cluster, exit_code=1, log="broken\n")
    await cluster.reconcile()
    run = await cluster.run()
    assert run["status"]["phase"] == "Failed"
    assert [r["name"] for r in run["status"]["results"]] == ["a"]  # b untouched: no result
    assert {p["metadata"]["labels"][names.TEST_LABEL] for p in cluster.pods()} == {"a"}


async def test_E14_an_execution_with_no_resolvable_image_is_error_and_places_no_cordon() -> None:
    cluster = Cluster(nodes=1)
    spec = {"kind": "custom", "scope": "Node", "runner": {"command": ["true"]}}
    await cluster.setup(tests={"t": spec})
    await cluster.create_run()
    await cluster.reconcile()
    run = await cluster.run()
    assert run["status"]["phase"] == "Error"
    assert "no runner image" in run["status"]["results"][0]["message"]
    assert not cluster.pods()
    assert names.CORDON_OWNER not in (cluster.node("n0")["metadata"].get("annotations") or {})


async def test_E11_a_sustained_load_kind_marks_heat_and_the_marker_goes_with_the_cordon() -> None:
    cluster = Cluster(nodes=1)
    spec = {
        "kind": "gpu-burn",
        "scope": "Node",
        "durationSeconds": 60,
        "runner": {"image": "example.com/burn:1"},
    }
    await cluster.setup(tests={"t": spec})
    await cluster.create_run()
    await cluster.reconcile()
    notes = cluster.node("n0")["metadata"]["annotations"]
    assert notes[names.HEAT_EXPECTED].startswith(f"{NS}/r1/")
    await finish_all(cluster, exit_code=0, log="ok=1\n")
    await cluster.reconcile()
    notes = cluster.node("n0")["metadata"].get("annotations") or {}
    assert names.HEAT_EXPECTED not in notes and names.CORDON_OWNER not in notes


async def test_E18_E25_graceful_cancel_is_one_way_drains_running_pods_keeps_verdicts() -> None:
    cluster = Cluster(nodes=2)
    await cluster.setup(tests={"t": custom_test("echo")})
    await cluster.create_run(maxConcurrentNodes=2)
    await cluster.reconcile()
    done, running = sorted(p["metadata"]["name"] for p in cluster.live_pods())
    await cluster.kubelet(done, exit_code=0, log="ok=1\n")
    await cluster.kubelet(running, exit_code=None)
    await cluster.client.patch(RUNS, "r1", {"spec": {"cancel": True}}, namespace=NS)
    await cluster.reconcile()
    run = await cluster.run()
    assert run["status"]["phase"] == "Running"
    assert run["metadata"]["annotations"][names.CANCELLING_ANNOTATION] == (
        "cancelled with no reason given"
    )
    # E25: the running pod was sent its SIGTERM (deleted with its grace), and the
    # status says so while it drains; its node stays held until it is gone.
    cancelling = {c["type"]: c for c in run["status"]["conditions"]}["Cancelling"]
    assert (cancelling["status"], cancelling["reason"]) == ("True", "Draining")
    assert cancelling["message"] == "draining 1 pod, grace 30s"
    assert running not in {p["metadata"]["name"] for p in cluster.pods()}
    await cluster.client.patch(RUNS, "r1", {"spec": {"cancel": False}}, namespace=NS)
    await cluster.reconcile()
    run = await cluster.run()
    assert run["status"]["phase"] == "Cancelled"  # clearing spec.cancel had no effect
    phases = sorted(r["phase"] for r in run["status"]["results"])
    assert phases == ["Cancelled", "Passed"]  # the finished measurement is kept


async def test_E16_a_started_pod_past_the_overdue_point_is_error_and_deleted_after_write() -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": custom_test("echo", durationSeconds=10)})
    await cluster.create_run()
    await cluster.reconcile()
    pod = cluster.live_pods()[0]["metadata"]["name"]
    await cluster.kubelet(pod, exit_code=None)
    await cluster.reconcile()
    cluster.advance(10 + 420 + 1)
    await cluster.reconcile()
    run = await cluster.run()
    assert run["status"]["phase"] == "Error"
    assert "overdue" in run["status"]["results"][0]["message"]
    assert not cluster.client.objects(PODS)


class OrderedDelivery(NoDelivery):
    """Notes, for each delivery, how many apiserver requests had been made before it."""

    def __init__(self, client: FakeClient) -> None:
        super().__init__()
        self.client = client
        self.after: list[int] = []

    async def deliver(self, delivery: Delivery) -> bool:
        self.after.append(len(self.client.requests))
        return await super().deliver(delivery)


def _index(requests: list[Request], wanted: Callable[[Request], bool]) -> int:
    return next(i for i, r in enumerate(requests) if wanted(r))


async def test_L4_running_is_delivered_before_its_status_write_terminal_after_release() -> None:
    cluster = Cluster(nodes=1)
    ordered = OrderedDelivery(cluster.client)
    cluster.delivered = ordered
    cluster.reconciler = cluster.new_reconciler()
    await cluster.setup(tests={"t": custom_test("echo")})
    await cluster.create_run()
    await cluster.reconcile()
    [running] = list(cluster.delivered.sent)
    assert (running.reason, running.event_key) == (Reason.RUN_PHASE_CHANGED, "Running")
    assert (running.run.get("status") or {}).get("phase") == "Running"
    requests = cluster.client.requests
    running_write = _index(
        requests,
        lambda r: r.verb == "replace" and r.resource == str(RUNS) and r.subresource == "status"
        and (r.body.get("status") or {}).get("phase") == "Running",
    )  # fmt: skip
    # Delivered with no request after it yet made: the status write comes after.
    assert ordered.after[0] <= running_write
    await finish_all(cluster, exit_code=0, log="ok=1\n")
    await cluster.reconcile()
    reasons = [(d.reason, d.event_key) for d in cluster.delivered.sent]
    assert reasons[1:] == [(Reason.TEST_COMPLETED, "t/n0"), (Reason.RUN_PHASE_CHANGED, "Passed")]
    release = _index(
        requests,
        lambda r: r.verb == "patch" and r.resource == "nodes"
        and ((r.body.get("metadata") or {}).get("annotations") or {}).get(names.CORDON_OWNER, "")
        is None,
    )  # fmt: skip
    terminal_write = _index(
        requests,
        lambda r: r.verb == "replace" and r.resource == str(RUNS) and r.subresource == "status"
        and (r.body.get("status") or {}).get("phase") == "Passed",
    )  # fmt: skip
    last_node_request = max(i for i, r in enumerate(requests) if r.resource == "nodes")
    # The terminal envelope goes out only once the verdict is durable and the unload (every
    # node read and release of it) is done.
    assert ordered.after[-1] > max(terminal_write, release, last_node_request)


async def test_E19_ttl_deletes_the_finished_run_after_its_time() -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": custom_test("echo")})
    await cluster.create_run(ttlSecondsAfterFinished=60)
    await cluster.reconcile()
    await finish_all(cluster, exit_code=0, log="ok=1\n")
    result = await cluster.reconcile()
    assert result.requeue_after is not None and 0 < result.requeue_after <= 60
    cluster.advance(61)
    await cluster.reconcile()
    assert not cluster.client.objects(RUNS)


async def test_E20_deleting_a_running_run_unloads_and_restores_its_nodes() -> None:
    cluster = Cluster(nodes=2)
    await cluster.setup(tests={"t": custom_test("echo")}, unschedulable=("n1",))
    await cluster.create_run(maxConcurrentNodes=2)
    await cluster.reconcile()
    await cluster.client.delete(RUNS, "r1", namespace=NS)
    await cluster.reconcile()
    assert not cluster.client.objects(RUNS)
    assert not cluster.live_pods()
    assert not cluster.node("n0")["spec"].get("unschedulable")
    assert cluster.node("n1")["spec"].get("unschedulable") is True


async def test_E21_the_reaper_restores_a_node_stamped_by_a_vanished_run_only() -> None:
    cluster = Cluster(nodes=2)
    await cluster.setup(tests={"t": custom_test("sleep 1")})
    live = await cluster.create_run()
    await cluster.reconcile()
    stamp = f"{NS}/ghost/uid-gone"
    await cluster.client.patch(
        NODES,
        "n1",
        {
            "metadata": {
                "annotations": {names.CORDON_OWNER: stamp, names.PRIOR_UNSCHEDULABLE: "false"}
            },
            "spec": {"unschedulable": True},
        },
    )
    reaper = StampReaper(client=cluster.client)
    await reaper.reconcile("n1")
    assert not cluster.node("n1")["spec"].get("unschedulable")
    assert names.CORDON_OWNER not in (cluster.node("n1")["metadata"].get("annotations") or {})
    held = await reaper.reconcile("n0")  # stamped by a live run: left, rechecked later
    assert held.requeue_after == 300
    owner = cluster.node("n0")["metadata"]["annotations"][names.CORDON_OWNER]
    assert owner.endswith(live["metadata"]["uid"])


async def test_E10_the_stamp_goes_with_the_cordon_in_one_write_before_the_pod() -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": custom_test("echo")})
    run = await cluster.create_run()
    cluster.client.requests.clear()
    await cluster.reconcile()
    writes = [
        r
        for r in cluster.client.requests
        if r.resource in ("nodes", "pods") and r.verb in ("patch", "create")
    ]
    # The stamp (who holds the node, and what it was before) and the cordon in one
    # atomic write, so no observer ever sees a cordon without its owner (E10) ...
    assert len(writes) >= 2, writes
    cordon, create = writes[:2]
    assert (cordon.verb, cordon.resource) == ("patch", "nodes")
    stamp_notes = cordon.body["metadata"]["annotations"]
    assert stamp_notes[names.CORDON_OWNER].endswith(run["metadata"]["uid"])
    assert stamp_notes[names.PRIOR_UNSCHEDULABLE] == "false"
    assert cordon.body["spec"] == {"unschedulable": True}
    # ... and only then the pod.
    assert (create.verb, create.resource) == ("create", "pods")
    assert create.body["spec"]["nodeSelector"] == {names.HOSTNAME_LABEL: "n0"}


async def test_E6_variants_are_expanded_into_cells_and_reported_by_plan_expanded() -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": custom_test("echo")})
    from glimmer.controllers.kit.names import PROFILES

    variants = [{"name": "small", "axes": {"size": "s"}}, {"name": "large", "axes": {"size": "l"}}]
    await cluster.client.patch(
        PROFILES,
        "prof",
        {"spec": {"tests": [{"testRef": "t", "variants": variants}]}},
        namespace=NS,
    )
    await cluster.create_run()
    await cluster.reconcile()
    run = await cluster.run()
    conditions = {c["type"]: c for c in run["status"]["conditions"]}
    assert conditions["PlanExpanded"]["reason"] == "VariantsExpanded"
    assert conditions["ThresholdsSound"]["reason"] == "Reviewed"
    await finish_all(cluster, exit_code=0, log="ok=1\n")
    await cluster.reconcile()
    await finish_all(cluster, exit_code=0, log="ok=1\n")
    await cluster.reconcile()
    run = await cluster.run()
    assert [(r["name"], r["variantAxes"]) for r in run["status"]["results"]] == [
        ("t-small", {"size": "s"}),
        ("t-large", {"size": "l"}),
    ]
    assert run["status"]["phase"] == "Passed"


async def test_E2_a_missing_test_ref_gets_the_grace_then_names_the_test_in_the_refusal() -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"present": custom_test("echo")})
    from glimmer.controllers.kit.names import PROFILES

    entries = [{"testRef": "present"}, {"testRef": "absent"}]
    await cluster.client.patch(PROFILES, "prof", {"spec": {"tests": entries}}, namespace=NS)
    await cluster.create_run()
    assert (await cluster.reconcile()).requeue_after == 15
    assert not cluster.pods()
    cluster.advance(121)
    await cluster.reconcile()
    run = await cluster.run()
    assert run["status"]["phase"] == "Error"
    assert "absent" in run["status"]["results"][0]["message"]
    assert not cluster.pods()


async def test_E10_a_pass_cordons_its_launches_together_and_records_them_before_any_pod() -> None:
    # The cordons of one pass's Node launches go out together, at the commit;
    # each node is stamped and cordoned in one write, and every one is in a status write
    # before the first pod of the pass exists.
    cluster = Cluster(nodes=6)
    await cluster.setup(tests={"t": custom_test("echo")})
    await cluster.create_run(maxConcurrentNodes=6)
    cluster.client.requests.clear()
    await cluster.reconcile()
    requests = cluster.client.requests
    creates = [i for i, r in enumerate(requests) if (r.verb, r.resource) == ("create", "pods")]
    assert len(creates) == 6, [(r.verb, r.resource) for r in requests]
    first_pod = creates[0]
    for node in (f"n{i}" for i in range(6)):
        patches = [
            (i, r.body) for i, r in enumerate(requests)
            if (r.verb, r.resource, r.name) == ("patch", "nodes", node)
        ]  # fmt: skip
        assert len(patches) >= 1, (node, patches)
        cordon_at, cordon = patches[0]
        assert names.CORDON_OWNER in cordon["metadata"]["annotations"], node
        assert cordon["spec"] == {"unschedulable": True}, node
        assert cordon_at < first_pod, node
    every = [f"n{i}" for i in range(6)]

    def records_all(r: Request) -> bool:
        status = (r.body or {}).get("status") or {}
        return (
            r.resource.startswith("burninruns")
            and sorted(status.get("cordonedNodes") or []) == every
        )

    recorded = [i for i, r in enumerate(requests) if r.verb != "get" and records_all(r)]
    assert recorded and recorded[0] < first_pod, "the cordons were not recorded before the pods"
