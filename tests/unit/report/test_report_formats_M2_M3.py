"""M2 (never fabricate) and M3 (each format's mapping), over one assembled view."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections import Counter
from typing import Any

import pytest

from glimmer.report import FORMATS, Report, assemble, render
from glimmer.report.nvvs import category, overall
from tests.unit.report import report_fleet as fleet
from tests.unit.report.report_readback import assert_every_format_agrees, junit_outcomes


def view(results: list[dict[str, Any]] | None = None, **options: Any) -> Report:
    return assemble(fleet.envelopes(results, **options), source="test")


def all_text(report: Report) -> dict[str, str]:
    """Format -> every file it writes, concatenated."""
    return {fmt: "\n".join(render(report, fmt).values()) for fmt in FORMATS}


def one(name: str, phase: str, **fields: Any) -> dict[str, Any]:
    return fleet.result(name, [fleet.NODES[0]], phase, **fields)


# --- M2 ---------------------------------------------------------------------------------


def test_M2_baseline_is_flagged_in_every_format() -> None:
    results = [one("gpu-burn", "Passed", metrics={"miscompares": "0"}, message="GPU_BURN_PASS")]
    report = view(results, baseline=True, terminal="Passed")
    for fmt, text in all_text(report).items():
        assert re.search("baseline", text, re.IGNORECASE), fmt
    assert "[baseline]" in render(report, "junit")["junit.xml"]


def test_M2_incomplete_is_flagged_in_every_format() -> None:
    report = view(terminal=None)
    for fmt, text in all_text(report).items():
        assert "INCOMPLETE" in text, fmt


def test_M2_missing_results_are_flagged_never_guessed() -> None:
    envelopes = fleet.envelopes()
    terminal = envelopes[-1]
    from dataclasses import replace

    cut = replace(terminal, results=terminal.results[:5])  # the summary still counts all
    report = assemble([cut], source="t")
    assert report.missing_results == len(terminal.results) - 5
    for fmt, text in all_text(report).items():
        assert "INCOMPLETE" in text, fmt
    for content in render(report, "nvvs-json").values():
        assert json.loads(content)["Overall Result"] == "Not Run"


def test_M2_a_summary_that_contradicts_its_results_is_refused() -> None:
    from dataclasses import replace

    from glimmer.contract.envelope import Summary
    from glimmer.report import ReportInputError

    terminal = fleet.envelopes()[-1]
    lying = replace(terminal, summary=Summary(passed=27, failed=0, errored=0, skipped=0))
    with pytest.raises(ReportInputError, match="contradicts its results"):
        assemble([lying], source="t")


def test_M2_pair_and_group_results_live_only_in_the_links_view() -> None:
    report = view()
    junit = ET.fromstring(render(report, "junit")["junit.xml"])
    suites = {s.get("name"): s for s in junit.iter("testsuite")}
    assert "links" in suites
    links = [c.get("name", "") for c in suites["links"].iter("testcase")]
    assert len(links) == 3 and all("(" in name for name in links)
    for node in fleet.NODES:
        names = [c.get("name", "") for c in suites[node].iter("testcase")]
        assert not any(n.startswith(("nccl", "ib-link")) for n in names), (node, names)
    # NVVS has no links view: each member's file holds the link's one result, whole.
    nvvs = render(report, "nvvs-json")
    assert "diag-unassigned.json" not in nvvs
    for node in fleet.NODES:
        doc = json.loads(nvvs[f"diag-{node}.json"])
        linked = [
            (t["name"], t["results"])
            for c in doc["DCGM GPU Diagnostic"]["test_categories"]
            for t in c["tests"]
            if t["name"].startswith(("nccl", "ib-link"))
        ]
        for name, results in linked:
            assert len(results) == 1 and node in results[0]["glimmer"]["nodes"], (node, name)
            assert " + ".join(results[0]["glimmer"]["nodes"]) in name  # never split
    html = render(report, "html")["burn-in-report.html"]
    grid = html.split('<table class="grid">')[1].split("</table>")[0]
    assert "nccl" not in grid and "ib-link" not in grid
    markdown = render(report, "markdown")["burnin-report.md"]
    grid_md = markdown.split("## Verdicts")[1].split("## Links")[0]
    assert "nccl" not in grid_md


def test_M2_dropped_artifacts_are_surfaced_in_every_format() -> None:
    report = view()
    for fmt, text in all_text(report).items():
        assert "bandwidth-matrix.json DROPPED (oversized" in text, fmt


def test_M2_not_evaluated_gates_are_stated_in_every_format() -> None:
    report = view()
    for fmt, text in all_text(report).items():
        assert "not evaluated: sustainedClockSpreadPct (unmeasurable on this hardware)" in text, fmt


def test_M2_absent_times_are_omitted_never_zero() -> None:
    results = [one("gpu-burn", "Error", message="no pod")]
    for key in ("startedAt", "finishedAt"):
        results[0].pop(key)
    report = view(results, terminal="Error")
    junit = render(report, "junit")["junit.xml"]
    assert 'time="' not in junit
    ctrf = json.loads(render(report, "ctrf")["ctrf-report.json"])
    test = ctrf["results"]["tests"][0]
    assert "start" not in test and "stop" not in test
    assert test["extra"]["durationRecorded"] is False
    assert ctrf["results"]["summary"]["extra"]["timesRecorded"] is False


def test_M2_a_test_not_run_on_a_node_is_an_em_dash() -> None:
    results = [
        fleet.result("gpu-burn", [fleet.NODES[0]], "Passed", metrics={"miscompares": "0"}),
        fleet.result("memory-bw", [fleet.NODES[1]], "Passed", metrics={}),
    ]
    report = view(results, terminal="Passed")
    markdown = render(report, "markdown")["burnin-report.md"]
    assert "| `gpu-node-01` | ✔ PASS | — |" in markdown
    assert "| `gpu-node-02` | — | ✔ PASS |" in markdown
    html = render(report, "html")["burn-in-report.html"]
    assert html.count('class="cell absent"') >= 2


def test_M2_gates_not_known_without_a_plan_are_stated() -> None:
    report = view()
    assert not report.gates_from_plan
    for fmt, text in all_text(report).items():
        assert "this input carries no plan" in text, fmt


def test_M2_every_format_agrees_with_the_runs_results() -> None:
    results = fleet.fleet_results()
    results.append(
        fleet.result(
            "clockprobe-cancelled",
            [fleet.NODES[0]],
            "Cancelled",
            message="run cancelled: maintenance",
        )
    )
    report = view(results)
    assert_every_format_agrees(report, Counter(r["phase"] for r in results))


# --- M3: JUnit --------------------------------------------------------------------------


def test_M3_junit_error_is_error_never_failure() -> None:
    results = [one("gpu-burn", "Error", message="runner terminated abnormally (exit 137)")]
    junit = render(view(results, terminal="Error"), "junit")["junit.xml"]
    assert "<failure" not in junit
    assert junit_outcomes(junit) == Counter({"error:Error": 1})
    root = ET.fromstring(junit)
    assert root.get("failures") == "0" and root.get("errors") == "1"


def test_M3_junit_failure_carries_every_violation_and_who_acts() -> None:
    violations = [
        {
            "index": 0,
            "metric": "miscompares",
            "cause": "Measurement",
            "kind": "Unsatisfied",
            "reason": "miscompares: got 4, need LessThanOrEqual 0",
        },
        {
            "index": 1,
            "metric": "xidEvents",
            "cause": "Evidence",
            "kind": "NotReported",
            "reason": "xidEvents: not reported",
        },
        {
            "index": 2,
            "metric": "gpuTempC",
            "cause": "Authoring",
            "kind": "ThresholdValueNonNumeric",
            "reason": "gpuTempC: threshold value 'hot' is not a number",
        },
    ]
    results = [
        one(
            "gpu-burn",
            "Failed",
            metrics={"miscompares": "4"},
            violations=violations,
            message="miscompares: got 4, need LessThanOrEqual 0",
        )
    ]
    root = ET.fromstring(render(view(results), "junit")["junit.xml"])
    failure = next(root.iter("failure"))
    text = failure.text or ""
    for needle in (
        "miscompares: got 4",
        "xidEvents: not reported",
        "hot",
        "hardware",
        "nobody yet",
        "the profile author",
    ):
        assert needle in text, needle


def test_M3_junit_unknown_phase_is_error_type_unknown() -> None:
    results = [one("gpu-burn", "Exploded", message="?")]
    junit = render(view(results, terminal="Error"), "junit")["junit.xml"]
    assert junit_outcomes(junit) == Counter({"error:Unknown": 1})


def test_M3_junit_suites_per_node_links_and_the_tagged_run_name() -> None:
    root = ET.fromstring(render(view(terminal=None), "junit")["junit.xml"])
    assert root.get("name") == "burnin/fleet-acceptance [INCOMPLETE]"
    names = [s.get("name") for s in root.iter("testsuite")]
    assert names == [*fleet.NODES, "links"]
    assert int(root.get("tests", "0")) == len(fleet.fleet_results())


# --- M3: Markdown -----------------------------------------------------------------------


def test_M3_markdown_escapes_pipes_and_markup() -> None:
    results = [
        one(
            "gpu|burn",
            "Failed",
            message="a | b <script>x</script>\nsecond line",
            violations=[
                {
                    "index": 0,
                    "metric": "m",
                    "cause": "Measurement",
                    "kind": "Unsatisfied",
                    "reason": "m: got 1|2",
                }
            ],
        )
    ]
    markdown = render(view(results), "markdown")["burnin-report.md"]
    # Input text is code spans (inert), a pipe written between them escaped; the
    # property test (test_markdown_runner_text_is_inert) parses the output for real.
    assert "`gpu`\\|`burn`" in markdown
    assert "`a `\\|` b <script>x</script> second line" in markdown
    rows = [line for line in markdown.splitlines() if line.startswith("| `gpu-node-01` |")]
    assert rows
    for line in rows:
        assert len(re.findall(r"(?<!\\)\|", line)) == 3  # node, one test: columns intact


# --- M3: NVVS ---------------------------------------------------------------------------


def test_M3_nvvs_status_mapping_and_categories() -> None:
    report = view()
    files = render(report, "nvvs-json")
    assert sorted(files) == sorted(f"diag-{n}.json" for n in fleet.NODES)
    node3 = json.loads(files["diag-gpu-node-03.json"])
    cats = {
        c["category"]: {t["name"]: t["results"][0] for t in c["tests"]}
        for c in node3["DCGM GPU Diagnostic"]["test_categories"]
    }
    assert cats["Stress"]["gpu-burn"]["status"] == "Fail"
    assert cats["Stress"]["memory-bw"]["status"] == "Pass"
    assert node3["Overall Result"] == "Fail" and node3["provenance"] == "NVVS-compatible"
    warning = cats["Stress"]["gpu-burn"]["warnings"][0]
    assert warning["severity"] == "error" and "error_id" not in warning
    node5 = json.loads(files["diag-gpu-node-05.json"])
    assert node5["Overall Result"] == "Not Run"  # its gpu-burn Errored
    node6 = json.loads(files["diag-gpu-node-06.json"])
    statuses = [
        t["results"][0]["status"]
        for c in node6["DCGM GPU Diagnostic"]["test_categories"]
        for t in c["tests"]
    ]
    assert "Skip" in statuses
    # Its own tests Passed or Skipped; the Group it is a member of Errored, and a link
    # counts in each member's Overall Result as in its node verdict: it is not a Pass.
    assert node6["Overall Result"] == "Not Run"
    node7 = json.loads(files["diag-gpu-node-07.json"])
    link = [
        t["results"][0]
        for c in node7["DCGM GPU Diagnostic"]["test_categories"]
        for t in c["tests"]
        if t["name"].startswith("ib-link")
    ]
    assert [entry["status"] for entry in link] == ["Fail"]
    assert node7["Overall Result"] == "Fail"  # its link failed: never a Pass
    text = "\n".join(files.values())
    for invented in ("error_id", "DCGM_FR_", "dcgm_version", '"version"'):
        assert invented not in text
    assert category("nccl") == "Integration" and category("host-health") == "Hardware"
    assert category("thermal-soak") == "Stress" and category("custom") == "Hardware"


@pytest.mark.parametrize(
    ("cause", "severity"),
    [
        ("Measurement", "error"),
        ("Evidence", "warning"),
        ("Authoring", "info"),
        ("Mystery", "warning"),
    ],
)
def test_M3_nvvs_severity_by_cause(cause: str, severity: str) -> None:
    results = [
        one(
            "gpu-burn",
            "Failed",
            violations=[
                {"index": 0, "metric": "m", "cause": cause, "kind": "Unsatisfied", "reason": "r"}
            ],
        )
    ]
    node = json.loads(render(view(results), "nvvs-json")["diag-gpu-node-01.json"])
    entry = node["DCGM GPU Diagnostic"]["test_categories"][0]["tests"][0]["results"][0]
    assert entry["warnings"][0]["severity"] == severity


def test_M3_nvvs_baseline_passed_is_skip() -> None:
    results = [one("gpu-burn", "Passed", metrics={"miscompares": "0"}), one("memory-bw", "Failed")]
    node = json.loads(render(view(results, baseline=True), "nvvs-json")["diag-gpu-node-01.json"])
    got = {
        t["name"]: t["results"][0]["status"]
        for c in node["DCGM GPU Diagnostic"]["test_categories"]
        for t in c["tests"]
    }
    assert got == {"gpu-burn": "Skip", "memory-bw": "Fail"}


def test_M3_nvvs_overall_fail_beats_not_run() -> None:
    assert overall(["Pass", "Not Run", "Fail"], missing=False) == "Fail"
    assert overall(["Pass", "Not Run"], missing=False) == "Not Run"
    assert overall(["Pass", "Skip"], missing=False) == "Pass"
    assert overall(["Skip"], missing=False) == "Skip"
    assert overall([], missing=False) == "Not Run"
    assert overall(["Pass", "Fail"], missing=True) == "Not Run"


def test_M3_nvvs_hostile_node_names_never_escape_the_output_directory() -> None:
    results = [
        fleet.result("gpu-burn", ["../../etc/passwd"], "Passed"),
        fleet.result("memory-bw", ["unassigned"], "Passed"),
    ]
    files = render(view(results, terminal="Passed"), "nvvs-json")
    assert all("/" not in name for name in files)
    # The node literally named "unassigned" keeps a file of its own, never the shared one.
    assert len(files) == 2 and "diag-unassigned.json" not in files
    own = [json.loads(c) for c in files.values() if json.loads(c)["node"] == "unassigned"]
    assert len(own) == 1 and own[0]["DCGM GPU Diagnostic"]["test_categories"]


def test_M3_junit_stays_well_formed_with_control_bytes_in_runner_text() -> None:
    message = "GPU_BURN_FAIL: \x00\x1b[31mred\x1b[0m \ufffe end"
    results = [one("gpu-burn", "Failed", message=message, metrics={"gpuName": "H200\x07"})]
    junit = render(view(results), "junit")["junit.xml"]
    root = ET.fromstring(junit)  # would raise on an unescapable character
    failure = next(root.iter("failure"))
    assert failure.get("message", "").startswith("GPU_BURN_FAIL: \ufffd\ufffd[31mred")


# --- M2/M3: NVVS, a link result in each member's document -------------------------------


def _nvvs_entries(content: str) -> dict[str, dict[str, Any]]:
    doc = json.loads(content)
    return {
        t["name"]: t["results"][0]
        for c in doc["DCGM GPU Diagnostic"]["test_categories"]
        for t in c["tests"]
    }


def _link(name: str, nodes: list[str], phase: str, scope: str = "Pair") -> dict[str, Any]:
    entry = fleet.result(name, nodes, phase)
    entry["kind"], entry["scope"] = "ib-write-bw", scope
    return entry


def test_M3_nvvs_a_link_result_is_whole_in_every_member_nodes_document() -> None:
    a, b = fleet.NODES[:2]
    files = render(view([_link("fabric", [a, b], "Passed")], terminal="Passed"), "nvvs-json")
    # A run of links only still gives each member its file, and nothing is unassigned.
    assert sorted(files) == sorted([f"diag-{a}.json", f"diag-{b}.json"])
    for node in (a, b):
        doc = json.loads(files[f"diag-{node}.json"])
        entry = _nvvs_entries(files[f"diag-{node}.json"])[f"fabric (Pair: {a} + {b})"]
        assert entry["status"] == "Pass" and entry["glimmer"] == {"scope": "Pair", "nodes": [a, b]}
        assert f"Pair over {a} + {b}" in entry["info"]
        assert doc["Overall Result"] == "Pass"


def test_M3_nvvs_a_failed_link_is_no_members_pass() -> None:
    a, b, c = fleet.NODES[:3]
    results = [
        one("gpu-burn", "Passed", metrics={"miscompares": "0"}),
        fleet.result("gpu-burn", [b], "Passed", metrics={"miscompares": "0"}),
        fleet.result("gpu-burn", [c], "Passed", metrics={"miscompares": "0"}),
        _link("fabric", [a, b], "Failed"),
    ]
    files = render(view(results, terminal="Failed"), "nvvs-json")
    overall_of = {n: json.loads(files[f"diag-{n}.json"])["Overall Result"] for n in (a, b, c)}
    assert overall_of == {a: "Fail", b: "Fail", c: "Pass"}


def test_M3_nvvs_writes_the_unassigned_file_only_when_something_names_no_node() -> None:
    node_only = [one("gpu-burn", "Passed", metrics={"miscompares": "0"})]
    assert "diag-unassigned.json" not in render(view(node_only, terminal="Passed"), "nvvs-json")
    refusal = fleet.result("resolve", [], "Error", message="plan refused: no tests")
    refusal["kind"] = ""  # a synthetic refusal: about the run, not any node
    files = render(view([*node_only, refusal], terminal="Error"), "nvvs-json")
    unassigned = json.loads(files["diag-unassigned.json"])
    assert list(_nvvs_entries(files["diag-unassigned.json"])) == ["resolve"]
    assert unassigned["Overall Result"] == "Not Run"
