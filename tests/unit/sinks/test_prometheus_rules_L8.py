"""The burnin_* exporter (L8): names, labels, registered and finite only, LRU, forget."""

from __future__ import annotations

from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from glimmer.contract.envelope import Envelope, RunRef, TestResult
from glimmer.engine import EngineMetrics
from glimmer.sinks import RunExporter

FAMILIES = {
    "burnin_run_phase": ["namespace", "run", "profile", "phase"],
    "burnin_run_tests": ["namespace", "run", "phase"],
    "burnin_run_start_time_seconds": ["namespace", "run"],
    "burnin_run_finish_time_seconds": ["namespace", "run"],
    "burnin_test_phase": ["namespace", "run", "test", "kind", "scope", "node", "phase"],
    "burnin_test_metric": [
        "namespace", "run", "test", "kind", "scope", "node", "metric", "unit", "threshold_use",
    ],
}  # fmt: skip


def envelope(name: str = "r", phase: str = "Passed", **result: object) -> Envelope:
    base = TestResult(
        name="burn", kind="gpu-burn", scope="Node", phase="Passed", nodes=("n1",),
        started_at="2026-12-01T11:00:00Z", finished_at="2026-12-01T11:10:00Z",
        metrics={"gpuTempC": "71", "throughputTflops": "9.5", "myCounter": "1",
                 "powerDrawW": "n/a", "miscompares": "NaN", "eccErrors": "+Inf",
                 "driverVersion": "550.54.15"},
    )  # fmt: skip
    group = TestResult(name="nccl", kind="nccl", scope="Group", phase="Failed",
                       nodes=("n1", "n2"), metrics={"busBandwidthGBs": "180"})  # fmt: skip
    return Envelope(
        delivery_id="d", reason="RunPhaseChanged", sent_at="2026-12-01T12:00:00Z",
        run=RunRef(namespace="ns", name=name, uid="u", profile="prof"), phase=phase,
        results=(base, group, TestResult(name="resolve", kind="", phase="Error")),
    )  # fmt: skip


def samples(registry: object) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    text = generate_latest(registry).decode()  # type: ignore[arg-type]  # any registry
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def value(got: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str,
          **labels: str) -> float | None:  # fmt: skip
    return got.get((name, tuple(sorted(labels.items()))))


def test_L8_families_have_exactly_the_reference_names_and_labels() -> None:
    metrics = EngineMetrics()
    exporter = RunExporter().register(metrics.registry)
    exporter.observe(envelope())
    got = samples(metrics.registry)
    for name, labels in FAMILIES.items():
        seen = [dict(lbl) for (n, lbl) in got if n == name]
        assert seen, name
        assert all(sorted(s) == sorted(labels) for s in seen), (name, seen)
    run = {"namespace": "ns", "run": "r"}
    assert value(got, "burnin_run_phase", **run, profile="prof", phase="Passed") == 1
    for other in ("Pending", "Running", "Failed", "Error", "Skipped", "Cancelled"):
        assert value(got, "burnin_run_phase", **run, profile="prof", phase=other) == 0
    assert value(got, "burnin_run_tests", **run, phase="Failed") == 1
    assert value(got, "burnin_run_tests", **run, phase="Error") == 1
    assert value(got, "burnin_run_tests", **run, phase="Skipped") == 0
    assert value(got, "burnin_run_start_time_seconds", **run) == 1796122800.0
    assert value(got, "burnin_run_finish_time_seconds", **run) == 1796123400.0
    # Every node of a Group result is marked; a node-less result is still visible.
    for node in ("n1", "n2"):
        assert value(got, "burnin_test_phase", **run, test="nccl", kind="nccl",
                     scope="Group", node=node, phase="Failed") == 1  # fmt: skip
    assert value(got, "burnin_test_phase", **run, test="resolve", kind="", scope="",
                 node="", phase="Error") == 1  # fmt: skip
    # The engine's own families are served unchanged beside them.
    text = generate_latest(metrics.registry).decode()
    assert "# TYPE workqueue_depth gauge" in text
    assert "# TYPE controller_runtime_reconcile_total counter" in text


