"""C9/C10 in the run controller: the run-level phase of judgement, on the fake client.

Four nodes of one fingerprint run a custom test that prints ``tflops``; one is 12 %
slower. The absolute gate passes all four; the cohort gate fails the slow one, in the
verdict's own status write, with the explanation on its result and the cohort's
numbers checkpointed in ``status.cohortVerdicts``.
"""

from __future__ import annotations

import copy
from typing import Any

from glimmer.controllers.kit import names
from glimmer.controllers.kit.names import fingerprint_name
from glimmer.controllers.kit.view import RunView
from glimmer.controllers.run.cohort import VERDICTS_FIELD
from glimmer.verdict import Phase
from tests.unit.controllers.run.harness import Cluster, custom_test

OPERATOR_NS = "glimmer-system"
TERMINAL = {str(p) for p in Phase if p.terminal}
GATE = {
    "metric": "tflops",
    "comparison": "GreaterThanOrEqual",
    "value": "50",
    "relativeTo": {"cohort": "fingerprint", "maxDeviation": {"robustSigma": "4"}},
}
TFLOPS = {"n0": "100", "n1": "101", "n2": "99", "n3": "88"}


async def fingerprints(cluster: Cluster, digests: dict[str, str]) -> None:
    for node, digest in digests.items():
        await cluster.client.create(
            names.FINGERPRINTS,
            {"metadata": {"name": fingerprint_name(node)}, "spec": {"nodeName": node},
             "status": {"digest": digest}},
            namespace=OPERATOR_NS,
        )  # fmt: skip


async def drive(cluster: Cluster, values: dict[str, str], passes: int = 20) -> dict[str, Any]:
    for _ in range(passes):
        await cluster.reconcile()
        run = await cluster.run()
        if (run.get("status") or {}).get("phase") in TERMINAL:
            return run
        for pod in cluster.live_pods():
            node = pod["metadata"]["labels"]["burnin.glimmer.ai/node"]
            log = f"provenance=silicon\ntflops={values[node]}\n"
            await cluster.kubelet(str(pod["metadata"]["name"]), exit_code=0, log=log)
        cluster.advance(1)
    raise AssertionError(f"run not terminal after {passes} passes: {run.get('status')}")


async def started(*, digests: dict[str, str], gate: dict[str, Any] = GATE) -> Cluster:
    cluster = Cluster(nodes=4)
    await cluster.setup(tests={"t": custom_test("echo", thresholds=[gate])})
    await fingerprints(cluster, digests)
    await cluster.create_run(maxConcurrentNodes=4)
    return cluster


def by_node(run: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["nodes"][0]: r for r in run["status"]["results"]}


async def test_C9_the_outlier_of_a_cohort_fails_though_the_absolute_gate_passed() -> None:
    cluster = await started(digests=dict.fromkeys(TFLOPS, "glimmer-v1:aaa"))
    run = await drive(cluster, TFLOPS)
    status = run["status"]
    results = by_node(run)
    assert {n: r["phase"] for n, r in results.items()} == {
        "n0": "Passed", "n1": "Passed", "n2": "Passed", "n3": "Failed"}  # fmt: skip
    (violation,) = results["n3"]["violations"]
    assert (violation["kind"], violation["cause"], violation["index"]) == (
        "CohortOutlier", "Measurement", 0)  # fmt: skip
    for part in ("got 88", "median 99.5", "cohort of 4", "MAD 1", "7.76 robust sigma"):
        assert part in violation["reason"], violation["reason"]
    assert results["n3"]["message"] == violation["reason"]
    assert status["phase"] == "Failed"  # D6 over the judged results
    assert (status["passed"], status["failed"]) == (3, 1)
    assert status["certifiesSilicon"] is False
    (record,) = status[VERDICTS_FIELD]
    assert record == {
        "test": "t", "thresholdIndex": 0, "metric": "tflops",
        "comparison": "GreaterThanOrEqual", "fingerprint": "glimmer-v1:aaa", "members": 4,
        "excluded": 0, "evaluated": True, "size": 4, "median": "99.5", "mad": "1",
        "allowedDeviation": "5.9304", "outliers": ["n3"], "judgedAt": status["finishedAt"],
    }  # fmt: skip


async def test_C9_a_cohort_without_outliers_passes_and_certifies() -> None:
    cluster = await started(digests=dict.fromkeys(TFLOPS, "glimmer-v1:aaa"))
    run = await drive(cluster, {**TFLOPS, "n3": "100"})
    assert run["status"]["phase"] == "Passed"
    assert run["status"]["certifiesSilicon"] is True
    assert run["status"][VERDICTS_FIELD][0]["outliers"] == []


