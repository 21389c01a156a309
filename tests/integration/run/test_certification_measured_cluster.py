"""I16 end to end: the manager in-process, the real apiserver and the simulated kubelet.

A run whose every test the runner skipped (exit 2 with its declared marker) is Passed by
the rule that skips never decide, yet it measured nothing: the ``Measured`` condition
says so, ``certifiesSilicon`` stays false, and ``kubectl get burninrun`` shows both.
"""

from __future__ import annotations

from typing import Any

import pytest

from glimmer.engine import ApiServerClient
from glimmer.verdict import MEASURED_CONDITION, REASON_MEASURED, REASON_NOTHING_MEASURED
from tests.integration.run.conftest import Operator, apply_profile, create_run, custom, terminal_run

pytestmark = [pytest.mark.controlplane, pytest.mark.timeout(240)]

GATE = [{"metric": "bw", "comparison": "GreaterThanOrEqual", "value": "10"}]
SKIPS = "echo 'CUSTOM_SKIP: no device of this kind on this node'; exit 2"


def measured(run: dict[str, Any]) -> dict[str, Any]:
    [condition] = [c for c in run["status"]["conditions"] if c["type"] == MEASURED_CONDITION]
    return dict(condition)


def kubectl_row(control_plane: Any, namespace: str, name: str) -> dict[str, str]:
    """``kubectl get burninrun NAME`` as header -> cell."""
    table = control_plane.kubectl("get", "burninrun", name, "-n", namespace).stdout
    header, row = table.splitlines()
    return dict(zip(header.split(), row.split(), strict=True))


async def test_I16_an_all_skipped_run_passes_unmeasured_and_kubectl_get_shows_it(
    operator: Operator,
    kube: ApiServerClient,
    namespace: str,
    sim_nodes: Any,
    control_plane: Any,
) -> None:
    nodes = sim_nodes(count=1)
    await apply_profile(kube, namespace, {"a": custom(SKIPS), "b": custom(SKIPS)})
    await create_run(kube, namespace, "skips", nodes.names)
    run = await terminal_run(kube, namespace, "skips")
    status = run["status"]
    assert [r["phase"] for r in status["results"]] == ["Skipped", "Skipped"], status
    assert status["phase"] == "Passed"  # skips never decide ...
    assert status["skipped"] == 2
    condition = measured(run)  # ... and say nothing about the part
    assert (condition["status"], condition["reason"]) == ("False", REASON_NOTHING_MEASURED)
    assert status["certifiesSilicon"] is False
    row = kubectl_row(control_plane, namespace, "skips")
    assert (row["PHASE"], row["MEASURED"], row["CERTIFIED"]) == ("Passed", "False", "false")


async def test_I16_a_measured_silicon_declaring_run_reads_measured_true(
    operator: Operator,
    kube: ApiServerClient,
    namespace: str,
    sim_nodes: Any,
    control_plane: Any,
) -> None:
    nodes = sim_nodes(count=1)
    runner = "echo provenance=silicon; echo bw=12"
    await apply_profile(kube, namespace, {"t": custom(runner, thresholds=GATE)})
    await create_run(kube, namespace, "measured", nodes.names)
    run = await terminal_run(kube, namespace, "measured")
    status = run["status"]
    assert status["phase"] == "Passed", status["results"]
    condition = measured(run)
    assert (condition["status"], condition["reason"]) == ("True", REASON_MEASURED)
    # The simulated kubelet's node is simulated: the operator records sim whatever the
    # runner declared (I14), so this run measures without certifying silicon.
    assert status["provenance"] == "sim"
    assert status["certifiesSilicon"] is False
    row = kubectl_row(control_plane, namespace, "measured")
    assert (row["PHASE"], row["MEASURED"], row["CERTIFIED"]) == ("Passed", "True", "false")
