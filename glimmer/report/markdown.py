"""Markdown (``burnin-report.md``, M3): for a pull request, a ticket, a chat thread.

A Markdown file is a document people trust, and most of its text came from somewhere
else: run, test and node names, runner messages, violation reasons, times. None of those
bytes may become markup - a link (``[click](javascript:...)``), an image that phones
home, a heading that forges a verdict, raw HTML - so every piece of text the input
supplied is written as a **code span** (:func:`literal`), and only this module's own
words (verdict words, counters, table headers) are written as plain Markdown.

Why code spans rather than backslash escapes: inside a code span CommonMark interprets
nothing (no emphasis, link, autolink, entity or HTML), and forges such as GitHub's
extended autolinks (``www.``, ``https://``), ``#123`` issue references, ``@`` mentions
and commit SHAs are not applied inside code either; backslash escapes cannot stop those.
The reader sees exactly the input's text (whitespace runs become one space, NUL becomes
U+FFFD as CommonMark reads it), and a table keeps its columns: a ``|`` is written between
code spans as ``\\|``, since a pipe splits a GFM table cell even inside a code span.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

from glimmer.report.facts import detail_lines, flag_lines, unit_label, violation_line
from glimmer.report.model import Report, ResultView
from glimmer.report.words import NOT_RUN, UNKNOWN_LOOK, look, node_look, result_look
from glimmer.verdict import Phase

FILE_NAME: Final = "burnin-report.md"
_BACKTICKS: Final = re.compile("`+")


def inline_text(text: str) -> str:
    """``text`` as one line, the way it reads once rendered: whitespace runs are one
    space (a newline would end a table row), NUL is U+FFFD (as CommonMark reads it)."""
    return " ".join(text.replace("\0", "\ufffd").split())


def _code_span(text: str) -> str:
    """``text`` (no ``|``, no newline) as one code span whose content reads back exactly."""
    fence = "`" * (max((len(m) for m in _BACKTICKS.findall(text)), default=0) + 1)
    pad = (
        text.startswith("`")
        or text.endswith("`")
        or (text.startswith(" ") and text.endswith(" ") and text.strip(" ") != "")
    )
    body = f" {text} " if pad else text
    return f"{fence}{body}{fence}"


def literal(text: str) -> str:
    """Input-supplied ``text`` as inert Markdown: code spans joined by escaped pipes.

    Nothing in ``text`` can open a link, image, heading, emphasis or HTML, nor add a
    table column; a reader sees ``inline_text(text)``."""
    return "\\|".join(_code_span(piece) if piece else "" for piece in inline_text(text).split("|"))


def _row(values: Iterable[str]) -> str:
    """One table row of cells already written as Markdown (:func:`literal` or our words)."""
    return "| " + " | ".join(values) + " |"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    return [_row(header), "|" + "---|" * len(header), *(_row(r) for r in rows)]


def _run_phase(word: str) -> str:
    """The run phase as :func:`glimmer.report.words.phase_label` says it, the input's
    word (when it is not one we know) as a literal."""
    try:
        return look(Phase(word)).word
    except ValueError:
        return f"UNKNOWN ({literal(repr(word))})" if word else "UNKNOWN (no phase delivered)"


def _verdict(result: ResultView | None) -> str:
    seen = result_look(result)
    return f"{seen.shape} {seen.word}".strip() if result is not None else NOT_RUN


def _node_verdict(word: str) -> str:
    seen = node_look(word)
    return f"{seen.shape} {seen.word}" if seen is not UNKNOWN_LOOK else f"UNKNOWN ({literal(word)})"


def _detail(result: ResultView) -> str:
    parts = [result.message] if result.message else []
    parts += [violation_line(v) for v in result.violations]
    parts += detail_lines(result)
    return "; ".join(parts)


def render_markdown(report: Report) -> str:
    lines = [
        f"# Burn-in report: {literal(report.title)}" + "".join(f" `{t}`" for t in report.tags),
        "",
    ]
    lines += [f"> **{literal(line)}**" for line in flag_lines(report)]
    lines.append("")
    s = report.summary
    lines += _table(
        ["run phase", "passed", "failed", "errored", "skipped", "uid", "profile"],
        [
            [
                _run_phase(report.phase_word),
                str(s.passed),
                str(s.failed),
                str(s.errored),
                str(s.skipped),
                literal(report.uid) or NOT_RUN,
                literal(report.profile) or NOT_RUN,
            ]
        ],
    )
    tests = list(dict.fromkeys(r.name for r in report.node_results))
    if report.nodes:
        lines += ["", "## Verdicts (node x test)", ""]
        rows = []
        for node in report.nodes:
            by_test = {r.name: r for r in report.node_results if node in r.nodes}
            rows.append([literal(node), *(_verdict(by_test.get(t)) for t in tests)])
        lines += _table(["node", *(literal(t) for t in tests)], rows)
    if report.node_verdicts:
        lines += ["", "## Node verdicts (what this run established per node)", ""]
        lines += _table(
            ["node", "verdict", "why not Passed"],
            [
                [literal(v.node), _node_verdict(v.verdict), literal(v.reason) or NOT_RUN]
                for v in report.node_verdicts
            ],
        )
    lines += ["", "## Links (Pair / Group)", ""]
    if report.link_results:
        lines += _table(
            ["test", "scope", "nodes", "verdict", "detail"],
            [
                [
                    literal(r.name),
                    r.scope,  # Pair or Group: what makes it a link result
                    literal(" + ".join(r.nodes)),
                    _verdict(r),
                    literal(_detail(r)),
                ]
                for r in report.link_results
            ],
        )
    else:
        lines.append("No Pair or Group results.")
    if report.run_results:
        lines += ["", "## Run refusals", ""]
        lines += _table(
            ["name", "verdict", "detail"],
            [[literal(r.name), _verdict(r), literal(_detail(r))] for r in report.run_results],
        )
    details = [r for r in report.node_results if _detail(r)]
    if details:
        lines += ["", "## Details", ""]
        lines += _table(
            ["test", "node", "verdict", "detail"],
            [
                [
                    literal(unit_label(r)),
                    literal(" ".join(r.nodes)) or NOT_RUN,
                    _verdict(r),
                    literal(_detail(r)),
                ]
                for r in details
            ],
        )
    if report.checkpoints:
        lines += ["", "## Checkpoints (unjudged mid-run readings)", ""]
        lines += _table(
            ["sequence", "sent", "results read"],
            [
                [str(c.sequence), literal(c.sent_at), str(len(c.results))]
                for c in report.checkpoints
            ],
        )
    lines += ["", f"Source: {literal(report.source)}", ""]
    return "\n".join(lines)
