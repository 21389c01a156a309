"""What ``/metrics`` serves, scraped as Prometheus would (L9): the runtime collectors a
controller-runtime user expects, no ``*_created`` series, and one family per fact."""

from __future__ import annotations

from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from glimmer.controllers.operator import operator_registrations
from glimmer.controllers.run.context import RunOptions
from glimmer.engine import FakeClient, FakeClock, Manager, ManagerOptions

#: A fact a run's state gives and every family that has ever served it; exactly one of
#: each may be on ``/metrics`` (the operator's ``glimmer_run_*`` copies are gone).
FACTS: dict[str, frozenset[str]] = {
    "a run's phase": frozenset({"burnin_run_phase", "glimmer_run_phase"}),
    "a run's results per phase": frozenset({"burnin_run_tests", "glimmer_run_results"}),
    "one result's phase per node": frozenset({"burnin_test_phase", "glimmer_run_node_verdict"}),
}


def scrape() -> tuple[str, list[str]]:
    """The exposition text of the manager the operator wires, and its family names."""
    manager = Manager(
        FakeClient(),
        options=ManagerOptions(
            leader_elect=False, metrics_bind_address="0", health_probe_bind_address="0"
        ),
        clock=FakeClock(),
    )
    for registration in operator_registrations(
        manager=manager,
        options=RunOptions(operator_namespace="glimmer-system"),
        served_namespaces=None,
    ):
        manager.add_controller(registration)
    manager.metrics.reconcile_total.labels(controller="x", result="success").inc()
    manager.metrics.reconcile_time.labels(controller="x").observe(0.1)
    text = generate_latest(manager.metrics.registry).decode()
    families = [line.split()[2] for line in text.splitlines() if line.startswith("# TYPE ")]
    return text, families


def test_L9_the_process_and_python_gc_collectors_are_served() -> None:
    text, families = scrape()
    expected = (
        "process_cpu_seconds_total",
        "process_resident_memory_bytes",
        "process_open_fds",
        "python_gc_objects_collected_total",
        "python_info",
    )
    for family in expected:
        assert family in families, family
    samples = {s.name for f in text_string_to_metric_families(text) for s in f.samples}
    assert "process_cpu_seconds_total" in samples


def test_L9_no_created_series() -> None:
    text, families = scrape()
    samples = [s.name for f in text_string_to_metric_families(text) for s in f.samples]
    assert "controller_runtime_reconcile_total" in samples
    assert [name for name in samples if name.endswith("_created")] == []
    assert [name for name in families if name.endswith("_created")] == []


def test_L9_one_family_per_fact_and_no_family_twice() -> None:
    _, families = scrape()
    assert len(families) == len(set(families))
    for fact, candidates in FACTS.items():
        assert len(candidates & set(families)) == 1, (fact, sorted(candidates & set(families)))
    assert [name for name in families if name.startswith("glimmer_run_")] == []
