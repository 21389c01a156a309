"""M6: JUnit validates against Jenkins xunit's strict ``junit-10.xsd`` and states
sub-second times; CTRF carries ``tool.version``, real durations and numeric metrics."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from glimmer import __version__
from glimmer.api import API_VERSION
from glimmer.report import Report, assemble, render
from glimmer.report.localrun import report_from_document
from tests.unit.report import report_fleet as fleet
from tests.unit.report.test_report_ctrf import ctrf

XSD = Path(__file__).parents[2] / "fixtures" / "report" / "junit-10.xsd"


def fleet_junit() -> str:
    return render(assemble(fleet.envelopes(), source="test"), "junit")["junit.xml"]


def local_report(**result_fields: Any) -> Report:
    entry: dict[str, Any] = {
        "name": "gpu-burn",
        "kind": "gpu-burn",
        "scope": "Node",
        "phase": "Passed",
        "nodes": ["host-a"],
        "required": True,
        "startedAt": "2026-01-01T00:00:00Z",
        "finishedAt": "2026-01-01T00:00:01Z",
        "startedAtPrecise": "2026-01-01T00:00:00.250Z",
        "finishedAtPrecise": "2026-01-01T00:00:01.000Z",
        "metrics": {"miscompares": "0", "gflops": "1.25e4", "temp": "n/a"},
        "provenance": "silicon",
        **result_fields,
    }
    document = {
        "apiVersion": API_VERSION,
        "kind": "BurnInLocalRun",
        "run": {"namespace": "local", "name": "host-a", "profile": "p"},
        "phase": "Passed",
        "startedAt": "2026-01-01T00:00:00Z",
        "finishedAt": "2026-01-01T00:00:01Z",
        "provenance": "silicon",
        "certifiesSilicon": True,
        "summary": {"passed": 1, "failed": 0, "errored": 0, "skipped": 0},
        "results": [entry],
    }
    return report_from_document(document, source="run.json")


def test_M6_junit_validates_against_the_jenkins_xunit_junit_10_xsd() -> None:
    etree = pytest.importorskip("lxml.etree", reason="lxml (a dev dependency) is the XSD validator")
    schema = etree.XMLSchema(etree.parse(str(XSD)))
    for text in (fleet_junit(), render(local_report(), "junit")["junit.xml"]):
        document = etree.fromstring(text.encode("utf-8"))
        assert schema.validate(document), schema.error_log


def test_M6_junit_has_no_properties_in_a_testcase_and_every_suite_states_host_and_time() -> None:
    """The schema's rules this format meets, checked with the standard library too."""
    root = ET.fromstring(fleet_junit())
    assert [child.tag for child in root] == ["testsuite"] * len(root)
    assert set(root.attrib) <= {"name", "time", "tests", "failures", "errors"}
    for case in root.iter("testcase"):
        assert case.find("properties") is None
        assert set(case.attrib) <= {"name", "time", "classname", "group"}
    for suite in root.iter("testsuite"):
        assert {"name", "tests", "failures", "errors", "hostname"} <= set(suite.attrib)
        if len(suite.findall("testcase")):
            assert "time" in suite.attrib and "timestamp" in suite.attrib, suite.attrib
    node_suite = root.find(f"testsuite[@name='{fleet.NODES[0]}']")
    assert node_suite is not None and node_suite.get("hostname") == fleet.NODES[0]


def test_M6_junit_durations_are_sub_second_from_the_real_start_and_finish() -> None:
    root = ET.fromstring(render(local_report(), "junit")["junit.xml"])
    (case,) = root.iter("testcase")
    assert case.get("time") == "0.750"
    suite = root.find("testsuite[@name='host-a']")
    assert suite is not None
    assert suite.get("time") == "0.750"
    assert suite.get("timestamp") == "2026-01-01T00:00:00.250Z"


def test_M6_ctrf_carries_tool_version_real_durations_and_numeric_metrics() -> None:
    document = ctrf(local_report())  # validated against the official CTRF schema
    assert document["results"]["tool"] == {"name": "glimmer", "version": __version__}
    (test,) = document["results"]["tests"]
    assert test["duration"] == 750
    assert test["extra"]["metrics"] == {"miscompares": 0, "gflops": 12500.0, "temp": "n/a"}
