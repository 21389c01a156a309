"""E10/E12/E19: an admin's cordon placed while a run holds the node survives the
release, on the real apiserver with the real ``kubectl``.

What an admin's action leaves on the node decides what the release can see, and this
file pins it: ``kubectl cordon`` on a node the run already cordoned sends nothing
(``already cordoned``, the resourceVersion unchanged), so it cannot be told from no
action at all; ``kubectl uncordon`` then ``kubectl cordon`` leaves kubectl's field
manager owning ``spec.unschedulable``, and the release keeps that cordon; annotating
the node ``burnin.glimmer.ai/prior-unschedulable=true`` is the documented way to keep a
node the run holds cordoned, and is seen from the manager's node cache too (the node
is released by a pass, mid-run, not by the terminal unload)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from glimmer.controllers.kit import names
from glimmer.controllers.kit.names import RUNS
from glimmer.engine import EVENTS, NODES, ApiServerClient
from tests.integration.run.conftest import (
    Operator,
    apply_profile,
    create_run,
    custom,
    terminal_run,
    wait_for,
)

pytestmark = [pytest.mark.controlplane, pytest.mark.timeout(300)]


async def stamped_by(kube: ApiServerClient, node: str, run: str) -> bool:
    current = await kube.get(NODES, node)
    owner = (current["metadata"].get("annotations") or {}).get(names.CORDON_OWNER, "")
    return bool(owner.split("/")[1:2] == [run] and current["spec"].get("unschedulable"))


async def kept_events(kube: ApiServerClient, namespace: str, run: str) -> list[str]:
    events = (await kube.list(EVENTS, namespace=namespace))["items"]
    return [
        str(e["message"])
        for e in events
        if e.get("reason") == "CordonKept" and e["involvedObject"].get("name") == run
    ]


async def test_E12_E19_a_cordon_an_admin_rewrote_mid_run_survives_the_release(
    operator: Operator,
    kube: ApiServerClient,
    namespace: str,
    sim_nodes: Any,
    control_plane: Any,
) -> None:
    [node] = sim_nodes(count=1).names
    await apply_profile(kube, namespace, {"t": custom("sleep 8; echo ok=1")})
    await create_run(kube, namespace, "r", [node])
    await wait_for(lambda: stamped_by(kube, node, "r"), what="the run's cordon")
    before = (await kube.get(NODES, node))["metadata"]["resourceVersion"]
    # Not observable: kubectl sends nothing for a node that is already unschedulable.
    said = control_plane.kubectl("cordon", node).stdout
    assert "already cordoned" in said, said
    assert (await kube.get(NODES, node))["metadata"]["resourceVersion"] == before
    # Observable: the admin takes the cordon over (kubectl's field manager owns it now).
    control_plane.kubectl("uncordon", node)
    control_plane.kubectl("cordon", node)
    run = await terminal_run(kube, namespace, "r")
    assert run["status"]["phase"] == "Passed", run["status"]
    current = await kube.get(NODES, node)
    assert current["spec"].get("unschedulable") is True, "the admin's cordon was undone"
    assert names.CORDON_OWNER not in (current["metadata"].get("annotations") or {})
    [message] = await kept_events(kube, namespace, "r")
    assert f"node {node} stays cordoned" in message and "kubectl" in message, message


async def test_E12_an_annotated_node_stays_cordoned_when_a_pass_releases_it_mid_run(
    operator: Operator,
    kube: ApiServerClient,
    namespace: str,
    sim_nodes: Any,
    control_plane: Any,
) -> None:
    first, second = sim_nodes(count=2).names
    await apply_profile(kube, namespace, {"t": custom("sleep 5; echo ok=1")})
    await create_run(kube, namespace, "r", [first, second], maxConcurrentNodes=1)
    await wait_for(lambda: stamped_by(kube, first, "r"), what="the run's cordon")
    control_plane.kubectl(
        "annotate", "node", first, f"{names.PRIOR_UNSCHEDULABLE}=true", "--overwrite"
    )

    async def released_mid_run() -> bool:
        run = await kube.get(RUNS, "r", namespace=namespace)
        current = await kube.get(NODES, first)
        return bool(
            (run.get("status") or {}).get("phase") == "Running"
            and names.CORDON_OWNER not in (current["metadata"].get("annotations") or {})
        )

    await wait_for(released_mid_run, timeout=90, what=f"{first} released while the run runs")
    assert (await kube.get(NODES, first))["spec"].get("unschedulable") is True
    run = await terminal_run(kube, namespace, "r")
    assert run["status"]["phase"] == "Passed", run["status"]
    assert (await kube.get(NODES, first))["spec"].get("unschedulable") is True
    assert not (await kube.get(NODES, second))["spec"].get("unschedulable")
    for _ in range(20):  # the pass's Events follow its status write
        if await kept_events(kube, namespace, "r"):
            break
        await asyncio.sleep(0.2)
    [message] = await kept_events(kube, namespace, "r")
    assert names.PRIOR_UNSCHEDULABLE in message, message


async def test_E12_a_cordon_an_admin_rewrote_survives_a_release_mid_run(
    operator: Operator,
    kube: ApiServerClient,
    namespace: str,
    sim_nodes: Any,
    control_plane: Any,
) -> None:
    """The node is let go by a pass, not by the terminal unload: decided on the
    manager's node cache where it keeps who owns ``spec.unschedulable``, else on a live
    read of the node."""
    first, second = sim_nodes(count=2).names
    await apply_profile(kube, namespace, {"t": custom("sleep 5; echo ok=1")})
    await create_run(kube, namespace, "r", [first, second], maxConcurrentNodes=1)
    await wait_for(lambda: stamped_by(kube, first, "r"), what="the run's cordon")
    control_plane.kubectl("uncordon", first)
    control_plane.kubectl("cordon", first)

    async def released_mid_run() -> bool:
        run = await kube.get(RUNS, "r", namespace=namespace)
        current = await kube.get(NODES, first)
        return bool(
            (run.get("status") or {}).get("phase") == "Running"
            and names.CORDON_OWNER not in (current["metadata"].get("annotations") or {})
        )

    await wait_for(released_mid_run, timeout=90, what=f"{first} released while the run runs")
    assert (await kube.get(NODES, first))["spec"].get("unschedulable") is True
    run = await terminal_run(kube, namespace, "r")
    assert run["status"]["phase"] == "Passed", run["status"]
    assert (await kube.get(NODES, first))["spec"].get("unschedulable") is True
    assert not (await kube.get(NODES, second))["spec"].get("unschedulable")
