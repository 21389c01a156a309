# ruff: noqa: E501 -- HTML markup lines; wrapping them would change the rendered whitespace
"""``glimmer coverage`` as JSON and as a self-contained HTML heatmap (N13).

The heatmap is the burn-in report's style (its stylesheet, its words and shapes per
phase from :mod:`glimmer.report.words`, so Fail and Error differ without colour), with
no script and a Content-Security-Policy that forbids any fetch: a table of fault x test
whose cells are the phases each case's ``glimmer run`` recorded, plus a column saying
whether the run was caught and by what.
"""

from __future__ import annotations

from typing import Any, Final

import jinja2
import markupsafe

from glimmer.local.coverage import (
    HEALTHY,
    HOST_REAL_NOTE,
    NODE,
    CaseOutcome,
    Coverage,
    Section,
    TestCell,
)
from glimmer.report.template import TEMPLATE
from glimmer.report.words import ABSENT_LOOK, Look, look
from glimmer.verdict import Phase
from glimmer.verdict.messages import SIM_PASS_WORDS

#: The document ``glimmer coverage -o json`` prints.
COVERAGE_KIND: Final = "BurnInCoverage"
API_VERSION: Final = "burnin.glimmer.ai/v1alpha1"

_STYLE: Final = (
    TEMPLATE[TEMPLATE.index("<style>") : TEMPLATE.index("</style>") + len("</style>")]
    # The heatmap keeps each cell to one line; what each row models and why it was
    # caught or missed is told below it, so the grid fits a laptop screen.
    + "<style>table.grid td.cell{white-space:nowrap}table.grid th a{color:inherit}"
    "dl.faults dt{font-weight:600;margin-top:.6rem}dl.faults dd{margin:.1rem 0 0 1.5rem}</style>"
)


#: A fault row's verdict in the heatmap: its own words and shapes, distinct from a phase's.
CAUGHT_LOOK: Final = Look("CAUGHT", "\u2714", "pass")
MISSED_LOOK: Final = Look("MISSED", "\u2716", "fail")


def _phase(word: str | None) -> Phase | None:
    try:
        return None if word is None else Phase(word)
    except ValueError:
        return None


def cell_look(cell: TestCell | None) -> Look:
    if cell is None or cell.phase is None:
        return ABSENT_LOOK
    return look(_phase(cell.phase))


def _cell_json(cell: TestCell) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "test": cell.name,
        "kind": cell.kind,
        "phase": cell.phase,
        "required": cell.required,
    }
    if cell.gate:
        entry["gate"] = cell.gate
    if cell.message:
        entry["message"] = cell.message
    return entry


def _case_json(coverage: Coverage, outcome: CaseOutcome) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "fault": outcome.case.fault,
        "scope": outcome.case.scope,
        "sim": outcome.case.spec,
        "models": outcome.case.story.models,
        "runPhase": outcome.phase,
        "exitCode": outcome.exit_code,
        "caught": outcome.caught,
        "caughtBy": [{"test": c.name, "phase": c.phase, "gate": c.gate} for c in outcome.catchers],
        "seconds": round(outcome.seconds, 2),
        "tests": [_cell_json(c) for c in outcome.cells],
    }
    if outcome.case.scope != NODE:
        entry["runAs"] = outcome.case.where
    if not outcome.caught:
        entry["caughtByKind"] = outcome.case.story.caught_by
    if outcome.problem:
        entry["problem"] = outcome.problem
    return entry


def coverage_json(coverage: Coverage) -> dict[str, Any]:
    """The whole coverage: control, every fault's case, the summary line."""
    return {
        "apiVersion": API_VERSION,
        "kind": COVERAGE_KIND,
        "profile": coverage.profile,
        "simulatedGpus": list(coverage.sims),
        "provenance": "sim",
        "controlPassed": coverage.control_passed,
        "sections": [
            {
                "scope": s.scope,
                "controlPassed": s.control_passed,
                "tests": [t.name for t in s.tests],
                "faults": [o.case.fault for o in s.faults],
            }
            for s in coverage.sections
        ],
        "summary": {
            "faults": len(coverage.counted),
            "caught": len(coverage.counted) - len(coverage.missed),
            "missed": [coverage.label(o) for o in coverage.missed],
            "line": coverage.summary_line(),
        },
        "control": [_case_json(coverage, o) for o in coverage.control],
        "faults": [_case_json(coverage, o) for o in coverage.faults],
        "seconds": round(coverage.seconds, 2),
        "jobs": coverage.jobs,
    }


def catch_words(outcome: CaseOutcome) -> str:
    """A row's verdict in words: who caught it and how, or what would."""
    if outcome.phase is None:
        return f"NOT JUDGED: {outcome.problem}"
    if outcome.caught:
        return (
            "; ".join(
                f"{c.name} ({look(_phase(c.phase)).word}: {c.gate})" for c in outcome.catchers
            )
            or f"run {outcome.phase}"
        )
    would = "Pass" if outcome.phase == str(Phase.PASSED) else f"end {outcome.phase}"
    return f"MISSED (the run would {would}); caught by {outcome.case.story.caught_by}"


def control_words(outcome: CaseOutcome) -> str:
    """The healthy control's row: it must Pass, or the coverage means nothing."""
    if outcome.phase is None:
        return f"control NOT JUDGED: {outcome.problem}"
    return f"control: {outcome.phase} (a healthy node must Pass)"


