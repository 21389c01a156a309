"""The HTML report (``burn-in-report.html``, M3): one self-contained file.

No JavaScript, no network: styles are inline, charts are inline SVG from pygal with
its script removed (:mod:`glimmer.report.charts`), and a Content-Security-Policy
forbids any fetch, so the file reads the same from a laptop, an air-gapped lab or an
email attachment. The template is autoescaped; the only markup inserted unescaped
is the SVG that pygal serialised itself (its text nodes escaped by the XML writer).
"""

from __future__ import annotations

from typing import Any, Final

import jinja2

from glimmer.report.charts import Distribution, distributions
from glimmer.report.facts import (
    detail_lines,
    flag_lines,
    unit_label,
    violation_line,
)
from glimmer.report.model import Report, ResultView
from glimmer.report.template import TEMPLATE
from glimmer.report.words import LOOKS, NOT_RUN, look, node_look, phase_label, result_look
from glimmer.verdict import Phase
from glimmer.verdict.attention import ABSENT_URGENCY, needs_action, urgency
from glimmer.verdict.messages import SIM_PASS_WORDS

FILE_NAME: Final = "burn-in-report.html"

_ENV: Final = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
_TEMPLATE: Final = _ENV.from_string(TEMPLATE)
_LEGEND: Final = (Phase.PASSED, Phase.FAILED, Phase.ERROR, Phase.SKIPPED, Phase.CANCELLED)


def _detail(result: ResultView) -> list[str]:
    lines = [result.message] if result.message else []
    lines += [violation_line(v) for v in result.violations]
    return lines + detail_lines(result)


def _row(result: ResultView) -> dict[str, Any]:
    return {
        "name": unit_label(result),
        "scope": result.scope,
        "nodes": " + ".join(result.nodes) if result.link else ", ".join(result.nodes) or NOT_RUN,
        "look": result_look(result),
        "phase": result.phase_word,
        "detail": _detail(result),
        "provenance": str(result.provenance) + (f" ({SIM_PASS_WORDS})" if result.suspect else ""),
        "metrics": sorted(result.metrics.items()),
    }


def _deciding(report: Report, result: ResultView) -> list[str]:
    """The gate and value that decided a result needing action (M4), as delivered."""
    phase = result.phase
    if phase is Phase.FAILED and not result.violations:
        return ["the runner itself declared Fail (no gate recorded): hardware acts"]
    lines = []
    for violation in result.violations:
        gates = [g for g in report.gates_of(result.name) if g.metric == violation.metric]
        rule = f" {gates[0].comparison} {gates[0].value}" if gates and gates[0].known else ""
        value = result.metrics.get(violation.metric)
        read = f"read {value}" if value is not None else "not reported"
        lines.append(f"gate {violation.metric}{rule}: {read} ({violation_line(violation)})")
    if not lines:
        lines.append(result.message or f"no verdict: {result.phase_word or 'no phase'}")
    return lines


def _actions(report: Report) -> list[dict[str, Any]]:
    """Every result that needs someone, Failed first, then Error, unknown, open (M4)."""
    wanted = [r for r in report.results if needs_action(r.phase)]
    wanted.sort(key=lambda r: (urgency(r.phase), r.nodes, r.name))
    return [
        {
            "nodes": " + ".join(r.nodes) if r.link else ", ".join(r.nodes) or "(the run)",
            "test": unit_label(r),
            "look": result_look(r),
            "phase": r.phase_word,
            "deciding": _deciding(report, r),
        }
        for r in wanted
    ]


def _node_urgency(report: Report, node: str) -> int:
    found = [urgency(r.phase) for r in report.node_results if node in r.nodes]
    return min(found, default=ABSENT_URGENCY)


def _grid(report: Report) -> dict[str, Any]:
    tests = list(dict.fromkeys(r.name for r in report.node_results))
    rows = []
    # M4: failing nodes first; a stable sort keeps first-seen order within a phase.
    for node in sorted(report.nodes, key=lambda n: _node_urgency(report, n)):
        by_test = {r.name: r for r in report.node_results if node in r.nodes}
        cells = []
        for test in tests:
            result = by_test.get(test)
            cell = result_look(result)
            title = result.message if result is not None else "not run on this node"
            cells.append(
                {
                    "css": cell.css,
                    "shape": cell.shape,
                    "word": cell.word,
                    "title": title,
                    "phase": result.phase_word if result is not None else None,
                }
            )
        rows.append({"node": node, "cells": cells})
    return {"nodes": report.nodes, "tests": tests, "rows": rows}


def _chart(found: Distribution) -> dict[str, Any]:
    gate = found.gate
    rule = f" (gate {gate.comparison} {gate.value})" if gate.known else ""
    return {
        "svg": found.svg,
        "uniform": found.uniform,
        "one_line": (
            f"{gate.test}: {gate.metric}{rule}: all {len(found.values)} node(s) read "
            f"{next(iter(found.values.values()), 0):g}"
        ),
        "declared": ", ".join(found.declared_failing),
        "title": f"{gate.test}: {gate.metric}",
        "known": gate.known,
        "violators": ", ".join(found.violators),
        "outliers": ", ".join(found.outliers),
        "bands": [
            f"{b.label}: median {b.median:g}, allowed deviation {b.allowed:g} "
            f"({'below' if b.comparison == 'GreaterThanOrEqual' else 'above'} the median "
            f"fails); outliers: {', '.join(b.outliers) or 'none'}"
            for b in found.bands
        ],
        "unreadable": ", ".join(f"{n} ({v!r})" for n, v in found.unreadable.items()),
        "unreported": ", ".join(found.unreported),
        "unmeasurable": ", ".join(found.unmeasurable),
    }


def render_html(report: Report) -> str:
    flags = flag_lines(report)
    if report.simulated:
        banner = "sim"
    elif report.certifies_silicon:
        banner = "silicon"
    else:
        banner = "unknown"
    return _TEMPLATE.render(
        report=report,
        flags=flags,
        banner_class=banner,
        run_look=look(report.phase),
        run_word=phase_label(report.phase_word),
        legend=[LOOKS[p] for p in _LEGEND],
        not_run=NOT_RUN,
        grid=_grid(report),
        node_verdicts=[
            {"node": v.node, "look": node_look(v.verdict), "verdict": v.verdict, "reason": v.reason}
            for v in report.node_verdicts
        ],
        links=[_row(r) for r in report.link_results],
        refusals=[_row(r) for r in report.run_results],
        actions=_actions(report),
        charts=[_chart(d) for d in distributions(report) if not d.uniform],
        folded=[_chart(d)["one_line"] for d in distributions(report) if d.uniform],
        details=[_row(r) for r in report.node_results],
        identities=report.identities,
        fingerprint=sorted(report.fingerprint.items()),
    )
