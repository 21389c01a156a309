"""Every metric the engine exports, declared once.

Names and labels copy client-go's workqueue metrics and controller-runtime's
reconcile metrics, so the dashboards and alerts operators already have for Go
controllers work on Glimmer unchanged. The `glimmer_*` families are ours.

All families live on one `CollectorRegistry` owned by an `EngineMetrics`
instance rather than on prometheus-client's global registry: a test can build
several managers in one process without "duplicated timeseries" errors, and
`/metrics` serves exactly what this manager registered. Controllers add their own
families to the same registry (``EngineMetrics.registry``); the engine declares none
of theirs.

As a controller-runtime manager does, the registry also carries the standard
``process_*``, ``python_gc_*`` and ``python_info`` collectors, and no ``*_created``
series: controller-runtime serves none, and each counter's and histogram's ``_created``
child would double the families a dashboard author has to read past. prometheus-client
keeps that switch process-wide; importing this module turns it off (L9).
"""

from __future__ import annotations

from collections.abc import Callable

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    GCCollector,
    Histogram,
    PlatformCollector,
    ProcessCollector,
    disable_created_metrics,
)

# prometheus-client leaves this one unannotated; its signature is () -> None.
_disable_created: Callable[[], None] = disable_created_metrics
_disable_created()

# client-go: ExponentialBuckets(10e-9, 10, 10), i.e. 10 ns .. 10 s.
_WORKQUEUE_BUCKETS = tuple(1e-8 * 10**i for i in range(10))
# controller-runtime's reconcile_time_seconds buckets.
_RECONCILE_BUCKETS = (
    0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7,
    0.8, 0.9, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 6.0, 7.0, 8.0, 9.0,
    10.0, 15.0, 20.0, 25.0, 30.0, 40.0, 50.0, 60.0,
)  # fmt: skip

RECONCILE_RESULTS = ("success", "error", "requeue", "requeue_after")


def register_runtime_collectors(registry: CollectorRegistry) -> None:
    """The process, GC and platform collectors every Prometheus client exports (L9)."""
    ProcessCollector(registry=registry)
    GCCollector(registry=registry)
    PlatformCollector(registry=registry)


class EngineMetrics:
    """The engine's metric families on a registry of their own."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        r = self.registry
        register_runtime_collectors(r)
        # --- client-go workqueue ---
        self.workqueue_depth = Gauge(
            "workqueue_depth", "Current depth of workqueue", ["name"], registry=r
        )
        self.workqueue_adds = Counter(
            "workqueue_adds_total", "Total number of adds handled by workqueue", ["name"],
            registry=r,
        )  # fmt: skip
        self.workqueue_queue_duration = Histogram(
            "workqueue_queue_duration_seconds",
            "How long in seconds an item stays in workqueue before being requested",
            ["name"], buckets=_WORKQUEUE_BUCKETS, registry=r,
        )  # fmt: skip
        self.workqueue_work_duration = Histogram(
            "workqueue_work_duration_seconds",
            "How long in seconds processing an item from workqueue takes",
            ["name"], buckets=_WORKQUEUE_BUCKETS, registry=r,
        )  # fmt: skip
        self.workqueue_retries = Counter(
            "workqueue_retries_total", "Total number of retries handled by workqueue", ["name"],
            registry=r,
        )  # fmt: skip
        self.workqueue_unfinished_work = Gauge(
            "workqueue_unfinished_work_seconds",
            "How many seconds of work has been done that is in progress and hasn't been "
            "observed by work_duration. Large values indicate stuck threads.",
            ["name"], registry=r,
        )  # fmt: skip
        self.workqueue_longest_running = Gauge(
            "workqueue_longest_running_processor_seconds",
            "How many seconds has the longest running processor for workqueue been running.",
            ["name"], registry=r,
        )  # fmt: skip
        # --- controller-runtime reconcile ---
        self.reconcile_total = Counter(
            "controller_runtime_reconcile_total",
            "Total number of reconciliations per controller", ["controller", "result"],
            registry=r,
        )  # fmt: skip
        self.reconcile_errors = Counter(
            "controller_runtime_reconcile_errors_total",
            "Total number of reconciliation errors per controller", ["controller"], registry=r,
        )  # fmt: skip
        self.reconcile_time = Histogram(
            "controller_runtime_reconcile_time_seconds",
            "Length of time per reconciliation per controller", ["controller"],
            buckets=_RECONCILE_BUCKETS, registry=r,
        )  # fmt: skip
        self.active_workers = Gauge(
            "controller_runtime_active_workers",
            "Number of currently used workers per controller", ["controller"], registry=r,
        )  # fmt: skip
        self.max_concurrent_reconciles = Gauge(
            "controller_runtime_max_concurrent_reconciles",
            "Maximum number of concurrent reconciles per controller", ["controller"], registry=r,
        )  # fmt: skip
        # --- glimmer ---
        self.build_info = Gauge(
            "glimmer_build_info", "Glimmer build information (always 1)", ["version"], registry=r
        )
        self.leader_election_status = Gauge(
            "glimmer_leader_election_status",
            "1 while this manager holds the named lease, else 0", ["name"], registry=r,
        )  # fmt: skip
        self.informer_synced = Gauge(
            "glimmer_informer_synced",
            "1 once the informer's cache holds a complete list", ["resource"], registry=r,
        )  # fmt: skip
        self.informer_lists = Counter(
            "glimmer_informer_lists_total",
            "Full lists performed by an informer (initial list and every relist)",
            ["resource"], registry=r,
        )  # fmt: skip
        self.informer_watch_errors = Counter(
            "glimmer_informer_watch_errors_total",
            "Watch streams that ended in an error, by reason", ["resource", "reason"],
            registry=r,
        )  # fmt: skip
        self.informer_events = Counter(
            "glimmer_informer_events_total", "Watch events ingested", ["resource", "type"],
            registry=r,
        )  # fmt: skip
        self.api_requests = Counter(
            "glimmer_apiserver_requests_total", "Requests to the apiserver by verb and HTTP code",
            ["verb", "code"], registry=r,
        )  # fmt: skip

    def queue(self, name: str) -> QueueMetrics:
        """The workqueue families bound to one queue's `name` label."""
        return QueueMetrics(self, name)


class QueueMetrics:
    """One workqueue's children of the `workqueue_*` families."""

    def __init__(self, metrics: EngineMetrics, name: str) -> None:
        self.depth = metrics.workqueue_depth.labels(name=name)
        self.adds = metrics.workqueue_adds.labels(name=name)
        self.queue_duration = metrics.workqueue_queue_duration.labels(name=name)
        self.work_duration = metrics.workqueue_work_duration.labels(name=name)
        self.retries = metrics.workqueue_retries.labels(name=name)
        self._unfinished = metrics.workqueue_unfinished_work.labels(name=name)
        self._longest = metrics.workqueue_longest_running.labels(name=name)

    def bind_in_flight(
        self, *, unfinished: Callable[[], float], longest: Callable[[], float]
    ) -> None:
        """Compute the in-flight gauges at scrape time from the queue's own clock."""
        self._unfinished.set_function(unfinished)
        self._longest.set_function(longest)
