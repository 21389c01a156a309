"""E23/E24/E26 on the real apiserver: a run naming a profile or test that does not
exist, or nodes that do not exist or that no node matches, gets ``Admitted=False``
naming the fix and a Warning Event in its first reconcile (the bound: 2 s after
creation), and nothing is cordoned or created for it; a missing sink is said the same
way in ``SinksFound=False`` and refuses nothing."""

from __future__ import annotations

import time
from typing import Any

import pytest

from glimmer.controllers.kit.names import PROFILES, RUNS
from glimmer.engine import EVENTS, PODS, ApiServerClient
from tests.integration.run.conftest import Operator, apply_profile, create_run, custom, wait_for

pytestmark = [pytest.mark.controlplane, pytest.mark.timeout(120)]

#: The bound a user waits at most to see why (measured well under it; see the report).
BOUND_SECONDS = 2.0


async def refusal_seen(
    kube: ApiServerClient, namespace: str, name: str, condition: str
) -> tuple[str, str] | None:
    run = await kube.get(RUNS, name, namespace=namespace)
    conditions = {c["type"]: c for c in (run.get("status") or {}).get("conditions", [])}
    admitted = conditions.get(condition)
    if admitted is None or admitted["status"] != "False":
        return None
    events = (await kube.list(EVENTS, namespace=namespace))["items"]
    if not any(
        e["reason"] == admitted["reason"] and e["involvedObject"].get("name") == name
        for e in events
    ):
        return None
    return str(admitted["reason"]), str(admitted["message"])


@pytest.mark.parametrize(
    ("case", "reason", "needle"),
    [
        ("profile", "ProfileNotFound", 'spec.profileRef "nope"'),
        ("test", "TestNotFound", 'spec.tests[1].testRef "late"'),
        ("sink", "SinkNotFound", "spec.sinks: no BurnInSink named hook"),
        ("node", "NodeNotFound", "no Node named ghost-node"),
        ("selector", "NoMatchingNodes", "matches no node"),
    ],
)
async def test_E23_E24_E26_a_refusal_names_its_fix_within_one_reconcile(
    operator: Operator,
    kube: ApiServerClient,
    namespace: str,
    sim_nodes: Any,
    case: str,
    reason: str,
    needle: str,
) -> None:
    [node] = sim_nodes(count=1).names
    await apply_profile(kube, namespace, {"t": custom("echo ok=1")})
    spec: dict[str, Any] = {}
    targets = [node]
    if case == "profile":
        spec["profileRef"] = "nope"
    elif case == "test":
        await kube.patch(
            PROFILES,
            "prof",
            {"spec": {"tests": [{"testRef": "t"}, {"testRef": "late"}]}},
            namespace=namespace,
        )
    elif case == "sink":
        await kube.patch(PROFILES, "prof", {"spec": {"sinks": ["hook"]}}, namespace=namespace)
    elif case == "node":
        targets = ["ghost-node"]
    else:
        targets = []
        spec["target"] = {"nodeSelector": {"glimmer.test/none": "x"}}
    started = time.monotonic()
    await create_run(kube, namespace, "r", targets, **spec)
    # E26: a missing sink is said in SinksFound and refuses nothing (L5).
    condition = "SinksFound" if case == "sink" else "Admitted"
    seen = await wait_for(
        lambda: refusal_seen(kube, namespace, "r", condition), timeout=30, what=reason
    )
    elapsed = time.monotonic() - started
    print(f"{case}: {reason} + Event after {elapsed:.3f}s")
    assert seen[0] == reason
    assert needle in seen[1]
    assert elapsed < BOUND_SECONDS, f"{reason} took {elapsed:.2f}s"
    if case != "sink":
        assert (await kube.list(PODS, namespace=namespace))["items"] == []
