"""CTRF (Common Test Report Format, https://ctrf.io) JSON: ``ctrf-report.json``.

CTRF has five statuses: passed, failed, skipped, pending, other. The mapping:

- Passed -> ``passed``; Failed -> ``failed``; Skipped and Cancelled -> ``skipped``;
- Error -> ``other``, with ``rawStatus: "Error"`` and a message that says the test
  could not measure. CTRF has no "error" status, and its ``failed`` means the thing
  under test is wrong: a node whose runner crashed or whose log could not be read was
  not found wanting, it was not judged at all. Counting it ``failed`` would condemn a
  healthy node; counting it ``passed`` or ``skipped`` would certify an unmeasured one.
  ``other`` is the one status that claims neither;
- Running/Pending (an INCOMPLETE run) -> ``pending``; an unknown phase -> ``other``.

The schema requires ``duration`` on every test and ``start``/``stop`` on the summary.
Where the input did not record them, ``0`` is written *and* ``extra`` says
``durationRecorded: false`` / ``timesRecorded: false``, so the zero is never read as
a measurement. Run flags (baseline, INCOMPLETE, provenance) are in ``results.extra``
and repeated as tags on every test.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any, Final

from glimmer import __version__
from glimmer.contract.numbers import parse_go_float
from glimmer.report.facts import (
    detail_lines,
    duration_seconds,
    epoch_ms,
    flag_lines,
    unit_label,
    violation_line,
)
from glimmer.report.model import Report, ResultView
from glimmer.verdict import Phase

FILE_NAME: Final = "ctrf-report.json"
SPEC_VERSION: Final = "0.0.0"
TOOL: Final = "glimmer"

STATUS: Final[dict[Phase, str]] = {
    Phase.PASSED: "passed",
    Phase.FAILED: "failed",
    Phase.SKIPPED: "skipped",
    Phase.CANCELLED: "skipped",
    Phase.ERROR: "other",
    Phase.RUNNING: "pending",
    Phase.PENDING: "pending",
}
ERROR_MESSAGE: Final = "ERROR (not judged): the test could not measure; this is not a failure"


def ctrf_status(result: ResultView) -> str:
    phase = result.phase
    return "other" if phase is None else STATUS[phase]


def _message(result: ResultView) -> str:
    phase = result.phase
    if phase is Phase.ERROR:
        return f"{ERROR_MESSAGE}: {result.message}" if result.message else ERROR_MESSAGE
    if phase is None:
        return f"UNKNOWN phase {result.phase_word!r}: no verdict can be read"
    if phase is Phase.FAILED and result.violations:
        return "; ".join(violation_line(v) for v in result.violations)
    return result.message


def metric_values(metrics: Mapping[str, str]) -> dict[str, float | int | str]:
    """M6: a metric whose delivered text is a finite number is a JSON number (an
    integral reading stays an integer); anything else (``n/a``, ``NaN``, a word) stays
    the text it was, so nothing is invented."""
    out: dict[str, float | int | str] = {}
    for key, text in sorted(metrics.items()):
        number = parse_go_float(text)
        if number is None or not math.isfinite(number):
            out[key] = text
        elif number.is_integer() and abs(number) < 2**53 and text.strip().lstrip("+-").isdigit():
            out[key] = int(number)
        else:
            out[key] = number
    return out


def _test(report: Report, result: ResultView) -> dict[str, Any]:
    seconds = duration_seconds(result)
    suite = ["links"] if result.link else ["run"] if result.synthetic else ["nodes"]
    if not result.link and result.nodes:
        suite.append(result.nodes[0])
    test: dict[str, Any] = {
        "name": unit_label(result) if result.link else result.name,
        "status": ctrf_status(result),
        "duration": round(seconds * 1000) if seconds is not None else 0,
        "rawStatus": result.phase_word or "(none)",
        "suite": suite,
    }
    start, stop = epoch_ms(result.started_at), epoch_ms(result.finished_at)
    if start is not None:
        test["start"] = start
    if stop is not None:
        test["stop"] = stop
    message = _message(result)
    if message:
        test["message"] = message
    tags = list(report.tags)
    if result.suspect:
        tags.append("simulated-pass")
    if tags:
        test["tags"] = tags
    labels: dict[str, Any] = {"provenance": str(result.provenance)}
    if result.kind:
        labels["kind"] = result.kind
    if result.scope:
        labels["scope"] = result.scope
    if result.nodes:
        labels["nodes"] = list(result.nodes)
    test["labels"] = labels
    test["type"] = "burn-in"
    extra: dict[str, Any] = {"durationRecorded": seconds is not None}
    if result.metrics:
        extra["metrics"] = metric_values(result.metrics)
    notes = detail_lines(result)
    if notes:
        extra["notes"] = notes
    if result.not_evaluated:
        extra["notEvaluated"] = [
            {"metric": n.metric, "reason": n.reason} for n in result.not_evaluated
        ]
    test["extra"] = extra
    return test


def render_ctrf(report: Report) -> str:
    tests = [_test(report, r) for r in report.results]
    statuses = [t["status"] for t in tests]
    start, stop = epoch_ms(report.started_at), epoch_ms(report.finished_at)
    summary: dict[str, Any] = {
        "tests": len(tests),
        **{s: statuses.count(s) for s in ("passed", "failed", "skipped", "pending", "other")},
        "start": start or 0,
        "stop": stop or 0,
        "extra": {
            "timesRecorded": start is not None and stop is not None,
            "errored": statuses.count("other"),
            "glimmerSummary": {
                "passed": report.summary.passed,
                "failed": report.summary.failed,
                "errored": report.summary.errored,
                "skipped": report.summary.skipped,
            },
        },
    }
    if start is not None and stop is not None and stop >= start:
        summary["duration"] = stop - start
    document: dict[str, Any] = {
        "reportFormat": "CTRF",
        "specVersion": SPEC_VERSION,
        "generatedBy": TOOL,
        "results": {
            "tool": {"name": TOOL, "version": __version__},
            "summary": summary,
            "tests": tests,
            "environment": {"reportName": report.title},
            "extra": {
                "run": {
                    "namespace": report.namespace,
                    "name": report.name,
                    "uid": report.uid,
                    "profile": report.profile,
                },
                "phase": report.phase_word,
                "baseline": report.baseline,
                "incomplete": report.incomplete or bool(report.missing_results),
                "provenance": str(report.provenance),
                "simulated": report.simulated,
                "certifiesSilicon": report.certifies_silicon,
                "flags": flag_lines(report),
            },
        },
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
