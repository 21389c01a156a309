"""C10 at fleet scale: the results of a test with a relative gate stay whole in the run's
status until their cohort is judged, so a run big enough to move its evidence to shards
still judges every member (a member held only in a shard would be excluded, and an
outlier there would escape its cohort)."""

from __future__ import annotations

from typing import Any

from glimmer.api import status_layout
from glimmer.controllers.kit import checkpoint
from glimmer.controllers.kit import names as kit_names
from glimmer.engine import FakeClient
from glimmer.plan import PinnedPlan, PlannedTest
from tests.unit.controllers.run.test_shards_status import NS, full_result

GATED, PLAIN = "gpu-burn", "memory-bw"
RELATIVE = {
    "metric": "bw_gbps",
    "comparison": "GreaterThanOrEqual",
    "value": "100",
    "relativeTo": {"cohort": "fingerprint", "maxDeviation": {"robustSigma": "4"}},
}


def plan(nodes: int) -> str:
    return PinnedPlan(
        targets=tuple(f"kwok-node-{n:04d}" for n in range(nodes)),
        tests=(
            PlannedTest(
                name=GATED, required=True, spec={"kind": "custom", "thresholds": [RELATIVE]}
            ),
            PlannedTest(name=PLAIN, required=True, spec={"kind": "custom"}),
        ),
    ).to_annotation()


async def big_run(client: FakeClient, nodes: int, **status: Any) -> dict[str, Any]:
    run = await client.create(
        kit_names.RUNS,
        {
            "metadata": {"name": "r1", "annotations": {kit_names.PLAN_ANNOTATION: plan(nodes)}},
            "spec": {"profileRef": "prof"},
            "status": dict(status),
        },
        namespace=NS,
    )
    run["status"]["results"] = [
        full_result(n, test=t) for t in (GATED, PLAIN) for n in range(nodes)
    ]
    return run


def compact_by_test(run: dict[str, Any]) -> dict[str, set[bool]]:
    seen: dict[str, set[bool]] = {}
    for result in status_layout.status_results(run["status"]):
        seen.setdefault(str(result["name"]), set()).add(status_layout.is_compact(result))
    return seen


async def test_C10_a_cohort_gated_tests_results_stay_whole_until_judged() -> None:
    client = FakeClient()
    run = await checkpoint.write_status(client, await big_run(client, 400))
    assert compact_by_test(run) == {GATED: {False}, PLAIN: {True}}


async def test_C10_once_judged_the_cohort_gated_results_move_like_any_other() -> None:
    client = FakeClient()
    judged = [{"test": GATED, "thresholdIndex": 0, "fingerprint": "d", "evaluated": True}]
    run = await big_run(client, 400, cohortVerdicts=judged)
    run = await checkpoint.write_status(client, run)
    assert compact_by_test(run) == {GATED: {True}, PLAIN: {True}}


async def test_C10_near_the_status_budget_they_move_rather_than_fail_the_write() -> None:
    client = FakeClient()
    run = await big_run(client, 900)  # ~1.25 MB of full results: past the budget's last 1/8
    run = await checkpoint.write_status(client, run)
    assert checkpoint.encoded_size(run) <= checkpoint.STATUS_BUDGET_BYTES
    assert compact_by_test(run)[GATED] == {True}
