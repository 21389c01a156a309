"""I16 on the operator side: the finisher writes the ``Measured`` condition on every
finished run and certifies only a measured, non-baseline, all-silicon Pass.

An all-Skipped run Passes (skips never decide) yet measured nothing: without the
condition, ``kubectl get`` showed it like a certified one.
"""

from __future__ import annotations

from typing import Any

import pytest

from glimmer.controllers.kit import names
from glimmer.controllers.kit.names import PROFILES, RUNS
from glimmer.verdict import (
    MEASURED_CONDITION,
    REASON_MEASURED,
    REASON_NOTHING_MEASURED,
    Phase,
)
from tests.unit.controllers.run.harness import NS, Cluster, custom_test

BW_GATE = [{"metric": "bw", "comparison": "GreaterThanOrEqual", "value": "10"}]
SKIP_LOG = "CUSTOM_SKIP: no device of this kind here\n"
SILICON_PASS = "provenance=silicon\nbw=12\n"
TERMINAL = {str(p) for p in Phase if p.terminal}


async def drive(cluster: Cluster, *, exit_code: int, log: str, passes: int = 12) -> dict[str, Any]:
    """Reconcile, ending every live runner pod with ``exit_code`` and ``log``, until the
    run is terminal; the run as stored."""
    for _ in range(passes):
        await cluster.reconcile()
        run = await cluster.run()
        if (run.get("status") or {}).get("phase") in TERMINAL:
            return run
        for pod in cluster.live_pods():
            await cluster.kubelet(str(pod["metadata"]["name"]), exit_code=exit_code, log=log)
        cluster.advance(1)
    raise AssertionError(f"run not terminal after {passes} passes: {run.get('status')}")


def measured(run: dict[str, Any]) -> dict[str, Any]:
    [condition] = [
        c for c in run["status"].get("conditions") or [] if c["type"] == MEASURED_CONDITION
    ]
    return dict(condition)


async def test_I16_an_all_skipped_run_passes_but_measured_nothing_and_certifies_nothing() -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"a": custom_test("echo"), "b": custom_test("echo")})
    await cluster.create_run()
    run = await drive(cluster, exit_code=2, log=SKIP_LOG)
    status = run["status"]
    assert [r["phase"] for r in status["results"]] == ["Skipped", "Skipped"], status
    assert status["phase"] == "Passed"  # skips never decide
    assert status["skipped"] == 2
    condition = measured(run)
    assert (condition["status"], condition["reason"]) == ("False", REASON_NOTHING_MEASURED)
    assert "certifies nothing" in condition["message"]
    assert condition["lastTransitionTime"] == status["finishedAt"]
    assert status["certifiesSilicon"] is False


async def test_I16_a_measured_silicon_pass_is_measured_and_certifies() -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": custom_test("echo", thresholds=BW_GATE)})
    await cluster.create_run()
    run = await drive(cluster, exit_code=0, log=SILICON_PASS)
    status = run["status"]
    assert status["phase"] == "Passed", status
    assert status["provenance"] == "silicon"
    assert (measured(run)["status"], measured(run)["reason"]) == ("True", REASON_MEASURED)
    assert status["certifiesSilicon"] is True


async def test_I16_a_failed_run_was_measured_but_certifies_nothing() -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": custom_test("echo", thresholds=BW_GATE)})
    await cluster.create_run()
    run = await drive(cluster, exit_code=0, log="provenance=silicon\nbw=3\n")
    assert run["status"]["phase"] == "Failed"
    assert measured(run)["status"] == "True"
    assert run["status"]["certifiesSilicon"] is False


async def test_I16_a_pass_with_no_provenance_declared_is_unknown_and_not_certified() -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": custom_test("echo", thresholds=BW_GATE)})
    await cluster.create_run()
    run = await drive(cluster, exit_code=0, log="bw=12\n")
    status = run["status"]
    assert status["phase"] == "Passed"
    assert measured(run)["status"] == "True"
    assert status["provenance"] == "unknown"  # absence of a declaration is never silicon
    assert status["certifiesSilicon"] is False


