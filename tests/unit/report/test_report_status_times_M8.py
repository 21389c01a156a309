"""M8: a cluster report's durations keep the milliseconds a BurnInRun's status records.

The run is built as the operator writes it: its result times through the status formatter
(``glimmer.api.format_time``), its envelopes by the sinks' own builder, delivered into its
ConfigMap sink and read back by ``glimmer report --run``."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from datetime import timedelta
from typing import Any

from glimmer.api import format_time
from glimmer.report.cluster import report_from_cluster
from glimmer.report.ctrf import render_ctrf
from glimmer.report.junit import render_junit
from glimmer.report.model import Report
from tests.unit.report import report_fleet as fleet
from tests.unit.report.report_cluster import cluster_with_run

NODE = fleet.NODES[0]


def _result(*, started: str, finished: str) -> dict[str, Any]:
    entry = fleet.result("gpu-burn", [NODE], "Passed", message="GPU_BURN_PASS")
    entry.update(startedAt=started, finishedAt=finished)
    return entry


async def _reported(result: dict[str, Any]) -> Report:
    client, _ = await cluster_with_run(results=[result], terminal="Passed")
    return await report_from_cluster(client, namespace=fleet.NAMESPACE, name=fleet.RUN_NAME)


def _case_time(report: Report) -> str | None:
    root = ET.fromstring(render_junit(report))
    cases = [c for c in root.iter("testcase") if c.get("name") == "gpu-burn"]
    assert len(cases) == 1
    return cases[0].get("time")


async def test_M8_a_cluster_attempt_of_1_234_s_reports_1_234_in_junit_and_1234_ms_in_ctrf() -> None:
    start = fleet.T0 + timedelta(milliseconds=456)
    report = await _reported(
        _result(
            started=format_time(start),
            finished=format_time(start + timedelta(seconds=1, milliseconds=234)),
        )
    )
    assert _case_time(report) == "1.234"
    ctrf = json.loads(render_ctrf(report))["results"]
    test = next(t for t in ctrf["tests"] if t["name"] == "gpu-burn")
    assert test["duration"] == 1234 and test["extra"]["durationRecorded"] is True
    assert test["stop"] - test["start"] == 1234
    assert ctrf["summary"]["duration"] == 1234


async def test_M8_a_whole_second_status_from_an_older_version_still_reports() -> None:
    old = _result(started="2026-11-30T08:00:00Z", finished="2026-11-30T08:00:02Z")
    report = await _reported(old)
    assert _case_time(report) == "2.000"
    test = json.loads(render_ctrf(report))["results"]["tests"][0]
    assert test["duration"] == 2000
