"""Sentences every format states the same way: the flags, who acts, durations.

Each renderer spells a report differently, but the *claims* (this run is a
baseline; it is INCOMPLETE; nothing was measured on silicon; these gates were not
evaluated) are made here once, so no format can word one more optimistically.
"""

from __future__ import annotations

import re
from typing import Final

from glimmer.contract.envelope import parse_time
from glimmer.report.model import Report, ResultView, ViolationView
from glimmer.verdict import Cause, Provenance
from glimmer.verdict.messages import SIM_PASS_WORDS

WHO_ACTS: Final[dict[Cause, str]] = {
    Cause.MEASUREMENT: "hardware: the node measured short (repair or replace it)",
    Cause.EVIDENCE: "nobody yet: the metric was not measured usably (unjudged evidence)",
    Cause.AUTHORING: "the profile author: the threshold itself is unusable",
}


_XML_BAD: Final = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_safe(text: str) -> str:
    """``text`` with every character XML 1.0 cannot carry replaced by U+FFFD: a
    runner's NUL or escape byte must not make the whole report unreadable."""
    return _XML_BAD.sub("\ufffd", text)


def provenance_line(report: Report) -> str:
    if report.simulated:
        gpu = f" ({report.simulated_gpu})" if report.simulated_gpu else ""
        return (
            f"SIMULATED GPU{gpu}: no silicon was measured; this report certifies no node "
            "for service"
        )
    if report.certifies_silicon:
        return "SILICON: measured on real hardware; the run certifies silicon"
    if report.provenance is Provenance.SILICON:
        return "SILICON: measured on real hardware, but the run does not certify silicon"
    return "PROVENANCE UNKNOWN: nothing declared silicon; this report certifies no node"


def flag_lines(report: Report) -> list[str]:
    """The run-level warnings, in the order every format prints them."""
    lines = [provenance_line(report)]
    if report.baseline:
        lines.append("BASELINE run: it measures and records, it has no gates and certifies nothing")
    if report.incomplete:
        lines.append(
            f"INCOMPLETE: no terminal verdict was delivered (phase at last delivery: "
            f"{report.phase_word or 'none'}); open results have no verdict"
            if not report.stopped
            else f"INCOMPLETE: the run stopped early ({report.stopped})"
        )
    if report.missing_results:
        lines.append(
            f"INCOMPLETE: the summary counts {report.missing_results} result(s) this input "
            "does not carry; they are not shown and not guessed"
        )
    if not report.gates_from_plan:
        lines.append(
            "Thresholds: this input carries no plan, so only gates named by a violation or a "
            "not-evaluated entry are known, and no threshold value is drawn unless known"
        )
    return lines


def duration_seconds(result: ResultView) -> float | None:
    """The result's wall time, only when both ends were recorded (M2: never ``0``)."""
    if not result.started_at or not result.finished_at:
        return None
    try:
        span = parse_time(result.finished_at) - parse_time(result.started_at)
    except ValueError:
        return None
    seconds = span.total_seconds()
    return seconds if seconds >= 0 else None


def epoch_ms(text: str | None) -> int | None:
    if not text:
        return None
    try:
        return int(parse_time(text).timestamp() * 1000)
    except ValueError:
        return None


def violation_line(violation: ViolationView) -> str:
    who = WHO_ACTS[violation.who_acts]
    reason = violation.reason or f"{violation.metric}: {violation.kind}"
    return f"{reason} [{violation.kind}; {violation.cause or 'no cause given'}: {who}]"


def unit_label(result: ResultView) -> str:
    """A result's name as a reader finds it: the test, and the link's nodes if any."""
    if result.link and result.nodes:
        return f"{result.name} ({result.scope}: {' + '.join(result.nodes)})"
    return result.name


def detail_lines(result: ResultView) -> list[str]:
    """Everything beside the phase that a reader must see: not-evaluated gates,
    unmeasurable names, dropped artifacts, cut soaks (M2)."""
    lines: list[str] = []
    for item in result.not_evaluated:
        lines.append(f"not evaluated: {item.metric} ({item.reason})")
    if result.unmeasurable:
        lines.append("unmeasurable on this hardware: " + ", ".join(result.unmeasurable))
    for artifact in result.dropped_artifacts:
        size = f", {artifact.size_bytes} bytes" if artifact.size_bytes is not None else ""
        lines.append(f"artifact {artifact.name} DROPPED ({artifact.dropped}{size})")
    if result.segments is not None and result.segments.completed < result.segments.required:
        lines.append(
            f"soak cut short: {result.segments.completed} of {result.segments.required} "
            "segment(s) completed"
        )
    if result.suspect:
        lines.append(
            f"{SIM_PASS_WORDS} (a simulated pass of a hardware-dependent check certifies no node)"
        )
    return lines
