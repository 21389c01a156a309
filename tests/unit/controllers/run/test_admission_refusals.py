"""E23/E24: a run naming what does not exist, or targets that cannot run a pod, says so
in its first pass (``Admitted=False`` naming the field and the fix, one Warning Event),
is re-checked, and ends Error only after E2's grace."""

from __future__ import annotations

from typing import Any

import pytest

from glimmer.controllers.kit.names import PROFILES, TESTS
from glimmer.controllers.run import refusals
from glimmer.engine import EVENTS, NODES, PODS
from glimmer.sinks.fanout import SINKS

from .harness import NS, Cluster, custom_test


def admitted(run: dict[str, Any]) -> dict[str, Any]:
    conditions: list[dict[str, Any]] = run.get("status", {}).get("conditions", [])
    return {c["type"]: c for c in conditions}["Admitted"]


def warnings(cluster: Cluster, reason: str) -> list[dict[str, Any]]:
    return [e for e in cluster.client.objects(EVENTS) if e["reason"] == reason]


def test_E23_a_missing_reference_names_the_field_the_object_and_the_fix() -> None:
    refusal = refusals.missing_reference(
        field="spec.profileRef", kind="BurnInProfile", name="x", namespace="y"
    )
    assert refusal.reason == "ProfileNotFound"
    assert refusal.message == (
        'spec.profileRef "x": no BurnInProfile named x in namespace y; create it or fix the name'
    )


def test_E24_missing_nodes_are_listed_and_a_not_ready_node_is_refused() -> None:
    missing = refusals.target_refusal(["a", "b"], {"a": {}, "b": None})
    assert missing is not None and missing.reason == "NodeNotFound" and "b" in missing.message
    sick = {"status": {"conditions": [{"type": "Ready", "status": "Unknown"}]}}
    not_ready = refusals.target_refusal(["a"], {"a": sick})
    assert not_ready is not None and not_ready.reason == "NodeNotReady"
    assert "a (Ready=Unknown)" in not_ready.message


def test_E24_a_ready_node_an_unreported_one_and_an_admin_cordon_are_admitted() -> None:
    ready = {"status": {"conditions": [{"type": "Ready", "status": "True"}]}}
    cordoned = {"spec": {"unschedulable": True}, **ready}
    assert refusals.target_refusal(["a", "b", "c"], {"a": ready, "b": {}, "c": cordoned}) is None


async def test_E23_a_missing_profile_is_said_in_the_first_pass_and_rechecked() -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": custom_test("echo ok=1")})
    await cluster.create_run(profileRef="nope")
    result = await cluster.reconcile()
    run = await cluster.run()
    assert result.requeue_after == 15
    assert "phase" not in run["status"]
    condition = admitted(run)
    assert (condition["status"], condition["reason"]) == ("False", "ProfileNotFound")
    assert 'spec.profileRef "nope"' in condition["message"]
    [event] = warnings(cluster, "ProfileNotFound")
    assert event["type"] == "Warning" and event["message"] == condition["message"]
    await cluster.reconcile()
    assert len(warnings(cluster, "ProfileNotFound")) == 1, "one Event, not one per re-check"
    assert cluster.pods() == []


async def test_E23_a_run_refused_for_a_missing_test_is_admitted_once_it_exists() -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": custom_test("echo ok=1")})
    await cluster.client.patch(
        PROFILES, "prof", {"spec": {"tests": [{"testRef": "t"}, {"testRef": "late"}]}}, namespace=NS
    )
    await cluster.create_run()
    await cluster.reconcile()
    condition = admitted(await cluster.run())
    assert condition["reason"] == "TestNotFound"
    assert "spec.tests[1].testRef" in condition["message"]
    await cluster.client.create(
        TESTS, {"metadata": {"name": "late"}, "spec": custom_test("echo ok=1")}, namespace=NS
    )
    await cluster.reconcile()
    run = await cluster.run()
    assert run["status"]["phase"] == "Running"
    assert admitted(run)["reason"] == "TargetsAvailable"


async def test_E26_a_missing_sink_is_said_at_once_and_refuses_nothing() -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": custom_test("echo ok=1")})
    await cluster.client.patch(PROFILES, "prof", {"spec": {"sinks": ["hook"]}}, namespace=NS)
    await cluster.create_run()
    await cluster.reconcile()
    run = await cluster.run()
    assert run["status"]["phase"] == "Running"  # L5: a broken sink never blocks acceptance
    conditions = {c["type"]: c for c in run["status"]["conditions"]}
    sinks = conditions["SinksFound"]
    assert (sinks["status"], sinks["reason"]) == ("False", "SinkNotFound")
    assert "no BurnInSink named hook in namespace team" in sinks["message"]
    [event] = warnings(cluster, "SinkNotFound")
    assert event["message"] == sinks["message"]
    await cluster.reconcile()
    assert len(warnings(cluster, "SinkNotFound")) == 1


async def test_E26_existing_sinks_add_no_condition() -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": custom_test("echo ok=1")})
    await cluster.client.patch(PROFILES, "prof", {"spec": {"sinks": ["hook"]}}, namespace=NS)
    await cluster.client.create(
        SINKS, {"metadata": {"name": "hook"}, "spec": {"type": "ConfigMap"}}, namespace=NS
    )
    await cluster.create_run()
    await cluster.reconcile()
    run = await cluster.run()
    assert "SinksFound" not in {c["type"] for c in run["status"]["conditions"]}
    assert warnings(cluster, "SinkNotFound") == []


@pytest.mark.parametrize(
    ("target", "reason"),
    [
        ({"nodeNames": ["ghost"]}, "NodeNotFound"),
        ({"nodeSelector": {"pool": "none"}}, "NoMatchingNodes"),
    ],
)
async def test_E24_targets_that_do_not_exist_are_refused_then_end_error_after_the_grace(
    target: dict[str, Any], reason: str
) -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": custom_test("echo ok=1")})
    await cluster.create_run(target=target)
    await cluster.reconcile()
    assert admitted(await cluster.run())["reason"] == reason
    assert len(warnings(cluster, reason)) == 1
    cluster.advance(121)
    await cluster.reconcile()
    run = await cluster.run()
    assert run["status"]["phase"] == "Error"
    assert admitted(run)["reason"] == reason
    assert cluster.client.objects(PODS) == []


async def test_E24_a_not_ready_target_is_refused_and_nothing_is_cordoned() -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": custom_test("echo ok=1")})
    sick = {"conditions": [{"type": "Ready", "status": "False"}]}
    await cluster.client.create(NODES, {"metadata": {"name": "sick"}, "spec": {}, "status": sick})
    await cluster.create_run(target={"nodeNames": ["n0", "sick"]})
    await cluster.reconcile()
    assert admitted(await cluster.run())["reason"] == "NodeNotReady"
    assert not any(cluster.node(n)["spec"].get("unschedulable") for n in ("n0", "sick"))
