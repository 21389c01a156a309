"""The BurnInRun controller's ``glimmer_run_*`` metric families.

They live on the manager's registry (``EngineMetrics.registry``) beside the engine's
families, but are declared here: the engine knows nothing of runs. The phases are
``glimmer.verdict``'s, the one list of them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any, Final

from prometheus_client import CollectorRegistry, Gauge

from glimmer.controllers.kit.view import RunView
from glimmer.verdict import Phase

RUN_PHASES: Final = tuple(str(p) for p in Phase)


class RunMetrics:
    """Per run: its phase (1 for the current one, 0 for the others) and result counts;
    per node: the phase of each settled or open result. Series are dropped when the
    run is deleted, so labels stay bounded by the runs that exist.
    """

    def __init__(self, registry: CollectorRegistry) -> None:
        self.run_phase = Gauge(
            "glimmer_run_phase",
            "1 for the BurnInRun's current phase, 0 for the others",
            ["namespace", "run", "phase"],
            registry=registry,
        )
        self.run_results = Gauge(
            "glimmer_run_results",
            "Results of a BurnInRun per phase",
            ["namespace", "run", "phase"],
            registry=registry,
        )
        self.node_verdict = Gauge(
            "glimmer_run_node_verdict",
            "1 per (test, node) result of a BurnInRun, labelled with its phase",
            ["namespace", "run", "test", "node", "phase"],
            registry=registry,
        )
        self._node_series: dict[tuple[str, str], set[tuple[str, ...]]] = {}

    def observe(self, *, namespace: str, run: str, phase: str,
                results: list[tuple[str, str, str]]) -> None:  # fmt: skip
        """``results`` = (test, node, phase) for each result node."""
        for candidate in RUN_PHASES:
            self.run_phase.labels(namespace, run, candidate).set(1 if candidate == phase else 0)
        tally = dict.fromkeys(RUN_PHASES, 0)
        for _, _, result_phase in results:
            if result_phase in tally:
                tally[result_phase] += 1
        for candidate, value in tally.items():
            self.run_results.labels(namespace, run, candidate).set(value)
        wanted: set[tuple[str, ...]] = {
            (namespace, run, test, node, p) for test, node, p in results
        }
        for stale in self._node_series.get((namespace, run), set()) - wanted:
            self.node_verdict.remove(*stale)
        for labels in wanted:
            self.node_verdict.labels(*labels).set(1)
        self._node_series[(namespace, run)] = wanted

    def observe_run(self, run: Mapping[str, Any]) -> None:
        """Observe a run object as last written."""
        view = RunView(dict(run))  # a shallow copy: a view only reads here
        results = [
            (str(r.get("name", "")), str(node), str(r.get("phase", "")))
            for r in view.results
            for node in r.get("nodes") or [""]
        ]
        self.observe(
            namespace=view.namespace,
            run=view.name,
            phase=str(view.phase_text or Phase.PENDING),
            results=results,
        )

    def forget(self, namespace: str, run: str) -> None:
        for candidate in RUN_PHASES:
            for gauge in (self.run_phase, self.run_results):
                with contextlib.suppress(KeyError):
                    gauge.remove(namespace, run, candidate)
        for labels in self._node_series.pop((namespace, run), set()):
            self.node_verdict.remove(*labels)