_PAGE: Final = (
    """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<title>Fault coverage: {{ profile }}</title>
"""
    + _STYLE
    + """
</head>
<body>
<div class="banner sim" role="alert">SIMULATED GPU ({{ sims }}): which modelled faults this profile catches; {{ sim_words }}</div>
<h1>Fault coverage: {{ profile }}</h1>
<div class="flag">{{ summary }}</div>
<p class="legend">Reading the cells (words and shapes, not only colour):
{% for l in legend %}<span class="cell {{ l.css }}">{{ l.shape }} {{ l.word }}</span>{% endfor %}
<span class="cell absent">{{ not_run }} not run: {{ host_real }}</span></p>
{% for section in sections %}<h2>{{ section.title }}</h2>
<div class="wide"><table class="grid" data-scope="{{ section.scope }}">
<tr><th>fault</th>{% for t in section.tests %}<th>{{ t }}</th>{% endfor %}<th>coverage</th></tr>
{% for row in section.rows %}<tr><th title="{{ row.models }}"><a href="#{{ row.anchor }}"><code>{{ row.fault }}</code></a></th>{% for c in row.cells %}<td class="cell {{ c.css }}" title="{{ c.title }}">{{ c.shape }} {{ c.word }}</td>{% endfor %}<td class="cell {{ row.run.css }}" data-caught="{{ row.caught }}">{{ row.run.shape }} {{ row.run_word }}</td></tr>
{% endfor %}</table></div>
<p class="caption">{{ section.how }} A row that reads MISSED would Pass {{ section.whom }} with that fault. The control row (healthy) must Pass, or this part of the coverage means nothing.</p>
<dl class="faults">
{% for row in section.rows %}<dt id="{{ row.anchor }}"><code>{{ row.fault }}</code>: {{ row.run.shape }} {{ row.run_word }}</dt>
<dd>{{ row.models }}<br>{{ row.words }}</dd>
{% endfor %}</dl>
{% endfor %}<p class="caption">{{ seconds }} s with {{ jobs }} case(s) at a time.</p>
</body>
</html>
"""
)
_ENV: Final = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
_TEMPLATE: Final = _ENV.from_string(_PAGE)


def _row(coverage: Coverage, outcome: CaseOutcome, section: Section) -> dict[str, Any]:
    by_name = {c.name: c for c in outcome.cells}
    cells = []
    for test in section.tests:
        cell = by_name.get(test.name)
        shown = cell_look(cell)
        title = "" if cell is None else (cell.gate or cell.message)
        cells.append({"css": shown.css, "shape": shown.shape, "word": shown.word, "title": title})
    run = look(_phase(outcome.phase))
    control = outcome.case.fault == HEALTHY
    caught = "control" if control else "caught" if outcome.caught else "missed"
    # The heat of the row: caught reads as good, missed as bad, whatever the run's phase.
    heat = run if control else CAUGHT_LOOK if outcome.caught else MISSED_LOOK
    label = coverage.label(outcome)
    return {
        "fault": label,
        "anchor": f"{section.scope.lower()}-" + "".join(c if c.isalnum() else "-" for c in label),
        "models": outcome.case.story.models,
        "cells": cells,
        "run": heat,
        "run_word": f"{heat.word} (run {run.word})" if outcome.phase else "NOT JUDGED",
        "caught": caught,
        "words": control_words(outcome) if control else catch_words(outcome),
    }


_HOW: Final = {
    "Node": "Each row is one <code>glimmer run --sim PART:FAULT</code> of the profile's Node tests; a cell is the phase that run recorded.",
    "Pair": "Each row is one simulated pair on this host: a <code>glimmer run --role server</code> and a <code>--role client</code>, the fault on the side the fabric matrix names; a cell is the phase the client (which decides) recorded.",
    "Group": "Each row is one simulated group on this host: every <code>glimmer run --rank R</code>, then <code>glimmer merge</code>, the fault on the rank the fabric matrix names; a cell is the phase the merge recorded.",
}


def _section(coverage: Coverage, section: Section) -> dict[str, Any]:
    title = "Faults x tests" if section.scope == NODE else f"{section.scope} faults x tests"
    return {
        "scope": section.scope,
        "title": title,
        "tests": [t.name for t in section.tests],
        "rows": [_row(coverage, o, section) for o in (*section.control, *section.faults)],
        "how": markupsafe.Markup(_HOW[section.scope]),
        "whom": "a node" if section.scope == NODE else f"a {section.scope.lower()}",
    }


def coverage_html(coverage: Coverage) -> str:
    legend = [look(p) for p in (Phase.PASSED, Phase.FAILED, Phase.ERROR, Phase.SKIPPED)]
    return _TEMPLATE.render(
        profile=coverage.profile,
        sims=", ".join(coverage.sims),
        sim_words=SIM_PASS_WORDS,
        summary=coverage.summary_line(),
        legend=legend,
        not_run=ABSENT_LOOK.word,
        host_real=HOST_REAL_NOTE,
        sections=[_section(coverage, s) for s in coverage.sections if s.control_passed],
        seconds=f"{coverage.seconds:.1f}",
        jobs=coverage.jobs,
    )
