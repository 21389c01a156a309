"""The Grafana dashboard (manifests/grafana/glimmer.json) queries only what the manager
exports: every PromQL expression is tokenised, each metric name must be a series the
manager serves, and each label it matches or groups by must be one of that series'.

The engine's families, the runtime collectors and the node-verdict gauge are read from
what they serve; the Prometheus sink's ``burnin_*`` families (semantics L8) from
:data:`BURNIN_FAMILIES`, which a test holds equal to what the exporter
(glimmer.sinks.prometheus) serves. The dashboard must also work without a Prometheus
BurnInSink (L9): a panel fed by ``burnin_*`` says so, and the fleet panel reads only
what the operator itself serves.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import CollectorRegistry
from prometheus_client.metrics import MetricWrapperBase

from glimmer.controllers.fingerprint import VERDICT_METRIC, VerdictMetrics
from glimmer.engine.metrics import EngineMetrics, register_runtime_collectors

REPO = Path(__file__).resolve().parents[2]
DASHBOARD = REPO / "manifests" / "grafana" / "glimmer.json"
CHART_COPY = REPO / "charts" / "glimmer" / "dashboards" / "glimmer.json"

#: semantics L8: the Prometheus sink's series and their labels.
BURNIN_FAMILIES: dict[str, frozenset[str]] = {
    "burnin_run_phase": frozenset({"namespace", "run", "profile", "phase"}),
    "burnin_run_tests": frozenset({"namespace", "run", "phase"}),
    "burnin_run_start_time_seconds": frozenset({"namespace", "run"}),
    "burnin_run_finish_time_seconds": frozenset({"namespace", "run"}),
    "burnin_test_phase": frozenset({"namespace", "run", "test", "kind", "scope", "node", "phase"}),
    "burnin_test_metric": frozenset(
        {"namespace", "run", "test", "kind", "scope", "node", "metric", "unit", "threshold_use"}
    ),
    "burnin_exporter_runs_tracked": frozenset(),
    "burnin_exporter_runs_evicted_total": frozenset(),
    "burnin_exporter_metrics_dropped_total": frozenset({"reason"}),
}

#: Labels Prometheus adds to every scraped series (a ServiceMonitor's target labels).
TARGET_LABELS = frozenset({"job", "instance", "pod", "service", "endpoint", "container"})

FUNCTIONS = frozenset(
    {
        "abs", "absent", "absent_over_time", "avg_over_time", "ceil", "changes", "clamp",
        "clamp_max", "clamp_min", "count_over_time", "delta", "deriv", "exp", "floor",
        "histogram_quantile", "idelta", "increase", "irate", "label_replace", "label_join",
        "last_over_time", "max_over_time", "min_over_time", "predict_linear", "rate",
        "resets", "round", "scalar", "sort", "sort_desc", "sqrt", "sum_over_time", "time",
        "timestamp", "vector",
    }
)  # fmt: skip
AGGREGATIONS = frozenset(
    {"sum", "min", "max", "avg", "count", "stddev", "stdvar", "topk", "bottomk", "quantile",
     "count_values", "group"}
)  # fmt: skip
GROUPING = frozenset({"by", "without", "on", "ignoring", "group_left", "group_right"})
OPERATOR_WORDS = frozenset({"and", "or", "unless", "bool", "offset", "atan2"})

_TOKEN = re.compile(
    r"""(?P<space>\s+)
      | (?P<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')
      | (?P<range>\[[^\]]*\])
      | (?P<number>\d+(?:\.\d+)?(?:e[+-]?\d+)?)
      | (?P<ident>[A-Za-z_:][A-Za-z0-9_:]*)
      | (?P<matchop>=~|!~|!=|==|<=|>=|=)
      | (?P<punct>[(){},+\-*/%^<>])
    """,
    re.VERBOSE,
)


def exported() -> dict[str, frozenset[str]]:
    """Every series name the manager serves, with its labels (counters as ``_total``,
    histograms as ``_bucket``/``_sum``/``_count``; ``le`` only on ``_bucket``)."""
    engine = EngineMetrics(CollectorRegistry())
    series: dict[str, frozenset[str]] = dict(BURNIN_FAMILIES)
    collected = CollectorRegistry()
    register_runtime_collectors(collected)
    verdicts = VerdictMetrics().register(collected)
    verdicts.observe("n1", "Passed")
    for family in collected.collect():
        for sample in family.samples:
            series.setdefault(sample.name, frozenset(sample.labels))
    for owner in (engine,):
        for metric in vars(owner).values():
            if not isinstance(metric, MetricWrapperBase):
                continue
            # prometheus-client keeps these as attributes of the wrapper; there is no
            # public accessor for a family's label names.
            name, labels, kind = metric._name, frozenset(metric._labelnames), metric._type
            if kind == "counter":
                series[f"{name}_total"] = labels
            elif kind == "histogram":
                series[f"{name}_bucket"] = labels | {"le"}
                series[f"{name}_sum"] = labels
                series[f"{name}_count"] = labels
            else:
                series[name] = labels
    return series


def tokens(expr: str) -> list[tuple[str, str]]:
    """(kind, text) pairs; anything PromQL does not allow here fails the test."""
    out: list[tuple[str, str]] = []
    position = 0
    while position < len(expr):
        match = _TOKEN.match(expr, position)
        assert match is not None, f"cannot tokenise {expr[position:]!r} in {expr!r}"
        kind = match.lastgroup
        assert kind is not None
        if kind != "space":
            out.append((kind, match.group()))
        position = match.end()
    return out


def selectors(expr: str) -> Iterator[tuple[str, set[str], set[str]]]:
    """(metric name, labels matched, labels grouped by) of every vector selector, the
    grouping labels being those of the enclosing aggregation or binary operator."""
    items = tokens(expr)
    index = 0
    grouping: set[str] = set()
    found: list[tuple[str, set[str]]] = []
    while index < len(items):
        kind, text = items[index]
        following = items[index + 1][1] if index + 1 < len(items) else ""
        if kind == "ident" and text in GROUPING:
            if following == "(":
                close = next(i for i in range(index, len(items)) if items[i][1] == ")")
                grouping |= {t for k, t in items[index + 2 : close] if k == "ident"}
                index = close + 1
            else:
                index += 1  # group_left / group_right without labels
            continue
        if kind == "ident" and text in AGGREGATIONS and following in ("(", "by", "without"):
            index += 1
            continue
        if kind == "ident" and following == "(":
            assert text in FUNCTIONS, f"unknown function {text!r} in {expr!r}"
            index += 1
            continue
        if kind == "ident" and text in OPERATOR_WORDS:
            index += 1
            continue
        if kind == "ident":
            matched: set[str] = set()
            index += 1
            if index < len(items) and items[index][1] == "{":
                close = next(i for i in range(index, len(items)) if items[i][1] == "}")
                inner = items[index + 1 : close]
                for position in range(0, len(inner), 4):
                    label, op, value = inner[position : position + 3]
                    assert label[0] == "ident" and op[0] == "matchop" and value[0] == "string"
                    matched.add(label[1])
                index = close + 1
            found.append((text, matched))
            continue
        assert text != "{", f"a selector without a metric name in {expr!r}"
        index += 1
    for name, matched in found:
        yield name, matched, grouping


def _expressions(dashboard: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """(where, PromQL) for every panel target and every label_values() variable."""
    for panel in dashboard["panels"]:
        for target in panel.get("targets", []):
            yield f"panel {panel['title']!r}", target["expr"]
    for variable in dashboard["templating"]["list"]:
        if variable["type"] != "query":
            continue
        query = variable["query"]["query"]
        match = re.fullmatch(r"label_values\((?P<expr>.+),\s*(?P<label>\w+)\)", query)
        assert match is not None, f"variable {variable['name']}: {query!r}"
        # The label a variable lists must be on the series it lists it from.
        expr = f"max by ({match['label']}) ({match['expr']})"
        yield f"variable {variable['name']!r}", expr


def _without_grafana_variables(expr: str) -> str:
    return expr.replace("$__rate_interval", "5m")


@pytest.fixture(scope="module")
def dashboard() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(DASHBOARD.read_text())
    return loaded


def check(expr: str, series: dict[str, frozenset[str]]) -> list[str]:
    """Every problem with one expression: unknown series, unknown labels."""
    problems: list[str] = []
    names: list[str] = []
    for name, matched, _ in selectors(_without_grafana_variables(expr)):
        names.append(name)
        if name not in series:
            problems.append(f"{name} is not exported by the manager")
            continue
        for label in sorted(matched - series[name] - TARGET_LABELS):
            problems.append(f"{name} has no label {label!r}")
    known = set().union(*(series.get(n, frozenset()) for n in names)) | TARGET_LABELS
    grouped = {g for _, _, gs in selectors(_without_grafana_variables(expr)) for g in gs}
    problems += [f"no series here has label {g!r}" for g in sorted(grouped - known)]
    if not names:
        problems.append("no metric at all")
    return problems


def test_dashboard_queries_only_metrics_the_manager_exports(dashboard: dict[str, Any]) -> None:
    series = exported()
    problems = [
        f"{where}: {problem} in {expr!r}"
        for where, expr in _expressions(dashboard)
        for problem in check(expr, series)
    ]
    assert problems == []


def test_dashboard_covers_the_four_areas_and_every_burnin_family(
    dashboard: dict[str, Any],
) -> None:
    rows = [p["title"] for p in dashboard["panels"] if p["type"] == "row"]
    assert rows == [
        "Fleet verdicts",
        "Per-node results",
        "Delivery and exporter health",
        "Controller health",
    ]
    used = {
        name
        for _, expr in _expressions(dashboard)
        for name, _, _ in selectors(_without_grafana_variables(expr))
    }
    assert set(BURNIN_FAMILIES) <= used, set(BURNIN_FAMILIES) - used
    assert {"controller_runtime_reconcile_total", "workqueue_depth"} <= used


def _series_of(panel: dict[str, Any]) -> set[str]:
    return {
        name
        for target in panel.get("targets", [])
        for name, _, _ in selectors(_without_grafana_variables(target["expr"]))
    }


SINK_FED = "Needs a Prometheus BurnInSink"


def test_L9_every_panel_fed_by_the_sink_says_it_needs_a_burnin_sink(
    dashboard: dict[str, Any],
) -> None:
    """Without a Prometheus BurnInSink the burnin_* series are empty: a reader of a
    blank panel learns why from its description, and an operator-served panel does not
    claim to need one."""
    for panel in dashboard["panels"]:
        if panel["type"] == "row":
            continue
        sink_fed = any(name.startswith("burnin_") for name in _series_of(panel))
        says = panel.get("description", "").startswith(SINK_FED)
        assert sink_fed == says, panel["title"]


def test_L9_the_fleet_panel_counts_nodes_by_verdict_from_operator_served_series(
    dashboard: dict[str, Any],
) -> None:
    panels = dashboard["panels"]
    rows = [i for i, p in enumerate(panels) if p["type"] == "row"]
    fleet_row = panels[rows[0] + 1 : rows[1]]
    (fleet,) = [p for p in fleet_row if p["title"] == "Nodes by verdict"]
    assert fleet["type"] == "stat"
    (expr,) = [t["expr"] for t in fleet["targets"]]
    assert [(name, grouped) for name, _, grouped in selectors(expr)] == [
        (VERDICT_METRIC, {"state"})
    ]
    assert not any(n.startswith("burnin_") for n in _series_of(fleet))


def test_every_panel_reads_the_chosen_data_source(dashboard: dict[str, Any]) -> None:
    for panel in dashboard["panels"]:
        if panel["type"] == "row":
            continue
        assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
        ids = [t["refId"] for t in panel["targets"]]
        assert len(ids) == len(set(ids)), panel["title"]
    assert len({p["id"] for p in dashboard["panels"]}) == len(dashboard["panels"])


def test_chart_ships_the_same_dashboard() -> None:
    assert CHART_COPY.read_bytes() == DASHBOARD.read_bytes(), (
        "cp manifests/grafana/glimmer.json charts/glimmer/dashboards/glimmer.json"
    )


@pytest.mark.parametrize(
    ("expr", "problem"),
    [
        ("sum(burnin_run_verdict)", "burnin_run_verdict is not exported by the manager"),
        ('burnin_run_phase{node="a"}', "burnin_run_phase has no label 'node'"),
        ("sum by (node) (burnin_run_tests)", "no series here has label 'node'"),
        ("rate(controller_runtime_reconcile_total[5m])", None),
        ("rate(controller_runtime_reconcile[5m])", "controller_runtime_reconcile is not"),
        (
            "histogram_quantile(0.9, sum by (le) "
            "(rate(workqueue_work_duration_seconds_bucket[5m])))",
            None,
        ),
        ("sum by (le) (workqueue_work_duration_seconds_sum)", "no series here has label 'le'"),
        ("glimmer_run_phase == 1", "glimmer_run_phase is not exported by the manager"),
        ("sum by (state) (glimmer_node_verdict)", None),
        ("rate(process_cpu_seconds_total[5m])", None),
        ("1 + 1", "no metric at all"),
    ],
)  # fmt: skip
def test_checker_catches_unknown_names_and_labels(expr: str, problem: str | None) -> None:
    problems = check(expr, exported())
    if problem is None:
        assert problems == []
    else:
        assert any(p.startswith(problem) for p in problems), problems


def test_unknown_function_is_refused() -> None:
    with pytest.raises(AssertionError, match="unknown function"):
        list(selectors("frobnicate(burnin_run_phase)"))


@pytest.mark.parametrize(
    "path",
    [REPO / "manifests" / "prometheus" / "servicemonitor.yaml",
     REPO / "charts" / "glimmer" / "templates" / "servicemonitor.yaml"],
    ids=["kustomize", "chart"],
)  # fmt: skip
def test_servicemonitors_keep_the_run_namespace_label(path: Path) -> None:
    """burnin_* series carry the run's ``namespace``; without honorLabels Prometheus
    renames it exported_namespace and every dashboard filter on it finds nothing."""
    assert re.search(r"^\s+honorLabels: true$", path.read_text(), flags=re.MULTILINE)


def test_burnin_families_are_what_the_exporter_serves() -> None:
    """The list the dashboard is checked against is the exporter's own output, so a
    renamed family or label in the Prometheus sink fails here, not on a blank panel."""
    from datetime import UTC, datetime

    from glimmer.sinks import build_envelope
    from glimmer.sinks.prometheus import RunExporter

    run = {
        "metadata": {"namespace": "ns", "name": "r", "uid": "uid-1"},
        "spec": {"profileRef": "prof"},
        "status": {
            "phase": "Passed",
            "results": [
                {
                    "name": "burn", "kind": "gpu-burn", "scope": "Node", "phase": "Passed",
                    "nodes": ["n1"], "startedAt": "2026-12-01T11:00:00Z",
                    "finishedAt": "2026-12-01T11:10:00Z", "metrics": {"gpuTempC": "71"},
                }
            ],
        },
    }  # fmt: skip
    exporter = RunExporter()
    exporter.observe(
        build_envelope(
            run,
            reason="RunPhaseChanged",
            event_key="Passed",
            sent_at=datetime(2026, 12, 1, 12, tzinfo=UTC),
            baseline=False,
        )
    )
    served: dict[str, frozenset[str]] = {}
    for family in exporter.collect():
        for sample in family.samples:
            if sample.name.endswith("_created"):
                continue
            served.setdefault(sample.name, frozenset(sample.labels))
    assert served == BURNIN_FAMILIES
