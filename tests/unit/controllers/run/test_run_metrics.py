"""Per-run and per-node verdict series appear, follow the run, and go with it."""

from __future__ import annotations

from prometheus_client import CollectorRegistry

from glimmer.controllers.run.metrics import RunMetrics


def sample(registry: CollectorRegistry, name: str, **labels: str) -> float | None:
    return registry.get_sample_value(name, labels)


def test_run_series_track_the_phase_and_are_forgotten_with_the_run() -> None:
    registry = CollectorRegistry()
    metrics = RunMetrics(registry)
    metrics.observe(
        namespace="ns",
        run="r",
        phase="Running",
        results=[("t", "n0", "Running"), ("t", "n1", "Failed")],
    )
    assert sample(registry, "glimmer_run_phase", namespace="ns", run="r", phase="Running") == 1
    assert sample(registry, "glimmer_run_phase", namespace="ns", run="r", phase="Passed") == 0
    assert sample(registry, "glimmer_run_results", namespace="ns", run="r", phase="Failed") == 1
    metrics.observe(
        namespace="ns",
        run="r",
        phase="Failed",
        results=[("t", "n0", "Passed"), ("t", "n1", "Failed")],
    )
    labels = {"namespace": "ns", "run": "r", "test": "t", "node": "n0"}
    assert sample(registry, "glimmer_run_node_verdict", **labels, phase="Running") is None
    assert sample(registry, "glimmer_run_node_verdict", **labels, phase="Passed") == 1
    metrics.forget("ns", "r")
    assert sample(registry, "glimmer_run_phase", namespace="ns", run="r", phase="Failed") is None
    assert sample(registry, "glimmer_run_node_verdict", **labels, phase="Passed") is None