async def test_C10_below_min_cohort_size_the_gate_is_not_evaluated_and_says_so() -> None:
    digests = {"n0": "glimmer-v1:aaa", "n1": "glimmer-v1:aaa", "n2": "glimmer-v1:bbb",
               "n3": "glimmer-v1:bbb"}  # fmt: skip
    cluster = await started(digests=digests)
    run = await drive(cluster, TFLOPS)
    assert run["status"]["phase"] == "Passed"  # the absolute gate's verdict, untouched
    records = run["status"][VERDICTS_FIELD]
    assert [(r["fingerprint"], r["evaluated"]) for r in records] == [
        ("glimmer-v1:aaa", False), ("glimmer-v1:bbb", False)]  # fmt: skip
    for result in run["status"]["results"]:
        (item,) = result["notEvaluated"]
        assert "below minCohortSize 3" in item["reason"]


async def test_C10_a_node_with_no_fingerprint_digest_is_not_judged() -> None:
    cluster = await started(digests={"n0": "glimmer-v1:aaa", "n1": "glimmer-v1:aaa",
                                     "n2": "glimmer-v1:aaa", "n3": ""})  # fmt: skip
    run = await drive(cluster, TFLOPS)
    results = by_node(run)
    assert results["n3"]["phase"] == "Passed"
    assert "no fingerprint digest" in results["n3"]["notEvaluated"][0]["reason"]
    records = run["status"][VERDICTS_FIELD]
    assert [(r["fingerprint"], r["evaluated"]) for r in records] == [
        ("glimmer-v1:aaa", True), ("", False)]  # fmt: skip


async def test_D8_a_judged_outcome_is_checkpointed_and_never_judged_again() -> None:
    """A re-settle of the finished run by a restarted manager (a size-refused write
    retried) finds the gate in status.cohortVerdicts: no second judgement, no second
    violation, and new evidence changes nothing."""
    cluster = await started(digests=dict.fromkeys(TFLOPS, "glimmer-v1:aaa"))
    run = await drive(cluster, TFLOPS)
    records = copy.deepcopy(run["status"][VERDICTS_FIELD])
    again = copy.deepcopy(run)
    for result in again["status"]["results"]:
        if result["nodes"] == ["n0"]:
            result["metrics"]["tflops"] = "1000"  # would now make n1, n2 outliers too
    plan = RunView(again).readable_plan()
    assert plan is not None
    restarted = cluster.new_reconciler()
    phase = restarted.finisher.settle_verdict(again, phase=Phase.FAILED, extra=(), plan=plan)
    assert phase is Phase.FAILED
    assert again["status"][VERDICTS_FIELD] == records
    assert {n: r["phase"] for n, r in by_node(again).items()} == {
        n: r["phase"] for n, r in by_node(run).items()}  # fmt: skip
    assert len(by_node(again)["n3"]["violations"]) == 1


def test_D8_a_compact_record_is_offered_without_a_value_and_never_rewritten() -> None:
    """A result held only in an evidence shard cannot be read here: it counts as excluded
    and its compact record is left as it is (rewritten, it would disagree with its shard
    and read Error)."""
    from glimmer.controllers.run import wire
    from glimmer.controllers.run.cohort import judge_results
    from glimmer.plan import PinnedPlan, PlannedTest

    plan = PinnedPlan(targets=tuple(TFLOPS), tests=(PlannedTest(
        name="t", required=True, spec=custom_test("echo", thresholds=[GATE])),))  # fmt: skip
    results: list[dict[str, Any]] = [
        {"name": "t", "kind": "custom", "scope": "Node", "phase": "Passed", "nodes": [n],
         "metrics": {"tflops": v}, "provenance": "silicon"}
        for n, v in TFLOPS.items() if n != "n3"
    ]  # fmt: skip
    compact = {"name": "t", "kind": "custom", "scope": "Node", "phase": "Passed",
               "nodes": ["n3"], "provenance": "silicon",
               "evidence": "aaaaaaaaaaaaaaaa/0"}  # fmt: skip
    results.append(dict(compact))
    states = [wire.state_from_wire(r, required=True) for r in results]
    settled = judge_results(plan, results=results, states=states,
                            digests=dict.fromkeys(TFLOPS, "glimmer-v1:aaa"), judged=set(),
                            at="2026-12-03T00:00:00Z")  # fmt: skip
    assert settled.results[-1] == compact
    (record,) = settled.records
    assert (record["members"], record["excluded"], record["size"]) == (4, 1, 3)
