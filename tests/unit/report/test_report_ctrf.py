"""CTRF output, validated against the official CTRF JSON schema (tests/unit/report/ctrf)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]  # no stubs installed for jsonschema
import pytest

from glimmer.report import Report, assemble, render
from tests.unit.report import report_fleet as fleet

SCHEMA = json.loads((Path(__file__).parent / "ctrf" / "ctrf-schema-0.0.json").read_text())


def ctrf(report: Report) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(render(report, "ctrf")["ctrf-report.json"])
    jsonschema.Draft7Validator(SCHEMA, format_checker=jsonschema.FormatChecker()).validate(document)
    return document


def test_ctrf_schema_is_the_official_one() -> None:
    assert SCHEMA["title"] == "CTRF JSON Schema"
    assert SCHEMA["properties"]["reportFormat"] == {
        "description": "Document format identifier. Must be 'CTRF'",
        "const": "CTRF",
    }


@pytest.mark.parametrize("terminal", ["Failed", None])
def test_ctrf_validates_and_counts_agree_with_the_run(terminal: str | None) -> None:
    results = fleet.fleet_results()
    document = ctrf(assemble(fleet.envelopes(results, terminal=terminal), source="t"))
    summary = document["results"]["summary"]
    phases = Counter(r["phase"] for r in results)
    assert summary["tests"] == len(results)
    assert summary["passed"] == phases["Passed"] and summary["failed"] == phases["Failed"]
    assert summary["other"] == phases["Error"] and summary["skipped"] == phases["Skipped"]
    assert document["results"]["extra"]["incomplete"] is (terminal is None)


def test_ctrf_error_is_other_never_failed() -> None:
    results = [fleet.result("gpu-burn", [fleet.NODES[0]], "Error", message="exit 137")]
    document = ctrf(assemble(fleet.envelopes(results, terminal="Error"), source="t"))
    (test,) = document["results"]["tests"]
    assert test["status"] == "other" and test["rawStatus"] == "Error"
    assert test["message"].startswith("ERROR (not judged)") and "not a failure" in test["message"]
    assert document["results"]["summary"]["failed"] == 0


def test_ctrf_running_results_of_an_incomplete_run_are_pending() -> None:
    results = [fleet.result("gpu-burn", [fleet.NODES[0]], "Running")]
    document = ctrf(assemble(fleet.envelopes(results, terminal=None), source="t"))
    assert document["results"]["tests"][0]["status"] == "pending"


def test_ctrf_flags_baseline_and_provenance() -> None:
    results = [fleet.result("gpu-burn", [fleet.NODES[0]], "Passed", provenance="sim")]
    document = ctrf(
        assemble(
            fleet.envelopes(results, terminal="Passed", baseline=True, provenance="sim"), source="t"
        )
    )
    extra = document["results"]["extra"]
    assert extra["baseline"] is True and extra["simulated"] is True
    assert extra["certifiesSilicon"] is False
    assert "baseline" in document["results"]["tests"][0]["tags"]
    assert "SIMULATED" in document["results"]["tests"][0]["tags"]
