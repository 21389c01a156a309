"""Verdict-integrity rules in the run sweep, on the fake apiserver: own pods only (I18),
refused pods (I20), the status size budget (I21), structural selectors (I22), evidence
kept on Error (I23) and served namespaces (I29)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from glimmer.controllers.kit import checkpoint, names
from glimmer.controllers.kit.names import RUNS
from glimmer.controllers.run.pods import PodRequest, RunRef, build_pod, foreign_reason
from glimmer.controllers.run.reconciler import RunOptions, RunReconciler
from glimmer.engine import NODES, PODS, ApiError
from glimmer.plan import PinnedPlan, pod_name
from glimmer.verdict.codec import result_from_json
from tests.unit.controllers.run.harness import NS, Cluster, custom_test

BW_GATE = [{"metric": "bw", "comparison": "GreaterThanOrEqual", "value": "10"}]


def predicted_name(run: dict[str, Any], *, attempt: int = 1, node: str = "n0") -> str:
    return pod_name(
        run_name=run["metadata"]["name"],
        run_uid=run["metadata"]["uid"],
        test_index=0,
        node=node,
        attempt=attempt,
    )


def our_manifest(run: dict[str, Any], *, attempt: int = 1, node: str = "n0") -> dict[str, Any]:
    plan = PinnedPlan.from_annotation(run["metadata"]["annotations"][names.PLAN_ANNOTATION])
    meta = run["metadata"]
    return build_pod(
        run=RunRef(meta["namespace"], meta["name"], meta["uid"]),
        request=PodRequest(
            test_index=0,
            test=plan.tests[0],
            node=node,
            attempt=attempt,
            image=plan.tests[0].spec["runner"]["image"],
        ),
    )


def result_of(run: dict[str, Any]) -> dict[str, Any]:
    [result] = run["status"]["results"]
    return result


def logs_read(cluster: Cluster, pod: str) -> bool:
    return any(verb == "log" and name == pod for verb, _, _, name in cluster.client.calls)


def assert_released(cluster: Cluster, node: str = "n0") -> None:
    current = cluster.node(node)
    assert not current["spec"].get("unschedulable")
    assert names.CORDON_OWNER not in (current["metadata"].get("annotations") or {})


async def pinned_suspended_run(cluster: Cluster, **spec: Any) -> dict[str, Any]:
    """A run that is pinned and Running but has launched nothing (suspended)."""
    await cluster.create_run(suspend=True, **spec)
    await cluster.reconcile()
    return await cluster.run()


async def resume(cluster: Cluster) -> None:
    await cluster.client.patch(RUNS, "r1", {"spec": {"suspend": False}}, namespace=NS)


# --- I18 adopt only our own pods ---------------------------------------------------


async def test_I18_a_pod_precreated_on_another_node_under_our_name_is_foreign_never_read() -> None:
    cluster = Cluster(nodes=2)
    await cluster.setup(tests={"t": custom_test("echo", thresholds=BW_GATE)})
    run = await pinned_suspended_run(cluster, target={"nodeNames": ["n0"]})
    forged = our_manifest(run)
    forged["spec"]["nodeSelector"] = {names.HOSTNAME_LABEL: "n1"}  # not the target
    name = forged["metadata"]["name"]
    await cluster.client.create(PODS, forged, namespace=NS)
    await cluster.kubelet(name, exit_code=0, log="bw=12\n")  # a passing log
    await resume(cluster)
    await cluster.reconcile()
    run = await cluster.run()
    result = result_of(run)
    assert run["status"]["phase"] == "Error", result
    assert result["phase"] == "Error"
    assert result["message"].startswith(f"foreign pod {name}")
    assert "spec.nodeSelector" in result["message"]
    assert "its output was not read" in result["message"]
    assert result.get("metrics") is None
    assert run["status"]["certifiesSilicon"] is False
    assert not logs_read(cluster, name)
    assert [p["metadata"]["name"] for p in cluster.pods()] == [name]  # left where it is
    assert_released(cluster)


async def test_I18_after_a_foreign_pod_the_retry_gets_a_name_that_does_not_collide() -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": custom_test("echo", thresholds=BW_GATE)})
    run = await pinned_suspended_run(cluster, retryOnErrorLimit=1)
    forged = our_manifest(run)
    forged["spec"]["containers"][0]["command"] = ["sh", "-c", "echo bw=99"]
    await cluster.client.create(PODS, forged, namespace=NS)
    await resume(cluster)
    await cluster.reconcile()
    live = [p["metadata"]["name"] for p in cluster.live_pods()]
    ours = predicted_name(run, attempt=2)
    assert ours in live
    await cluster.kubelet(ours, exit_code=0, log="bw=12\n")
    await cluster.reconcile()
    result = result_of(await cluster.run())
    assert result["phase"] == "Passed"
    assert [(a["phase"], a.get("podName")) for a in result["attempts"]] == [
        ("Error", forged["metadata"]["name"]),
        ("Passed", ours),
    ]
    assert "spec.containers[0].command" in result["attempts"][0]["message"]


async def test_I18_an_unowned_pod_under_our_name_is_foreign_not_a_create_loop() -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": custom_test("echo")})
    run = await pinned_suspended_run(cluster)
    forged = our_manifest(run)
    forged["metadata"].pop("ownerReferences")  # not listed as ours: our create collides
    await cluster.client.create(PODS, forged, namespace=NS)
    await resume(cluster)
    await cluster.reconcile()
    run = await cluster.run()
    assert run["status"]["phase"] == "Error"  # settled in the same pass, after the walk
    assert "does not name this run as its controller" in result_of(run)["message"]
    assert_released(cluster)


async def test_I18_a_started_pod_replaced_under_its_name_is_foreign_by_uid() -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": custom_test("echo")})
    await cluster.create_run()
    await cluster.reconcile()
    [pod] = cluster.live_pods()
    name = pod["metadata"]["name"]
    await cluster.kubelet(name, exit_code=None)
    await cluster.reconcile()
    flight = result_of(await cluster.run())["attempts"][-1]
    assert flight["podUID"] == pod["metadata"]["uid"]
    # Someone deletes it and re-creates an exact copy: same name, same spec, other UID.
    await cluster.client.delete(PODS, name, namespace=NS)
    twin = copy.deepcopy(pod)
    for key in ("uid", "resourceVersion", "creationTimestamp"):
        twin["metadata"].pop(key, None)
    await cluster.client.create(PODS, twin, namespace=NS)
    await cluster.kubelet(name, exit_code=0, log="ok=1\n")
    await cluster.reconcile()
    result = result_of(await cluster.run())
    assert result["phase"] == "Error"
    assert "is not " + flight["podUID"] in result["message"]
    assert not logs_read(cluster, name)


def _defaulted(manifest: dict[str, Any]) -> dict[str, Any]:
    """``manifest`` as a real apiserver hands it back (defaults, nodeName; no token
    volume, as the pod asks for none: tests/integration/run/
    test_adoption_round_trip_property.py checks this against the real apiserver)."""
    pod = copy.deepcopy(manifest)
    spec = pod["spec"]
    spec.setdefault("serviceAccountName", "default")
    spec.update(
        dnsPolicy="ClusterFirst",
        schedulerName="default-scheduler",
        terminationGracePeriodSeconds=30,
        enableServiceLinks=True,
        serviceAccount=spec["serviceAccountName"],
        priority=0,
        preemptionPolicy="PreemptLowerPriority",
        securityContext={},
        nodeName=spec["nodeSelector"][names.HOSTNAME_LABEL],
    )
    spec["tolerations"].append(
        {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"}
    )
    container = spec["containers"][0]
    container.update(
        terminationMessagePath="/dev/termination-log",
        terminationMessagePolicy="File",
        imagePullPolicy="IfNotPresent",
        resources={},
    )
    pod["metadata"]["uid"] = "pod-uid"
    return pod


def _manifest(**spec: Any) -> dict[str, Any]:
    from glimmer.plan import PlannedTest

    test = PlannedTest(name="t", required=True, spec={**custom_test("echo"), **spec})
    return build_pod(
        run=RunRef("team", "r1", "run-uid"),
        request=PodRequest(test_index=0, test=test, node="n0", attempt=1, image="img:1"),
    )


HOST = names.HOSTNAME_LABEL
SIDECAR = {"name": "side", "image": "y"}
HOST_ROOT = {"name": "h", "hostPath": {"path": "/"}}


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda p: p["spec"].update(nodeName="n9"), "spec.nodeName"),
        (lambda p: p["spec"].update(nodeSelector={HOST: "n9"}), "spec.nodeSelector"),
        (lambda p: p["spec"].update(initContainers=[SIDECAR]), "spec.initContainers"),
        (lambda p: p["spec"]["containers"].append(SIDECAR), "spec.containers"),
        (lambda p: p["spec"]["containers"][0].update(image="evil:1"), "spec.containers[0].image"),
        (lambda p: p["spec"]["containers"][0].update(args=["x"]), "spec.containers[0].args"),
        (lambda p: p["spec"]["containers"][0]["env"].pop(), "spec.containers[0].env"),
        (lambda p: p["spec"].setdefault("volumes", []).append(HOST_ROOT), "spec.volumes"),
        (lambda p: p["spec"].update(securityContext={"runAsUser": 0}), "spec.securityContext"),
        (lambda p: p["spec"].update(hostPID=True), "spec.hostPID"),
        (lambda p: p["spec"].update(activeDeadlineSeconds=999999), "spec.activeDeadlineSeconds"),
        (lambda p: p["metadata"]["labels"].update({names.ATTEMPT_LABEL: "9"}), "metadata.labels"),
        (lambda p: p["metadata"].update(ownerReferences=[]), "metadata.ownerReferences"),
    ],
)  # fmt: skip
def test_I18_a_pod_that_differs_from_what_the_builder_makes_is_foreign(
    change: Any, field: str
) -> None:
    ours = _manifest()
    found = _defaulted(ours)
    assert foreign_reason(found, expected=ours) is None  # what the apiserver adds is fine
    change(found)
    problem = foreign_reason(found, expected=ours)
    assert problem is not None and problem.startswith(field), problem


def test_I18_canonicalised_resource_quantities_still_match() -> None:
    ours = _manifest(resources={"limits": {"memory": "1024Mi", "cpu": "0.5"}})
    found = _defaulted(ours)
    found["spec"]["containers"][0]["resources"] = {
        "limits": {"memory": "1Gi", "cpu": "500m"},
        "requests": {"memory": "1Gi", "cpu": "500m"},
    }
    assert foreign_reason(found, expected=ours) is None
    found["spec"]["containers"][0]["resources"]["limits"]["memory"] = "512Mi"
    assert foreign_reason(found, expected=ours) == "spec.containers[0].resources.limits.memory"


# --- I20 a refused pod is an Error attempt, its cordon recorded first and released ---


def refuse_pods(cluster: Cluster, *, times: int = 100, node: str | None = None) -> list[int]:
    """Make the next ``times`` pod creates (for ``node``, or any) fail as the apiserver
    refuses a missing PriorityClass; returns a counter of refusals."""
    original = cluster.client.create
    refused: list[int] = []

    def targeted(body: Any) -> bool:
        return node is None or body["spec"]["nodeSelector"][names.HOSTNAME_LABEL] == node

    async def create(resource: Any, body: Any, *, namespace: str | None = None) -> Any:
        if resource == PODS and len(refused) < times and targeted(body):
            refused.append(1)
            raise ApiError(
                status=403,
                reason="Forbidden",
                body={
                    "kind": "Status",
                    "reason": "Forbidden",
                    "code": 403,
                    "message": f'pods "{body["metadata"]["name"]}" is forbidden: no '
                    "PriorityClass with name gpu-burn was found",
                },
            )
        return await original(resource, body, namespace=namespace)

    cluster.client.create = create  # type: ignore[method-assign]  # a fault-injecting seam
    return refused


async def test_I20_a_refused_pod_is_an_error_with_the_apiservers_message_and_released() -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": custom_test("echo")})
    refuse_pods(cluster)
    await cluster.create_run()
    await cluster.reconcile()
    run = await cluster.run()
    result = result_of(run)
    assert run["status"]["phase"] == "Error"
    assert "the apiserver refused runner pod" in result["message"]
    assert "403 Forbidden" in result["message"]
    assert "no PriorityClass with name gpu-burn" in result["message"]
    assert "startedAt" not in result["attempts"][0]
    assert not cluster.pods()
    assert not run["status"].get("cordonedNodes")
    assert_released(cluster)


async def test_I20_a_refused_pods_node_is_released_while_the_run_goes_on() -> None:
    cluster = Cluster(nodes=2)
    await cluster.setup(tests={"t": custom_test("echo")})
    refuse_pods(cluster, node="n0")
    await cluster.create_run(maxConcurrentNodes=2)
    await cluster.reconcile()
    run = await cluster.run()
    assert run["status"]["phase"] == "Running"
    phases = {r["nodes"][0]: r["phase"] for r in run["status"]["results"]}
    assert phases == {"n0": "Error"}  # n1's pod is created, not started: no result yet
    assert run["status"]["cordonedNodes"] == ["n1"]
    assert_released(cluster, "n0")
    assert cluster.node("n1")["spec"].get("unschedulable") is True


async def test_I20_a_refused_pod_is_retried_under_the_error_budget() -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": custom_test("echo")})
    refused = refuse_pods(cluster, times=1)
    await cluster.create_run(retryOnErrorLimit=1)
    await cluster.reconcile()
    run = await cluster.run()
    assert result_of(run)["phase"] == "Running"  # open: the budget allows a retry
    assert run["status"]["cordonedNodes"] == ["n0"]  # held between attempts (E8)
    await cluster.reconcile()
    [pod] = cluster.live_pods()
    assert pod["metadata"]["name"] == predicted_name(run, attempt=2)
    await cluster.kubelet(pod["metadata"]["name"], exit_code=0, log="ok=1\n")
    await cluster.reconcile()
    result = result_of(await cluster.run())
    assert result["phase"] == "Passed"
    assert [a["trigger"] for a in result["attempts"]] == ["Initial", "ErrorRetry"]
    assert refused == [1]


async def test_I20_the_cordon_is_in_status_before_the_pod_is_created() -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": custom_test("echo")})
    await pinned_suspended_run(cluster)
    await resume(cluster)
    seen = len(cluster.client.requests)
    await cluster.reconcile()
    # What this pass sent, in order (FakeClient records every request with its body).
    written: list[tuple[str, Any]] = []
    for r in cluster.client.requests[seen:]:
        if r.verb == "replace" and r.resource == str(RUNS) and r.subresource == "status":
            written.append(
                ("status", list((r.body.get("status") or {}).get("cordonedNodes") or []))
            )
        elif r.verb == "create":
            written.append((f"create {r.resource}", None))
        elif r.verb == "patch" and r.resource == str(NODES):
            written.append(("node", r.body))
    steps = [step for step, _ in written]
    first_pod = steps.index("create pods")
    assert steps[0] == "node"  # stamp and cordon, one atomic write (E10)
    assert names.CORDON_OWNER in written[0][1]["metadata"]["annotations"]
    assert written[0][1]["spec"] == {"unschedulable": True}
    status_writes = [i for i, (step, nodes) in enumerate(written) if step == "status"]
    assert any(i < first_pod and written[i][1] == ["n0"] for i in status_writes), written


# --- I21 the status size budget ----------------------------------------------------


def _big_run(*, results: int, attempts: int, text: int) -> dict[str, Any]:
    return {
        "metadata": {"name": "r", "namespace": "ns"},
        "status": {
            "results": [
                {
                    "name": f"t{r}",
                    "phase": "Passed",
                    "message": "ok",
                    "metrics": {"bw": "12"},
                    "attempts": [
                        {
                            "attempt": a + 1,
                            "trigger": "Initial" if a == 0 else "Repeat",
                            "phase": "Passed",
                            "finishedAt": f"2026-01-01T00:{a:02d}:{r:02d}Z",
                            "message": "x" * text,
                            "metrics": {"bw": "12", "blob": "y" * text},
                        }
                        for a in range(attempts)
                    ],
                }
                for r in range(results)
            ]
        },
    }


def test_I21_over_budget_the_oldest_attempts_lose_text_first_and_no_verdict_is_lost() -> None:
    run = _big_run(results=4, attempts=3, text=10_000)
    budget = checkpoint.encoded_size(run) - 70_000  # four attempts must go
    size = checkpoint.fit_status(run, budget=budget)
    assert size == checkpoint.encoded_size(run) <= budget
    results = run["status"]["results"]
    assert [r["name"] for r in results] == ["t0", "t1", "t2", "t3"]
    assert all(r["phase"] == "Passed" and r["metrics"] == {"bw": "12"} for r in results)
    assert all(len(r["attempts"]) == 3 for r in results)
    # Attempt 1 of every result finished first (minute 00): those went first.
    assert all(r["attempts"][0]["message"] == checkpoint.COMPACTED for r in results)
    assert all("metrics" not in r["attempts"][0] for r in results)
    assert all(r["attempts"][2]["message"] == "x" * 10_000 for r in results)


def test_I21_a_status_that_cannot_fit_is_refused_and_the_terminal_write_still_fits() -> None:
    run = _big_run(results=40, attempts=1, text=10)
    for result in run["status"]["results"]:
        result["message"] = "m" * 5_000  # result text is never compacted mid-run
    budget = 100_000
    with pytest.raises(checkpoint.StatusTooLargeError) as caught:
        checkpoint.fit_status(copy.deepcopy(run), budget=budget)
    assert caught.value.size > budget
    size = checkpoint.fit_status(run, budget=budget, terminal=True)
    assert size <= budget
    assert [r["phase"] for r in run["status"]["results"]] == ["Passed"] * 40


@pytest.mark.parametrize(
    ("status", "message"),
    [
        (500, "etcdserver: request is too large"),
        (500, "rpc error: code = ResourceExhausted desc = trying to send message larger than max"),
        (413, "Request entity too large: limit is 3145728"),
    ],
)
async def test_I21_a_status_write_refused_for_size_ends_the_run_error_and_releases(
    status: int, message: str
) -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": custom_test("echo")})
    await cluster.create_run()
    await cluster.reconcile()
    [pod] = cluster.live_pods()
    await cluster.kubelet(pod["metadata"]["name"], exit_code=0, log="ok=1\n")
    error = ApiError(status=status, reason="x", body={"code": status, "message": message})
    cluster.client.inject_error("replace", error)
    await cluster.reconcile()
    run = await cluster.run()
    assert run["status"]["phase"] == "Error"
    conditions = {c["type"]: c for c in run["status"]["conditions"]}
    budget = conditions["StatusSizeBudget"]
    assert (budget["status"], budget["reason"]) == ("False", "StatusTooLarge")
    assert "Split it into smaller runs" in budget["message"]
    assert names.FINALIZER not in (run["metadata"].get("finalizers") or [])
    assert_released(cluster)
    await cluster.reconcile()  # terminal: no retry loop, nothing rewritten
    assert (await cluster.run())["status"]["phase"] == "Error"


async def test_I21_a_status_over_our_budget_is_never_sent_and_ends_the_run_error() -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": custom_test("echo")})
    cluster.reconciler = RunReconciler(
        client=cluster.client,
        options=RunOptions(operator_namespace="glimmer-system", status_budget_bytes=3_000),
        now=lambda: cluster.clock,
    )
    await cluster.create_run()
    await cluster.reconcile()
    [pod] = cluster.live_pods()
    await cluster.kubelet(pod["metadata"]["name"], exit_code=1, log="z" * 9_000 + "\n")
    await cluster.reconcile()
    run = await cluster.run()
    assert run["status"]["phase"] == "Error"
    assert result_of(run)["phase"] == "Failed"  # the verdict survives the compaction
    assert "StatusSizeBudget" in {c["type"] for c in run["status"]["conditions"]}
    assert checkpoint.encoded_size(run) <= 3_000
    assert_released(cluster)


def decided_metrics(result: dict[str, Any]) -> dict[str, str]:
    """The last attempt's metrics as the codec decodes them (a ``deciding`` attempt
    stores them once, on the result)."""
    return dict(result_from_json(result, required=True).attempts[-1].metrics)


# --- I22 selectors are built structurally -------------------------------------------


@pytest.mark.parametrize(
    ("selector", "named"),
    [
        ({"pool": "gpu,zone=b"}, 'spec.target.nodeSelector["pool"]: invalid label value'),
        ({"pool": "x!=y"}, 'spec.target.nodeSelector["pool"]: invalid label value'),
        ({"a,b": "gpu"}, 'spec.target.nodeSelector["a,b"]: invalid label key'),
        ({"Bad.Prefix/x": "gpu"}, 'spec.target.nodeSelector["Bad.Prefix/x"]: invalid label key'),
    ],
)
async def test_I22_an_invalid_node_selector_ends_the_run_error_naming_the_field(
    selector: dict[str, str], named: str
) -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": custom_test("echo")})
    await cluster.create_run(target={"nodeSelector": selector})
    await cluster.reconcile()  # at once: waiting cannot make it valid
    run = await cluster.run()
    assert run["status"]["phase"] == "Error"
    [refusal] = run["status"]["results"]
    assert refusal["name"] == "resolve" and refusal["message"].startswith(named)
    admitted = {c["type"]: c for c in run["status"]["conditions"]}["Admitted"]
    assert (admitted["status"], admitted["reason"]) == ("False", "InvalidNodeSelector")
    assert admitted["message"].startswith(named)
    assert not cluster.pods()
    assert not [c for c in cluster.client.calls if c[0] == "list" and c[1] == "nodes"]


async def test_I22_a_selector_the_apiserver_refuses_ends_the_run_error() -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": custom_test("echo")})
    await cluster.create_run(target={"nodeSelector": {"pool": "gpu"}})
    cluster.client.inject_error(
        "list",
        ApiError(status=400, reason="BadRequest", body={"message": "unable to parse requirement"}),
    )
    await cluster.reconcile()
    run = await cluster.run()
    assert run["status"]["phase"] == "Error"
    assert "unable to parse requirement" in run["status"]["results"][0]["message"]


async def test_I22_a_valid_selector_selects_the_labelled_nodes() -> None:
    cluster = Cluster(nodes=2)
    await cluster.setup(tests={"t": custom_test("echo")})
    await cluster.create_run(target={"nodeSelector": {"pool": "gpu"}}, maxConcurrentNodes=2)
    await cluster.reconcile()
    assert len(cluster.live_pods()) == 2
    listed = [c for c in cluster.client.calls if c[0] == "list" and c[1] == "pods"]
    assert listed  # owned_pods' selector is built the same way


# --- I23 checkpointed evidence survives an Error ------------------------------------


async def started_with_checkpoint(cluster: Cluster) -> str:
    await cluster.setup(
        tests={"t": custom_test("echo", thresholds=BW_GATE, checkpointIntervalSeconds=10)}
    )
    await cluster.create_run()
    await cluster.reconcile()
    name = str(cluster.live_pods()[0]["metadata"]["name"])
    await cluster.kubelet(name, exit_code=None)
    await cluster.reconcile()
    cluster.client.set_pod_log(name, namespace=NS, text="miscompares=12\nbw=1\n")
    cluster.advance(11)
    await cluster.reconcile()
    assert result_of(await cluster.run())["metrics"] == {"bw": "1", "miscompares": "12"}
    return name


async def test_I23_a_vanished_pod_keeps_its_checkpointed_metrics_on_the_error() -> None:
    cluster = Cluster(nodes=1)
    name = await started_with_checkpoint(cluster)
    await cluster.client.delete(PODS, name, namespace=NS)
    await cluster.reconcile()
    result = result_of(await cluster.run())
    assert result["phase"] == "Error"
    assert "deleted before it terminated" in result["message"]
    assert result["metrics"] == {"bw": "1", "miscompares": "12"}
    assert result["attempts"][-1]["phase"] == "Error"
    assert decided_metrics(result) == {"bw": "1", "miscompares": "12"}


async def test_I23_an_overdue_pod_keeps_its_checkpointed_metrics_on_the_error() -> None:
    cluster = Cluster(nodes=1)
    await started_with_checkpoint(cluster)
    cluster.advance(5 + 420 + 1)
    await cluster.reconcile()
    result = result_of(await cluster.run())
    assert result["phase"] == "Error" and "overdue" in result["message"]
    assert result["metrics"] == {"bw": "1", "miscompares": "12"}
    assert decided_metrics(result) == {"bw": "1", "miscompares": "12"}


# --- I29 served namespaces ----------------------------------------------------------


def serving(cluster: Cluster, namespaces: frozenset[str] | None) -> None:
    cluster.reconciler = RunReconciler(
        client=cluster.client,
        options=RunOptions(operator_namespace="glimmer-system", served_namespaces=namespaces),
        now=lambda: cluster.clock,
    )


async def test_I29_a_run_in_a_namespace_not_served_ends_error_touching_nothing() -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": custom_test("echo")})
    serving(cluster, frozenset({"glimmer-system"}))
    await cluster.create_run()
    cluster.client.calls.clear()
    await cluster.reconcile()
    run = await cluster.run()
    assert run["status"]["phase"] == "Error"
    admitted = {c["type"]: c for c in run["status"]["conditions"]}["Admitted"]
    assert (admitted["status"], admitted["reason"]) == ("False", "NamespaceNotServed")
    assert "--serve-namespaces=glimmer-system,team" in admitted["message"]
    assert run["status"]["results"][0]["name"] == "admission"
    assert not cluster.pods()
    assert not [c for c in cluster.client.calls if c[1] in ("nodes", "pods") and c[0] != "list"]
    assert not [c for c in cluster.client.calls if c[1].startswith("burninprofiles")]
    assert_released(cluster)


async def test_I29_served_namespaces_none_serves_every_namespace() -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": custom_test("echo")})
    serving(cluster, None)
    await cluster.create_run()
    await cluster.reconcile()
    assert (await cluster.run())["status"]["phase"] == "Running"
    serving(cluster, frozenset({NS}))
    await cluster.reconcile()
    assert (await cluster.run())["status"]["phase"] == "Running"


async def test_I29_a_running_run_whose_namespace_stops_being_served_is_unloaded() -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": custom_test("echo")})
    await cluster.create_run()
    await cluster.reconcile()
    assert cluster.live_pods()
    serving(cluster, frozenset({"elsewhere"}))
    await cluster.reconcile()
    run = await cluster.run()
    assert run["status"]["phase"] == "Error"
    assert not cluster.live_pods()
    assert_released(cluster)
