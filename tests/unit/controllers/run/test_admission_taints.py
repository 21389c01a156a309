"""E28: a target with a NoSchedule/NoExecute taint the runner pods do not tolerate is
refused in the first pass (``Admitted=False/NodeTaintNotTolerated`` naming the node, the
taint and the fix, one Warning Event), judged by Kubernetes' own matching against the
tolerations the pod builder puts on every runner pod."""

from __future__ import annotations

from typing import Any

import pytest

from glimmer.controllers.kit.names import RUNS
from glimmer.controllers.run import refusals
from glimmer.controllers.run.pods import runner_tolerations
from glimmer.controllers.run.tolerations import Taint, node_taints, tolerates, untolerated
from glimmer.engine import EVENTS, NODES, PODS

from .harness import NS, Cluster, custom_test

READY = {"conditions": [{"type": "Ready", "status": "True"}]}
DEDICATED = {"key": "dedicated", "value": "burnin", "effect": "NoSchedule"}


def node(*taints: dict[str, str], status: dict[str, Any] = READY, **spec: Any) -> dict[str, Any]:
    return {"spec": {"taints": list(taints), **spec}, "status": status}


def admitted(run: dict[str, Any]) -> dict[str, Any]:
    conditions: list[dict[str, Any]] = run.get("status", {}).get("conditions", [])
    return {c["type"]: c for c in conditions}["Admitted"]


TAINT = Taint(key="dedicated", value="burnin", effect="NoSchedule")


@pytest.mark.parametrize(
    ("toleration", "taint", "expected"),
    [
        # Exists with an empty key tolerates every taint, whatever its key, value, effect.
        ({"operator": "Exists"}, TAINT, True),
        ({"operator": "Exists"}, Taint("other", "", "NoExecute"), True),
        # ... unless it names an effect.
        ({"operator": "Exists", "effect": "NoExecute"}, TAINT, False),
        # Exists with a key: any value of that key, no other key.
        ({"key": "dedicated", "operator": "Exists"}, TAINT, True),
        ({"key": "dedicated", "operator": "Exists"}, Taint("dedicated", "", "NoSchedule"), True),
        ({"key": "other", "operator": "Exists"}, TAINT, False),
        # Equal: the same value only; no operator means Equal; no value reads as "".
        ({"key": "dedicated", "operator": "Equal", "value": "burnin"}, TAINT, True),
        ({"key": "dedicated", "operator": "Equal", "value": "prod"}, TAINT, False),
        ({"key": "dedicated", "value": "burnin"}, TAINT, True),
        ({"key": "dedicated"}, TAINT, False),
        ({"key": "dedicated"}, Taint("dedicated", "", "NoSchedule"), True),
        # An empty effect matches every effect; a named one only itself.
        ({"key": "dedicated", "value": "burnin", "effect": ""}, TAINT, True),
        ({"key": "dedicated", "value": "burnin", "effect": "NoSchedule"}, TAINT, True),
        ({"key": "dedicated", "value": "burnin", "effect": "NoExecute"}, TAINT, False),
        # ToleratesTaint skips an empty key (the API refuses that shape with Equal).
        ({"value": "burnin"}, TAINT, True),
        # An operator Kubernetes does not know by default tolerates nothing.
        ({"key": "dedicated", "operator": "Gt", "value": "1"}, TAINT, False),
    ],
)
def test_E28_tolerations_match_taints_by_kubernetes_rules(
    toleration: dict[str, str], taint: Taint, expected: bool
) -> None:
    assert tolerates(toleration, taint) is expected


def test_E28_prefer_no_schedule_never_blocks_and_no_execute_does() -> None:
    soft = {"key": "soft", "effect": "PreferNoSchedule"}
    hard = {"key": "hard", "value": "x", "effect": "NoExecute"}
    assert untolerated(node(soft), []) == []
    assert untolerated(node(soft, hard), []) == [Taint("hard", "x", "NoExecute")]
    assert untolerated(node(soft, hard), [{"key": "hard", "operator": "Exists"}]) == []


def test_E28_a_cordon_counts_as_the_unschedulable_taint_and_runner_pods_tolerate_it() -> None:
    cordoned = node(unschedulable=True)
    [cordon] = node_taints(cordoned)
    assert str(cordon) == "node.kubernetes.io/unschedulable:NoSchedule"
    assert untolerated(cordoned, []) == [cordon], "the scheduler's NodeUnschedulable filter"
    # The node lifecycle controller writes the same taint; it is counted once.
    written = node({"key": cordon.key, "effect": "NoSchedule"}, unschedulable=True)
    assert node_taints(written) == [cordon]
    assert untolerated(written, runner_tolerations()) == []
    assert refusals.target_refusal(["a", "b"], {"a": cordoned, "b": written}) is None


