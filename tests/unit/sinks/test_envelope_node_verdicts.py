"""A terminal envelope says what the run established about each target node, decided by
``glimmer.verdict.nodes`` over the pinned plan (never from the results that happen to
exist), and the Prometheus sink exports it."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from prometheus_client import CollectorRegistry

from glimmer.contract.envelope import REASON_RUN_PHASE_CHANGED, decode, encode
from glimmer.plan import PinnedPlan, PlannedTest
from glimmer.plan.units import verdict_units
from glimmer.sinks.build import build_envelope
from glimmer.sinks.prometheus import RunExporter

PLAN = PinnedPlan(
    targets=("n1", "n2"),
    fail_fast=True,
    tests=tuple(
        PlannedTest(name=name, required=True, spec={"kind": kind})
        for name, kind in (("smoke", "compute-smoke"), ("burn", "gpu-burn"))
    ),
)


def run(phase: str, results: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "metadata": {"namespace": "lab", "name": "accept", "uid": "u-1"},
        "spec": {"profileRef": "p"},
        "status": {"phase": phase, "results": results},
    }


def result(name: str, node: str, phase: str, provenance: str = "silicon") -> dict[str, Any]:
    return {"name": name, "kind": "custom", "phase": phase, "nodes": [node],
            "provenance": provenance}  # fmt: skip


def envelope(phase: str, results: list[dict[str, Any]]) -> Any:
    return build_envelope(
        run(phase, results),
        reason=REASON_RUN_PHASE_CHANGED,
        event_key=phase,
        sent_at=datetime(2026, 12, 2, tzinfo=UTC),
        baseline=False,
        planned=verdict_units(PLAN),
    )


def test_node_verdict_a_fail_fast_envelope_never_reads_the_untested_node_passed() -> None:
    sent = envelope("Failed", [result("smoke", "n1", "Passed"), result("smoke", "n2", "Failed")])
    verdicts = {v.node: (v.verdict, v.reason) for v in sent.node_verdicts}
    assert verdicts["n2"][0] == "Failed"
    assert verdicts["n1"] == ("NotJudged", "never ran: burn")
    assert decode(encode(sent)) == sent  # the additive field round-trips strictly


def test_node_verdict_envelopes_carry_them_only_when_terminal_and_planned() -> None:
    assert envelope("Running", [result("smoke", "n1", "Passed")]).node_verdicts == ()
    unplanned = build_envelope(
        run("Passed", []), reason=REASON_RUN_PHASE_CHANGED, event_key="Passed",
        sent_at=datetime(2026, 12, 2, tzinfo=UTC), baseline=False,
    )  # fmt: skip
    assert unplanned.node_verdicts == () and "nodeVerdicts" not in encode(unplanned).decode()


def test_node_verdict_a_simulated_node_reads_simulated_in_the_envelope_and_metrics() -> None:
    results = [result(t, n, "Passed", "sim") for t in ("smoke", "burn") for n in ("n1", "n2")]
    sent = envelope("Passed", results)
    assert {v.verdict for v in sent.node_verdicts} == {"Simulated"}
    registry = CollectorRegistry()
    exporter = RunExporter().register(registry)
    exporter.observe(sent)
    labels = {"namespace": "lab", "run": "accept", "node": "n1", "verdict": "Simulated"}
    assert registry.get_sample_value("burnin_node_verdict", labels) == 1.0
    passed = {**labels, "verdict": "Passed"}
    assert registry.get_sample_value("burnin_node_verdict", passed) is None
