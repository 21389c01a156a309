"""JUnit XML (``junit.xml``, M3): one suite per node, one ``links`` suite, one ``run``.

CI systems read ``<failure>`` as "the code under test is wrong" and ``<error>`` as
"the test could not run", which is exactly Failed (hardware measured short) versus
Error (unjudged): so an Error is an ``<error>`` and never a ``<failure>``, whatever
else changes. A phase this version does not know is ``<error type="Unknown">``; an
open (Running) result is an ``<error type="Running">`` (no verdict yet is never a
pass); Skipped and Cancelled are ``<skipped>``. No ``time`` attribute is written
unless both ends of the result were recorded.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence
from typing import Final

from glimmer.report.facts import (
    detail_lines,
    duration_seconds,
    flag_lines,
    unit_label,
    violation_line,
    xml_safe,
)
from glimmer.report.model import Report, ResultView
from glimmer.verdict import Phase

FILE_NAME: Final = "junit.xml"
UNASSIGNED_SUITE: Final = "unassigned"


def suite_name(report: Report) -> str:
    tags = "".join(f" [{t}]" for t in report.tags)
    return f"{report.title}{tags}"


def _first_line(text: str) -> str:
    return text.splitlines()[0] if text else ""


def _outcome(case: ET.Element, result: ResultView) -> str:
    """Attach the outcome element; returns the counter it belongs to."""
    phase = result.phase
    message = xml_safe(result.message)
    if phase is Phase.PASSED:
        return "passed"
    if phase is Phase.FAILED:
        lines = [violation_line(v) for v in result.violations] or [
            "the runner itself declared Fail (a measured shortfall); no gate to point at: "
            "hardware acts"
        ]
        element = ET.SubElement(
            case, "failure", type="Failed", message=message or xml_safe(lines[0])
        )
        element.text = xml_safe("\n".join(lines))
        return "failures"
    if phase is Phase.ERROR:
        element = ET.SubElement(
            case, "error", type="Error", message=message or "no verdict: the test could not measure"
        )
        element.text = "Error is unjudged and retryable: it is not a hardware failure."
        return "errors"
    if phase in (Phase.SKIPPED, Phase.CANCELLED):
        ET.SubElement(case, "skipped", message=message or f"{phase}")
        return "skipped"
    if phase in (Phase.RUNNING, Phase.PENDING):
        ET.SubElement(
            case,
            "error",
            type="Running",
            message=f"no verdict yet: the result was still {phase} when delivered",
        )
        return "errors"
    ET.SubElement(
        case,
        "error",
        type="Unknown",
        message=xml_safe(f"unknown phase {result.phase_word!r}: no verdict can be read"),
    )
    return "errors"


def _case(suite: ET.Element, result: ResultView, *, classname: str) -> str:
    case = ET.SubElement(
        suite, "testcase", name=xml_safe(unit_label(result)), classname=xml_safe(classname)
    )
    seconds = duration_seconds(result)
    if seconds is not None:
        case.set("time", f"{seconds:.3f}")
    props = ET.SubElement(case, "properties")
    facts = [
        ("kind", result.kind),
        ("scope", result.scope),
        ("phase", result.phase_word),
        ("nodes", " ".join(result.nodes)),
        ("provenance", str(result.provenance)),
    ]
    facts += [(f"metric.{k}", v) for k, v in sorted(result.metrics.items())]
    for name, value in facts:
        if value:
            ET.SubElement(props, "property", name=xml_safe(name), value=xml_safe(value))
    notes = detail_lines(result)
    if result.message or notes:
        out = ET.SubElement(case, "system-out")
        out.text = xml_safe("\n".join(line for line in (result.message, *notes) if line))
    return _outcome(case, result)


def _suite(
    root: ET.Element, report: Report, *, name: str, results: Sequence[ResultView]
) -> dict[str, int]:
    suite = ET.SubElement(root, "testsuite", name=xml_safe(name))
    counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0, "passed": 0}
    for result in results:
        counts[_case(suite, result, classname=f"{report.title}.{name}")] += 1
        counts["tests"] += 1
    for key in ("tests", "failures", "errors", "skipped"):
        suite.set(key, str(counts[key]))
    return counts


def render_junit(report: Report) -> str:
    root = ET.Element("testsuites", name=xml_safe(suite_name(report)))
    props = ET.SubElement(root, "properties")
    for index, line in enumerate(flag_lines(report)):
        ET.SubElement(props, "property", name=f"glimmer.flag.{index}", value=xml_safe(line))
    for key, value in (
        ("run.uid", report.uid),
        ("run.phase", report.phase_word),
        ("run.profile", report.profile),
        ("source", report.source),
    ):
        if value:
            ET.SubElement(props, "property", name=key, value=xml_safe(value))
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    groups: list[tuple[str, list[ResultView]]] = []
    for node in report.nodes:
        groups.append((node, [r for r in report.node_results if node in r.nodes]))
    unassigned = [r for r in report.node_results if not r.nodes]
    if unassigned:
        groups.append((UNASSIGNED_SUITE, unassigned))
    groups.append(("links", list(report.link_results)))
    if report.run_results:
        groups.append(("run", list(report.run_results)))
    for name, results in groups:
        counts = _suite(root, report, name=name, results=results)
        for key in totals:
            totals[key] += counts[key]
    for key, total in totals.items():
        root.set(key, str(total))
    ET.indent(root)
    text = ET.tostring(root, encoding="unicode")
    # ElementTree writes a carriage return in element text raw, and every XML reader turns
    # a raw one into a newline: a runner's "\r" would not read back. Attributes already
    # carry it as &#13;, so every raw one left is in text, where the reference is exact.
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + text.replace("\r", "&#13;") + "\n"