def test_E28_an_untolerated_taint_is_refused_naming_node_taint_and_fix() -> None:
    refusal = refusals.target_refusal(
        ["a", "b"], {"a": node(), "b": node(DEDICATED, {"key": "gpu", "effect": "NoExecute"})}
    )
    assert refusal is not None and refusal.reason == "NodeTaintNotTolerated"
    assert refusal.message == (
        "spec.target: node b (dedicated=burnin:NoSchedule, gpu:NoExecute) has a taint the "
        "runner pods do not tolerate, so no runner pod can be scheduled there; add a "
        "matching toleration to spec.target.tolerations, or remove the taint "
        "(kubectl taint node b dedicated- gpu-)"
    )
    tolerated = [{"key": "dedicated", "operator": "Exists"}, {"key": "gpu", "operator": "Exists"}]
    both = node(DEDICATED, {"key": "gpu", "effect": "NoExecute"})
    assert refusals.target_refusal(["b"], {"b": both}, run_tolerations=tolerated) is None
    assert refusals.target_refusal(["b"], {"b": both}, run_tolerations=tolerated[:1]) is not None


def test_E28_several_tainted_nodes_are_listed_with_the_general_fix() -> None:
    nodes = {f"n{i}": node(DEDICATED) for i in range(7)}
    refusal = refusals.target_refusal(list(nodes), nodes)
    assert refusal is not None and refusal.reason == "NodeTaintNotTolerated"
    assert "node n0 (dedicated=burnin:NoSchedule), n1 (" in refusal.message
    assert "and 2 more has a taint" in refusal.message
    assert refusal.message.endswith("(kubectl taint node NODE KEY-)")


@pytest.mark.parametrize("key", ["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"])
def test_E28_a_not_ready_node_is_said_not_ready_not_tainted(key: str) -> None:
    sick = node(
        {"key": key, "effect": "NoSchedule"},
        {"key": key, "effect": "NoExecute"},
        status={"conditions": [{"type": "Ready", "status": "Unknown"}]},
    )
    refusal = refusals.target_refusal(["a", "b"], {"a": node(DEDICATED), "b": sick})
    assert refusal is not None and refusal.reason == "NodeNotReady"
    assert "b (Ready=Unknown)" in refusal.message and "taint" not in refusal.message


async def test_E28_a_tainted_target_is_refused_at_once_and_admitted_once_untainted() -> None:
    cluster = Cluster(nodes=2)
    await cluster.setup(tests={"t": custom_test("echo ok=1")})
    await cluster.client.patch(NODES, "n1", {"spec": {"taints": [DEDICATED]}})
    await cluster.create_run()
    result = await cluster.reconcile()
    run = await cluster.run()
    assert result.requeue_after == 15
    assert "phase" not in run["status"]
    condition = admitted(run)
    assert (condition["status"], condition["reason"]) == ("False", "NodeTaintNotTolerated")
    assert "node n1 (dedicated=burnin:NoSchedule)" in condition["message"]
    [event] = [e for e in cluster.client.objects(EVENTS) if e["reason"] == condition["reason"]]
    assert event["type"] == "Warning" and event["message"] == condition["message"]
    assert cluster.client.objects(PODS) == []
    assert not any(cluster.node(n)["spec"].get("unschedulable") for n in ("n0", "n1"))
    await cluster.client.patch(NODES, "n1", {"spec": {"taints": None}})
    cluster.advance(15)
    await cluster.reconcile()
    run = await cluster.run()
    assert run["status"]["phase"] == "Running"
    assert admitted(run)["reason"] == "TargetsAvailable"


async def test_E28_admission_and_the_runner_pod_judge_the_same_tolerations() -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": custom_test("echo ok=1")})
    await cluster.client.patch(NODES, "n0", {"spec": {"taints": [DEDICATED]}})
    tolerations = [{"key": "dedicated", "operator": "Equal", "value": "burnin"}]
    await cluster.create_run(target={"nodeNames": ["n0"], "tolerations": tolerations})
    for _ in range(5):
        await cluster.reconcile()
        if cluster.pods():
            break
    assert admitted(await cluster.run())["reason"] == "TargetsAvailable"
    [pod] = cluster.pods()
    assert pod["spec"]["tolerations"] == runner_tolerations(tolerations)
    # The node is cordoned by now (E10): the pod tolerates that and the taint alike.
    tainted = cluster.node("n0")
    assert tainted["spec"].get("unschedulable") is True
    assert untolerated(tainted, pod["spec"]["tolerations"]) == []


async def test_E28_a_toleration_added_to_the_refused_run_admits_it() -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": custom_test("echo ok=1")})
    await cluster.client.patch(NODES, "n0", {"spec": {"taints": [DEDICATED]}})
    await cluster.create_run()
    await cluster.reconcile()
    assert admitted(await cluster.run())["reason"] == "NodeTaintNotTolerated"
    toleration = {"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}
    target = {"nodeNames": ["n0"], "tolerations": [toleration]}
    await cluster.client.patch(RUNS, "r1", {"spec": {"target": target}}, namespace=NS)
    cluster.advance(15)
    await cluster.reconcile()
    run = await cluster.run()
    assert run["status"]["phase"] == "Running"
    assert admitted(run)["reason"] == "TargetsAvailable"
