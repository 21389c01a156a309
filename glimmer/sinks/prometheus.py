"""The Prometheus sink (L8): each envelope observed into the manager's ``/metrics``.

A selector, not a destination: delivery is an in-memory observation that always
succeeds. The exporter is a custom collector that builds its families at scrape time
from the last envelope of each run, so a run's old series (a phase it left, a result
it no longer has, a run deleted or evicted) simply stop being yielded; nothing can be
left behind at 1 forever.

Only registered metrics become series (an unregistered name is unbounded label input
for the Prometheus server), only finite numbers, and a metric is attributed to a node
only when its result has exactly one node (a Group's bus bandwidth is the set's, and
copying it onto eight nodes would let a dashboard sum it eight times). At most 128
runs are held, least recently observed evicted first; the exporter's own counters say
when that happens.

``burnin_exporter_metrics_dropped_total`` counts only what a user should look into
(L10): an Acceptance metric that is not a number, or any registered metric that is
NaN or infinite. A healthy run prints unregistered keys and text Evidence
(``driverVersion``, ``gpuName``) all the time; those are not series by design, and
counting them as drops would make the counter climb on every healthy run.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector, CollectorRegistry

from glimmer.contract import REGISTRY, ThresholdUse, parse_go_float
from glimmer.contract.envelope import Envelope, parse_time
from glimmer.verdict import Phase

#: Runs held at once (LRU by last observation).
MAX_RUNS: Final = 128
#: Every phase burnin_run_phase and burnin_run_tests enumerate (an unknown observed
#: phase is exported too: a newer controller's phase is information, not noise).
PHASES: Final = tuple(str(p) for p in Phase)
#: Why a registered metric was not exposed, each worth a look (L10): ``non_numeric``
#: an Acceptance metric whose value is no number, ``non_finite`` NaN or an infinity.
DROP_REASONS: Final = ("non_numeric", "non_finite")

_TEST_LABELS: Final = ("namespace", "run", "test", "kind", "scope", "node")


@dataclass(frozen=True)
class _Sample:
    family: str
    labels: tuple[str, ...]
    value: float


def _seconds(text: str) -> float | None:
    if not text:
        return None
    try:
        return parse_time(text).timestamp()
    except ValueError:
        return None


class RunExporter(Collector):
    """``burnin_*`` families from observed envelopes; register once per registry."""

    def __init__(self, *, max_runs: int = MAX_RUNS) -> None:
        self._max_runs = max(1, max_runs)
        self._lock = threading.Lock()
        self._runs: OrderedDict[tuple[str, str], tuple[_Sample, ...]] = OrderedDict()
        self._evicted = 0
        self._dropped = dict.fromkeys(DROP_REASONS, 0)

    def register(self, registry: CollectorRegistry) -> RunExporter:
        registry.register(self)
        return self

    # --- observation -------------------------------------------------------------

    def observe(self, envelope: Envelope) -> None:
        """Replace the run's series with what ``envelope`` (cumulative) says."""
        run = envelope.run
        if not run.name:
            return
        samples = self._samples(envelope)
        key = (run.namespace, run.name)
        with self._lock:
            self._runs[key] = samples
            self._runs.move_to_end(key)
            while len(self._runs) > self._max_runs:
                self._runs.popitem(last=False)
                self._evicted += 1

    def forget(self, namespace: str, name: str) -> None:
        """The run is gone (deleted, TTL): its series go with it (E20)."""
        with self._lock:
            self._runs.pop((namespace, name), None)

    @property
    def tracked(self) -> list[tuple[str, str]]:
        with self._lock:
            return sorted(self._runs)

    def _drop(self, reason: str) -> None:
        with self._lock:
            self._dropped[reason] += 1

    def _samples(self, envelope: Envelope) -> tuple[_Sample, ...]:
        ns, name, profile = envelope.run.namespace, envelope.run.name, envelope.run.profile
        out: list[_Sample] = []
        phases = list(PHASES)
        if envelope.phase and envelope.phase not in PHASES:
            phases.append(envelope.phase)
        for phase in phases:
            out.append(_Sample("burnin_run_phase", (ns, name, profile, phase),
                               1.0 if phase == envelope.phase else 0.0))  # fmt: skip
        counts: dict[str, int] = dict.fromkeys(PHASES, 0)
        for result in envelope.results:
            counts[result.phase] = counts.get(result.phase, 0) + 1
        for phase, n in counts.items():
            out.append(_Sample("burnin_run_tests", (ns, name, phase), float(n)))
        starts = [s for r in envelope.results if (s := _seconds(r.started_at)) is not None]
        if starts:
            out.append(_Sample("burnin_run_start_time_seconds", (ns, name), min(starts)))
        if Phase.is_terminal_text(envelope.phase):
            ends = [f for r in envelope.results if (f := _seconds(r.finished_at)) is not None]
            if ends:
                out.append(_Sample("burnin_run_finish_time_seconds", (ns, name), max(ends)))
        for result in envelope.results:
            for node in result.nodes or ("",):
                out.append(_Sample("burnin_test_phase", (ns, name, result.name, result.kind,
                                   result.scope, node, result.phase), 1.0))  # fmt: skip
            metric_node = result.nodes[0] if len(result.nodes) == 1 else ""
            for metric in sorted(result.metrics):
                spec = REGISTRY.get(metric)
                if spec is None:
                    continue  # a runner's own key: expected, never a series
                value = parse_go_float(result.metrics[metric].strip())
                if value is None:
                    if spec.use is ThresholdUse.ACCEPTANCE:
                        self._drop("non_numeric")
                    continue  # text Evidence (a driver version): expected
                if not math.isfinite(value):
                    self._drop("non_finite")
                    continue
                labels = (ns, name, result.name, result.kind, result.scope, metric_node,
                          metric, spec.unit, str(spec.use))  # fmt: skip
                out.append(_Sample("burnin_test_metric", labels, value))
        for verdict in envelope.node_verdicts:
            out.append(
                _Sample("burnin_node_verdict", (ns, name, verdict.node, verdict.verdict), 1.0)
            )
        return tuple(out)

    # --- scrape ------------------------------------------------------------------

    def collect(self) -> Iterator[Metric]:
        with self._lock:
            runs = [s for samples in self._runs.values() for s in samples]
            tracked, evicted, dropped = len(self._runs), self._evicted, dict(self._dropped)
        families = {
            "burnin_run_phase": GaugeMetricFamily(
                "burnin_run_phase",
                "Current phase of a BurnInRun: 1 for the phase it is in, 0 for the others. "
                "Error means the hardware was not judged; it is never folded into Failed.",
                labels=["namespace", "run", "profile", "phase"],
            ),
            "burnin_run_tests": GaugeMetricFamily(
                "burnin_run_tests",
                "Recorded results of a run by phase, in per-(test, node) executions.",
                labels=["namespace", "run", "phase"],
            ),
            "burnin_run_start_time_seconds": GaugeMetricFamily(
                "burnin_run_start_time_seconds",
                "Unix time the run's earliest recorded execution began.",
                labels=["namespace", "run"],
            ),
            "burnin_run_finish_time_seconds": GaugeMetricFamily(
                "burnin_run_finish_time_seconds",
                "Unix time the run's last recorded execution ended; only once terminal.",
                labels=["namespace", "run"],
            ),
            "burnin_test_phase": GaugeMetricFamily(
                "burnin_test_phase",
                "Outcome of one test on one node: always 1, the outcome in the phase label.",
                labels=[*_TEST_LABELS, "phase"],
            ),
            "burnin_node_verdict": GaugeMetricFamily(
                "burnin_node_verdict",
                "What a finished run established about each target node: always 1, the "
                "verdict in its label (Passed, Failed, Simulated, NotJudged). Only Passed "
                "means every required test of the plan Passed on silicon on that node.",
                labels=["namespace", "run", "node", "verdict"],
            ),
            "burnin_test_metric": GaugeMetricFamily(
                "burnin_test_metric",
                "A registered, finite runner metric; node is set only for single-node "
                "results; threshold_use=Evidence must not decide acceptance.",
                labels=[*_TEST_LABELS, "metric", "unit", "threshold_use"],
            ),
        }
        for sample in runs:
            families[sample.family].add_metric(list(sample.labels), sample.value)
        yield from families.values()
        yield GaugeMetricFamily(
            "burnin_exporter_runs_tracked",
            "Runs this exporter currently holds series for.",
            value=float(tracked),
        )
        yield CounterMetricFamily(
            "burnin_exporter_runs_evicted",
            "Runs whose series were dropped because the exporter hit its run limit.",
            value=float(evicted),
        )
        drops = CounterMetricFamily(
            "burnin_exporter_metrics_dropped",
            "Registered runner metrics not exposed that are worth a look, by reason: "
            "non_numeric (an Acceptance metric that is not a number), non_finite (NaN or "
            "an infinity). Unregistered keys and text Evidence are expected, not counted.",
            labels=["reason"],
        )
        for reason in DROP_REASONS:
            drops.add_metric([reason], float(dropped[reason]))
        yield drops