async def test_I16_a_non_required_pass_does_not_make_a_skipped_run_measured() -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"a": custom_test("echo"), "b": custom_test("echo")})
    await cluster.client.patch(
        PROFILES, "prof",
        {"spec": {"tests": [{"testRef": "a"}, {"testRef": "b", "required": False}]}},
        namespace=NS,
    )  # fmt: skip
    await cluster.create_run()
    await cluster.reconcile()  # pins; "a" starts
    [first] = cluster.live_pods()
    await cluster.kubelet(str(first["metadata"]["name"]), exit_code=2, log=SKIP_LOG)
    run = await drive(cluster, exit_code=0, log=SILICON_PASS)
    status = run["status"]
    assert [r["phase"] for r in status["results"]] == ["Skipped", "Passed"], status
    assert status["phase"] == "Passed"
    assert measured(run)["reason"] == REASON_NOTHING_MEASURED
    assert status["certifiesSilicon"] is False


async def test_I16_a_baseline_run_measures_but_never_certifies() -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": custom_test("echo")})  # a baseline has no gates
    await cluster.create_run(baseline=True)
    run = await drive(cluster, exit_code=0, log=SILICON_PASS)
    status = run["status"]
    assert status["phase"] == "Passed", status
    assert status["provenance"] == "silicon"
    assert measured(run)["status"] == "True"
    assert status["certifiesSilicon"] is False


async def test_I16_the_pinned_baseline_decides_after_the_spec_is_edited() -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": custom_test("echo")})
    await cluster.create_run(baseline=True)
    await cluster.reconcile()  # pins the plan, baseline included
    run = await cluster.run()
    assert names.PLAN_ANNOTATION in run["metadata"]["annotations"]
    await cluster.client.patch(RUNS, "r1", {"spec": {"baseline": False}}, namespace=NS)
    run = await drive(cluster, exit_code=0, log=SILICON_PASS)
    assert run["status"]["phase"] == "Passed"
    assert run["status"]["certifiesSilicon"] is False


#: A settled, required, silicon Pass as the status stores it.
SILICON_RESULT: dict[str, Any] = {
    "name": "t",
    "kind": "custom",
    "scope": "Node",
    "phase": "Passed",
    "provenance": "silicon",
    "repeatsRequired": 1,
    "repeatsCompleted": 1,
    "attempts": [{"attempt": 1, "trigger": "Initial", "phase": "Passed", "provenance": "silicon"}],
}


@pytest.mark.parametrize(("baseline", "certifies"), [(True, False), (False, True)])
async def test_I16_without_a_plan_the_spec_baseline_withholds_certification(
    baseline: bool, certifies: bool
) -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": custom_test("echo")})
    run = await cluster.create_run(baseline=baseline)
    run["status"] = {"phase": "Running", "results": [SILICON_RESULT]}
    run = await cluster.client.replace(RUNS, run, namespace=NS, subresource="status")
    await cluster.reconciler.finisher.finalise(run, phase=Phase.PASSED, extra=[], plan=None)
    run = await cluster.run()
    assert measured(run)["status"] == "True"
    assert run["status"]["certifiesSilicon"] is certifies


async def test_I16_a_run_whose_plan_cannot_be_read_ends_not_measured() -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": custom_test("echo")})
    await cluster.create_run()
    await cluster.client.patch(
        RUNS, "r1", {"metadata": {"annotations": {names.PLAN_ANNOTATION: "not a plan"}}},
        namespace=NS,
    )  # fmt: skip
    await cluster.reconcile()
    run = await cluster.run()
    assert run["status"]["phase"] == "Error"
    assert measured(run)["reason"] == REASON_NOTHING_MEASURED
    assert run["status"]["certifiesSilicon"] is False


async def test_I16_a_run_cancelled_before_anything_ran_ends_not_measured() -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": custom_test("echo")})
    await cluster.create_run(cancel=True)
    run = await drive(cluster, exit_code=0, log=SILICON_PASS)
    assert run["status"]["phase"] == "Cancelled"
    assert measured(run)["status"] == "False"
