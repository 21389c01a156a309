"""Markdown (``burnin-report.md``, M3): for a pull request, a ticket, a chat thread.

Cells are escaped for the table they sit in: ``|`` becomes ``\\|`` (or the row would
grow columns), newlines become spaces, and ``<``/``>``/``&`` become entities, since
most Markdown renderers pass raw HTML through.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from glimmer.report.facts import detail_lines, flag_lines, unit_label, violation_line
from glimmer.report.model import Report, ResultView
from glimmer.report.words import NOT_RUN, phase_label, result_look

FILE_NAME: Final = "burnin-report.md"


def cell(text: str) -> str:
    out = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    out = out.replace("\\", "\\\\").replace("|", "\\|")
    return " ".join(out.split())


def _row(values: Iterable[str]) -> str:
    return "| " + " | ".join(cell(v) for v in values) + " |"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    return [_row(header), "|" + "---|" * len(header), *(_row(r) for r in rows)]


def _verdict(result: ResultView | None) -> str:
    look = result_look(result)
    return f"{look.shape} {look.word}".strip() if result is not None else NOT_RUN


def _detail(result: ResultView) -> str:
    parts = [result.message] if result.message else []
    parts += [violation_line(v) for v in result.violations]
    parts += detail_lines(result)
    return "; ".join(parts)


def render_markdown(report: Report) -> str:
    lines = [
        f"# Burn-in report: {cell(report.title)}" + "".join(f" `{t}`" for t in report.tags),
        "",
    ]
    lines += [f"> **{cell(line)}**" for line in flag_lines(report)]
    lines.append("")
    s = report.summary
    lines += _table(
        ["run phase", "passed", "failed", "errored", "skipped", "uid", "profile"],
        [
            [
                phase_label(report.phase_word),
                str(s.passed),
                str(s.failed),
                str(s.errored),
                str(s.skipped),
                report.uid or NOT_RUN,
                report.profile or NOT_RUN,
            ]
        ],
    )
    tests = list(dict.fromkeys(r.name for r in report.node_results))
    if report.nodes:
        lines += ["", "## Verdicts (node x test)", ""]
        rows = []
        for node in report.nodes:
            by_test = {r.name: r for r in report.node_results if node in r.nodes}
            rows.append([node, *(_verdict(by_test.get(t)) for t in tests)])
        lines += _table(["node", *tests], rows)
    lines += ["", "## Links (Pair / Group)", ""]
    if report.link_results:
        lines += _table(
            ["test", "scope", "nodes", "verdict", "detail"],
            [
                [r.name, r.scope, " + ".join(r.nodes), _verdict(r), _detail(r)]
                for r in report.link_results
            ],
        )
    else:
        lines.append("No Pair or Group results.")
    if report.run_results:
        lines += ["", "## Run refusals", ""]
        lines += _table(
            ["name", "verdict", "detail"],
            [[r.name, _verdict(r), _detail(r)] for r in report.run_results],
        )
    details = [r for r in report.node_results if _detail(r)]
    if details:
        lines += ["", "## Details", ""]
        lines += _table(
            ["test", "node", "verdict", "detail"],
            [
                [unit_label(r), " ".join(r.nodes) or NOT_RUN, _verdict(r), _detail(r)]
                for r in details
            ],
        )
    if report.checkpoints:
        lines += ["", "## Checkpoints (unjudged mid-run readings)", ""]
        lines += _table(
            ["sequence", "sent", "results read"],
            [[str(c.sequence), c.sent_at, str(len(c.results))] for c in report.checkpoints],
        )
    lines += ["", f"Source: {cell(report.source)}", ""]
    return "\n".join(lines)
