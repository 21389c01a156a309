"""The HTML report: self-contained, escaped, charts with thresholds and named outliers."""

from __future__ import annotations

import re

import pytest

from glimmer.report import Report, assemble, render
from glimmer.report.charts import distributions
from tests.unit.report import report_fleet as fleet
from tests.unit.report.report_cluster import cluster_with_run

HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'


def html(report: Report) -> str:
    return render(report, "html")["burn-in-report.html"]


def test_html_is_self_contained_no_script_no_network() -> None:
    text = html(assemble(fleet.envelopes(), source="t"))
    assert "<script" not in text.lower()
    assert not re.search(r"""(?:src|href)\s*=\s*["']?(?:https?:|//)""", text, re.IGNORECASE)
    assert not re.search(r"@import|url\(\s*['\"]?https?:", text, re.IGNORECASE)
    assert "default-src 'none'" in text


def test_html_escapes_hostile_node_names_and_messages() -> None:
    results = [
        fleet.result(
            "gpu-burn",
            [HOSTILE],
            "Failed",
            message=HOSTILE,
            metrics={"miscompares": "4"},
            violations=[
                {
                    "index": 0,
                    "metric": "miscompares",
                    "cause": "Measurement",
                    "kind": "Unsatisfied",
                    "reason": HOSTILE,
                }
            ],
        ),
        fleet.result("gpu-burn", ["ok-node"], "Passed", metrics={"miscompares": "0"}),
        fleet.result(HOSTILE, ["ok-node"], "Passed", metrics={HOSTILE: "1"}),
    ]
    text = html(assemble(fleet.envelopes(results), source=HOSTILE))
    assert "<script" not in text.lower() and "<img" not in text.lower()
    assert "&lt;script&gt;" in text
    # The node name also reaches the chart (a violator is named on it), escaped by the SVG writer.
    svg = text[text.index("<svg") : text.index("</svg>")]
    assert "&lt;script&gt;" in svg


def test_html_error_and_fail_read_differently_without_colour() -> None:
    text = html(assemble(fleet.envelopes(), source="t"))
    fail_cells = re.findall(r'class="cell fail"[^>]*>([^<]*)<', text)
    error_cells = re.findall(r'class="cell error"[^>]*>([^<]*)<', text)
    assert fail_cells and error_cells
    assert {c.strip() for c in fail_cells} == {"✖ FAIL"}
    assert {c.strip() for c in error_cells} == {"⚠ ERROR"}
    fail_css = re.search(r"\.fail \{([^}]*)\}", text)
    error_css = re.search(r"\.error \{([^}]*)\}", text)
    assert fail_css and error_css
    assert "solid" in fail_css.group(1) and "dotted" in error_css.group(1)


@pytest.mark.parametrize("provenance", ["sim", "silicon"])
def test_html_provenance_banner_is_first_and_impossible_to_miss(provenance: str) -> None:
    text = html(assemble(fleet.envelopes(provenance=provenance), source="t"))
    body = text[text.index("<body>") :]
    first = re.search(r'<div class="banner (\w+)" role="alert">([^<]*)<', body)
    assert first is not None and body.index(first.group(0)) < body.index("<h1>")
    if provenance == "sim":
        assert first.group(1) == "sim" and first.group(2).startswith("SIMULATED GPU")
    else:  # silicon results, but the run did not certify: never the silicon banner
        assert first.group(1) == "unknown" and "does not certify" in first.group(2)


async def test_html_one_chart_per_gated_metric_with_threshold_and_named_outliers() -> None:
    from glimmer.report.cluster import report_from_cluster

    client, _ = await cluster_with_run()
    report = await report_from_cluster(client, namespace=fleet.NAMESPACE, name=fleet.RUN_NAME)
    found = {(d.gate.test, d.gate.metric): d for d in distributions(report)}
    assert sorted(found) == sorted((t, g["metric"]) for t, gs in fleet.GATES.items() for g in gs)
    tflops = found[("gpu-burn", "sustainedThroughputTflops")]
    assert tflops.threshold == 600.0 and tflops.outliers == ("gpu-node-07",)
    assert "threshold: GreaterThanOrEqual 600" in tflops.svg
    assert tflops.unreported == ("gpu-node-05",)
    bandwidth = found[("memory-bw", "hostToDeviceBandwidthGBs")]
    assert bandwidth.violators == ("gpu-node-02",) and "gpu-node-02" in bandwidth.svg
    assert found[("clockprobe", "sustainedClockSpreadPct")].unmeasurable == ("gpu-node-07",)
    text = html(report)
    assert text.count("<svg") == 4 and "<script" not in text


def test_html_charts_only_name_gates_without_a_plan() -> None:
    report = assemble(fleet.envelopes(), source="t")
    gates = {(d.gate.test, d.gate.metric): d for d in distributions(report)}
    assert ("gpu-burn", "miscompares") in gates
    assert ("gpu-burn", "sustainedThroughputTflops") not in gates  # never violated: unknown
    assert all(d.threshold is None for d in gates.values())
    assert "threshold not in input" in gates[("gpu-burn", "miscompares")].svg


def test_html_unreadable_values_are_listed_not_plotted() -> None:
    results = [
        fleet.result(
            "gpu-burn",
            [node],
            "Failed",
            metrics={"miscompares": value},
            violations=[
                {
                    "index": 0,
                    "metric": "miscompares",
                    "cause": "Evidence",
                    "kind": "NonFinite",
                    "reason": "miscompares: NaN",
                }
            ],
        )
        for node, value in (("a", "NaN"), ("b", "1e400"), ("c", "3"))
    ]
    (chart,) = distributions(assemble(fleet.envelopes(results), source="t"))
    assert chart.values == {"c": 3.0}
    assert chart.unreadable == {"a": "NaN", "b": "1e400"}
