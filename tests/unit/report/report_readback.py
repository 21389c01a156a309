"""Read each rendered format back into phase counts, so tests can check that every
format says the same thing as the run (and as each other)."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections import Counter

from glimmer.report import Report, render

#: What each phase must look like in JUnit (the outcome element, and its type).
JUNIT_OUTCOME = {
    "Passed": "passed",
    "Failed": "failure",
    "Error": "error:Error",
    "Skipped": "skipped",
    "Cancelled": "skipped",
    "Running": "error:Running",
}
CTRF_STATUS = {
    "Passed": "passed",
    "Failed": "failed",
    "Error": "other",
    "Skipped": "skipped",
    "Cancelled": "skipped",
    "Running": "pending",
}
NVVS_STATUS = {"Passed": "Pass", "Failed": "Fail", "Skipped": "Skip"}


def junit_outcomes(text: str) -> Counter[str]:
    root = ET.fromstring(text)
    seen: Counter[str] = Counter()
    for case in root.iter("testcase"):
        outcome = [c for c in case if c.tag in ("failure", "error", "skipped")]
        assert len(outcome) <= 1, ET.tostring(case)
        if not outcome:
            seen["passed"] += 1
        elif outcome[0].tag == "error":
            seen[f"error:{outcome[0].get('type')}"] += 1
        else:
            seen[outcome[0].tag] += 1
    return seen


def html_verdicts(text: str) -> Counter[str]:
    return Counter(re.findall(r'data-verdict="([^"]*)"', text))


def markdown_words(text: str) -> Counter[str]:
    """Verdict words in the grid, links and refusal tables (details repeat them)."""
    body = text.split("## Details", maxsplit=1)[0]
    return Counter(
        re.findall(r"(?:✔ PASS|✖ FAIL|⚠ ERROR|○ SKIP|⊘ CANCELLED|◔ RUNNING|\? UNKNOWN)", body)
    )


def ctrf_statuses(text: str) -> Counter[str]:
    return Counter(t["status"] for t in json.loads(text)["results"]["tests"])


def nvvs_statuses(files: dict[str, str]) -> Counter[str]:
    """Each result's status once: a link result sits whole in every member's file, so it
    is counted once per link (its ``glimmer`` scope and nodes), not once per file."""
    seen: Counter[str] = Counter()
    links: dict[tuple[str, tuple[str, ...]], str] = {}
    for content in files.values():
        doc = json.loads(content)
        for category in doc["DCGM GPU Diagnostic"]["test_categories"]:
            for test in category["tests"]:
                for entry in test["results"]:
                    link = entry.get("glimmer")
                    if link is None:
                        seen[entry["status"]] += 1
                        continue
                    key = (test["name"], tuple(link["nodes"]))
                    assert links.setdefault(key, entry["status"]) == entry["status"], key
    seen.update(links.values())
    return seen


WORDS = {
    "Passed": "✔ PASS",
    "Failed": "✖ FAIL",
    "Error": "⚠ ERROR",
    "Skipped": "○ SKIP",
    "Cancelled": "⊘ CANCELLED",
    "Running": "◔ RUNNING",
}


def assert_every_format_agrees(report: Report, phases: Counter[str]) -> None:
    """``phases``: the run's results per phase word, from the run itself."""
    junit = render(report, "junit")["junit.xml"]
    assert junit_outcomes(junit) == _merged(phases, JUNIT_OUTCOME), junit
    assert html_verdicts(render(report, "html")["burn-in-report.html"]) == phases
    assert markdown_words(render(report, "markdown")["burnin-report.md"]) == Counter(
        {WORDS[p]: n for p, n in phases.items()}
    )
    assert ctrf_statuses(render(report, "ctrf")["ctrf-report.json"]) == _merged(phases, CTRF_STATUS)
    expected_nvvs: Counter[str] = Counter()
    for phase, n in phases.items():
        word = NVVS_STATUS.get(phase, "Not Run")
        if report.baseline and phase == "Passed":
            word = "Skip"
        expected_nvvs[word] += n
    assert nvvs_statuses(render(report, "nvvs-json")) == expected_nvvs


def _merged(phases: Counter[str], table: dict[str, str]) -> Counter[str]:
    out: Counter[str] = Counter()
    for phase, n in phases.items():
        out[table[phase]] += n
    return out
