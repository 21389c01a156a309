"""I41 in the HTML report: a relative gate's fleet chart draws each cohort's band as the
run recorded it (median, and median +/- the allowed deviation), never recomputed."""

from __future__ import annotations

from typing import Any

from glimmer.report import Report, assemble, render
from glimmer.report.charts import distributions
from glimmer.report.model import Gate, cohort_bands
from tests.unit.report import report_fleet as fleet

NODES = fleet.NODES[:4]
GATE = Gate("tflops", "tflops", "GreaterThanOrEqual", "50")
RECORD = {"test": "tflops", "thresholdIndex": 0, "metric": "tflops",
          "comparison": "GreaterThanOrEqual", "fingerprint": "glimmer-v1:dfaf15178ec5",
          "members": 4, "excluded": 0, "evaluated": True, "size": 4, "median": "99.5",
          "mad": "1", "allowedDeviation": "5.9304", "outliers": [NODES[3]],
          "judgedAt": "2026-12-03T14:27:00Z"}  # fmt: skip


def report(records: list[dict[str, Any]]) -> Report:
    values = ("100", "101", "99", "88")
    results = [fleet.result("tflops", [n], "Passed", metrics={"tflops": v})
               for n, v in zip(NODES[:3], values, strict=False)]  # fmt: skip
    results.append(fleet.result("tflops", [NODES[3]], "Failed", metrics={"tflops": "88"},
                                violations=[{"index": 0, "metric": "tflops", "cause":
                                             "Measurement", "kind": "CohortOutlier"}]))  # fmt: skip
    return assemble(fleet.envelopes(results, terminal="Failed"), source="t", gates=(GATE,),
                    cohort_bands=cohort_bands(records))  # fmt: skip


def test_the_fleet_chart_draws_the_recorded_cohort_band() -> None:
    (chart,) = distributions(report([RECORD]))
    (band,) = chart.bands
    assert (band.median, band.allowed, band.size) == (99.5, 5.9304, 4)
    assert "cohort dfaf1517 (4 nodes): median 99.5" in chart.svg
    assert "cohort dfaf1517 (4 nodes): band median \u00b1 5.9304" in chart.svg
    assert NODES[3] in chart.violators  # who failed comes from the violation, not the band
    page = render(report([RECORD]), "html")["burn-in-report.html"]
    assert "Cohort band:</b> cohort dfaf1517 (4 nodes): median 99.5, allowed deviation " in page
    assert f"outliers: {NODES[3]}" in page


def test_a_cohort_that_was_not_evaluated_or_cannot_be_read_draws_no_band() -> None:
    unevaluated = {**RECORD, "evaluated": False, "reason": "below minCohortSize 3"}
    unreadable = {**RECORD, "median": "NaN"}
    assert cohort_bands([unevaluated, unreadable, "junk"]) == ()
    assert cohort_bands(None) == ()
    (chart,) = distributions(report([unevaluated]))
    assert chart.bands == () and "band median" not in chart.svg


async def test_report_from_the_cluster_draws_the_band_the_run_status_recorded() -> None:
    from glimmer.report.cluster import RUNS, report_from_cluster
    from tests.unit.report.report_cluster import cluster_with_run

    client, _ = await cluster_with_run()
    record = {**RECORD, "test": "gpu-burn", "metric": "sustainedThroughputTflops",
              "median": "640", "allowedDeviation": "20", "outliers": ["gpu-node-07"]}  # fmt: skip
    await client.patch(RUNS, fleet.RUN_NAME, {"status": {"cohortVerdicts": [record]}},
                       namespace=fleet.NAMESPACE, subresource="status")  # fmt: skip
    report = await report_from_cluster(client, namespace=fleet.NAMESPACE, name=fleet.RUN_NAME)
    (chart,) = [d for d in distributions(report) if d.gate.metric == "sustainedThroughputTflops"]
    (band,) = chart.bands
    assert (band.median, band.allowed, band.outliers) == (640.0, 20.0, ("gpu-node-07",))
    assert "band median \u00b1 20" in chart.svg