def test_L8_only_registered_finite_metrics_and_node_only_for_one_node() -> None:
    metrics = EngineMetrics()
    exporter = RunExporter().register(metrics.registry)
    exporter.observe(envelope())
    got = samples(metrics.registry)
    exposed = {dict(lbl)["metric"]: dict(lbl) for (n, lbl) in got if n == "burnin_test_metric"}
    assert set(exposed) == {"gpuTempC", "throughputTflops", "busBandwidthGBs"}
    assert exposed["gpuTempC"]["node"] == "n1" and exposed["gpuTempC"]["unit"] == "C"
    assert exposed["gpuTempC"]["threshold_use"] == "Acceptance"
    assert exposed["throughputTflops"]["threshold_use"] == "Evidence"
    assert exposed["busBandwidthGBs"]["node"] == ""  # a Group's figure is the set's
    dropped = "burnin_exporter_metrics_dropped_total"
    assert value(got, dropped, reason="non_numeric") == 1  # n/a on an Acceptance metric
    assert value(got, dropped, reason="non_finite") == 2  # NaN, +Inf


def test_L10_a_healthy_runs_own_keys_and_text_evidence_are_not_drops() -> None:
    """myCounter (unregistered) and driverVersion (text Evidence) are what every healthy
    run prints: no series, and no drop a user would be paged for."""
    metrics = EngineMetrics()
    exporter = RunExporter().register(metrics.registry)
    healthy = TestResult(
        name="burn", kind="gpu-burn", scope="Node", phase="Passed", nodes=("n1",),
        metrics={"gpuTempC": "71", "myCounter": "1", "driverVersion": "550.54.15",
                 "gpuName": "NVIDIA H100 80GB HBM3"},
    )  # fmt: skip
    exporter.observe(
        Envelope(
            delivery_id="d",
            reason="RunPhaseChanged",
            sent_at="2026-12-01T12:00:00Z",
            run=RunRef(namespace="ns", name="ok", uid="u", profile="prof"),
            phase="Passed",
            results=(healthy,),
        )
    )
    got = samples(metrics.registry)
    dropped = {dict(lbl)["reason"]: v for (n, lbl), v in got.items()
               if n == "burnin_exporter_metrics_dropped_total"}  # fmt: skip
    assert dropped == {"non_numeric": 0, "non_finite": 0}
    exposed = {dict(lbl)["metric"] for (n, lbl) in got if n == "burnin_test_metric"}
    assert exposed == {"gpuTempC"}


def test_L8_finish_time_only_once_terminal_and_a_phase_change_leaves_no_stale_series() -> None:
    metrics = EngineMetrics()
    exporter = RunExporter().register(metrics.registry)
    exporter.observe(envelope(phase="Running"))
    got = samples(metrics.registry)
    assert value(got, "burnin_run_finish_time_seconds", namespace="ns", run="r") is None
    assert value(got, "burnin_run_phase", namespace="ns", run="r", profile="prof",
                 phase="Running") == 1  # fmt: skip
    exporter.observe(envelope(phase="Failed"))
    got = samples(metrics.registry)
    assert value(got, "burnin_run_phase", namespace="ns", run="r", profile="prof",
                 phase="Running") == 0  # fmt: skip
    assert value(got, "burnin_run_finish_time_seconds", namespace="ns", run="r") is not None


def test_L8_at_most_128_runs_least_recently_observed_evicted_and_counted() -> None:
    metrics = EngineMetrics()
    exporter = RunExporter().register(metrics.registry)
    for i in range(130):
        exporter.observe(envelope(name=f"r{i}"))
    exporter.observe(envelope(name="r2"))  # refreshed: r3 is now the oldest
    exporter.observe(envelope(name="late"))
    got = samples(metrics.registry)
    assert value(got, "burnin_exporter_runs_tracked") == 128
    assert value(got, "burnin_exporter_runs_evicted_total") == 3
    tracked = {name for _, name in exporter.tracked}
    assert {"r0", "r1", "r3"}.isdisjoint(tracked) and {"r2", "late", "r129"} <= tracked


def test_E20_L8_series_are_dropped_when_the_run_is_forgotten() -> None:
    metrics = EngineMetrics()
    exporter = RunExporter().register(metrics.registry)
    exporter.observe(envelope(name="gone"))
    exporter.observe(envelope(name="kept"))
    exporter.forget("ns", "gone")
    got = samples(metrics.registry)
    runs = {dict(lbl).get("run") for (n, lbl) in got if n.startswith("burnin_run")}
    assert runs == {"kept"}
    assert value(got, "burnin_exporter_runs_tracked") == 1
