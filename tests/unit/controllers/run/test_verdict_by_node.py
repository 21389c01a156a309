"""I9: a finished run's results are indexed by node once per run version for the
node verdicts (a 5,000-node run was read whole for each node it names); a new version
of the run is never answered from an older one's index."""

from __future__ import annotations

from typing import Any

from glimmer.api import status_layout
from glimmer.controllers.fingerprint.verdict import PLAN_ANNOTATION, run_verdict
from glimmer.plan import PinnedPlan, PlannedTest

PLAN = PinnedPlan(
    targets=("n1", "n2"), tests=(PlannedTest(name="t", required=True, spec={"kind": "custom"}),)
).to_annotation()


def run(*, version: str, phase_of_n1: str, packed: bool) -> dict[str, Any]:
    results = [
        {"name": "t", "kind": "custom", "phase": phase_of_n1, "nodes": ["n1"],
         "provenance": "silicon", "evidence": "aaaaaaaaaaaaaaaa/0"},
        {"name": "t", "kind": "custom", "phase": "Passed", "nodes": ["n2"],
         "provenance": "silicon", "evidence": "aaaaaaaaaaaaaaaa/1"},
    ]  # fmt: skip
    status: dict[str, Any] = {"phase": "Failed", "finishedAt": "2026-12-01T12:00:00Z"}
    if packed:
        status[status_layout.PACKED_KEY] = status_layout.pack_records(results)
    else:
        status["results"] = results
    return {
        "metadata": {
            "namespace": "ns",
            "name": "r",
            "uid": "u1",
            "resourceVersion": version,
            "annotations": {PLAN_ANNOTATION: PLAN},
        },
        "spec": {},
        "status": status,
    }


def test_I9_node_verdicts_read_packed_records_and_follow_each_run_version() -> None:
    first = run(version="1", phase_of_n1="Failed", packed=True)
    assert (v := run_verdict(first, "n1")) is not None and v.phase == "Failed"
    assert (v := run_verdict(first, "n2")) is not None and v.phase == "Passed"
    assert run_verdict(first, "n3") is None
    later = run(version="2", phase_of_n1="Passed", packed=False)
    assert (v := run_verdict(later, "n1")) is not None and v.phase == "Passed"
    assert (v := run_verdict(first, "n1")) is not None and v.phase == "Failed"
