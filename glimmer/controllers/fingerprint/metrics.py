"""``glimmer_node_verdict``: each node's verdict state, for alerting and dashboards.

One series per node (``state`` is the node label's value), so ``sum by (state)`` counts
the fleet and ``glimmer_node_verdict{state="Expired"} == 1`` names the nodes to
re-qualify. A collector over the reconciler's last word per node, registered once on the
manager's registry (as the sink exporter is); a node whose fingerprint pass finds it
gone is forgotten.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector, CollectorRegistry

VERDICT_METRIC = "glimmer_node_verdict"


class VerdictMetrics(Collector):
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._states: dict[str, str] = {}

    def register(self, registry: CollectorRegistry) -> VerdictMetrics:
        registry.register(self)
        return self

    def observe(self, node: str, state: str) -> None:
        with self._lock:
            self._states[node] = state

    def forget(self, node: str) -> None:
        with self._lock:
            self._states.pop(node, None)

    def state(self, node: str) -> str | None:
        with self._lock:
            return self._states.get(node)

    def collect(self) -> Iterator[Metric]:
        family = GaugeMetricFamily(
            VERDICT_METRIC,
            "1 for each node's acceptance verdict state: Passed or Failed (current), "
            "Simulated (passed only on the simulated GPU: proves the plumbing, certifies "
            "nothing), Expired (hardware changed or too old), Missing (never judged).",
            labels=["node", "state"],
        )
        with self._lock:
            states = sorted(self._states.items())
        for node, state in states:
            family.add_metric([node, state], 1.0)
        yield family
