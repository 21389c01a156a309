"""``glimmer report`` of a real ``glimmer run`` (runner processes, simulated GPU):
from its run.json and from the envelope the bare host delivers, in every format."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from glimmer.cli.report import report as report_command
from glimmer.report import FORMATS, ReportInputError, assemble, from_results_dir, load_run_json
from glimmer.sinks.bare import write_envelope
from glimmer.sinks.build import envelope_from_run_document
from tests.unit.report.report_readback import assert_every_format_agrees, junit_outcomes


@pytest.fixture(scope="module")
def results_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("glimmer-run")
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "from glimmer.cli import main; main()",
            "run",
            "--sim",
            "h200:ecc-uncorrectable",
            "--report-dir",
            str(folder),
        ],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr  # the injected fault Fails
    document = json.loads((folder / "run.json").read_text())
    envelope = envelope_from_run_document(document, sent_at=datetime.now(UTC))
    write_envelope(folder, envelope)
    return folder


def run_document(folder: Path) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((folder / "run.json").read_text())
    return document


def test_report_of_run_json_agrees_with_the_run_in_every_format(results_dir: Path) -> None:
    document = run_document(results_dir)
    phases = Counter(r["phase"] for r in document["results"])
    assert phases["Failed"] >= 1
    report = load_run_json(results_dir)
    assert report.phase_word == document["phase"] == "Failed"
    assert report.simulated and "SIMULATED" in report.tags and not report.certifies_silicon
    assert (report.summary.passed, report.summary.failed) == (
        document["summary"]["passed"],
        document["summary"]["failed"],
    )
    assert_every_format_agrees(report, phases)


def test_report_of_the_delivered_envelope_agrees_with_run_json(results_dir: Path) -> None:
    from_json = load_run_json(results_dir)
    from_envelope = assemble(from_results_dir(results_dir / "envelopes"), source="envelopes")
    assert from_envelope.phase_word == from_json.phase_word
    assert from_envelope.summary == from_json.summary
    assert [(r.name, r.phase_word, r.nodes) for r in from_envelope.results] == [
        (r.name, r.phase_word, r.nodes) for r in from_json.results
    ]
    assert from_envelope.simulated


@pytest.mark.parametrize("fmt", FORMATS)
def test_glimmer_report_cli_writes_every_format_from_a_results_dir(
    results_dir: Path, tmp_path: Path, fmt: str
) -> None:
    result = CliRunner().invoke(
        report_command, ["--run-json", str(results_dir), "-o", fmt, "--out", str(tmp_path)]
    )
    assert result.exit_code == 0, result.stderr
    written = sorted(p.name for p in tmp_path.iterdir())
    assert written and all(not name.startswith(".") for name in written)
    if fmt == "junit":
        outcomes = junit_outcomes((tmp_path / "junit.xml").read_text())
        phases = Counter(r["phase"] for r in run_document(results_dir)["results"])
        assert outcomes["failure"] == phases["Failed"]
        assert outcomes.get("error:Error", 0) == phases.get("Error", 0)


def test_run_json_of_another_kind_is_refused(tmp_path: Path, results_dir: Path) -> None:
    document = run_document(results_dir)
    document["kind"] = "BurnInRun"
    (tmp_path / "run.json").write_text(json.dumps(document))
    with pytest.raises(ReportInputError, match="not a glimmer run result"):
        load_run_json(tmp_path)


def test_run_json_with_a_result_lacking_required_is_refused(
    tmp_path: Path, results_dir: Path
) -> None:
    document = run_document(results_dir)
    del document["results"][0]["required"]
    (tmp_path / "run.json").write_text(json.dumps(document))
    with pytest.raises(ReportInputError, match=r"results\[0\]\.required"):
        load_run_json(tmp_path)


def test_run_json_with_an_unreadable_phase_reads_error_never_passed(
    tmp_path: Path, results_dir: Path
) -> None:
    document = run_document(results_dir)
    passed = next(i for i, r in enumerate(document["results"]) if r["phase"] == "Passed")
    document["results"][passed]["phase"] = "Passd"
    document["summary"]["passed"] -= 1
    document["summary"]["errored"] += 1
    (tmp_path / "run.json").write_text(json.dumps(document))
    report = load_run_json(tmp_path)
    assert report.results[passed].phase_word == "Error"


def test_M6_a_glimmer_run_report_has_the_plans_gates_and_charts(results_dir: Path) -> None:
    document = run_document(results_dir)
    assert document["gates"], "run.json carries the pinned plan's gates"
    report = load_run_json(results_dir)
    assert report.gates_from_plan
    assert all(g.known for g in report.gates)
    named = {(g["test"], g["metric"]) for g in document["gates"]}
    assert {(g.test, g.metric) for g in report.gates} == named
    html = report_html(report)
    assert "<svg" in html or 'id="folded"' in html
    assert "this input carries no plan" not in html
    for result in document["results"]:
        if "startedAt" in result:
            assert result["startedAtPrecise"].startswith(result["startedAt"][:-1] + ".")


def report_html(report: Any) -> str:
    from glimmer.report import render

    return render(report, "html")["burn-in-report.html"]
