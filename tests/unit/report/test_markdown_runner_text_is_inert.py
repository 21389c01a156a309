"""No runner byte ever becomes markup in a report people trust.

Every string of a report view that came from the input (run, test and node names,
messages, violation reasons, metric names, times, artifact names, fingerprints ...) is
drawn from hostile text: Markdown links, images, autolinks, headings, raw HTML,
backticks, pipes, entities, NUL and line breaks. Each report is rendered twice: as
drawn, and with every drawn string swapped for an inert placeholder (``r0x``, ``r1x``,
...). The oracle is a real parser of each format:

- Markdown (markdown-it-py, CommonMark + GFM tables): no link, image or HTML token
  anywhere; the same blocks (headings, tables, rows, cells) as the placeholder twin; the
  same text outside code spans (runner text only ever adds code spans and the pipes
  between them); and every drawn string reads back.
- HTML (the standard library's HTMLParser): the same elements and attribute names as
  the twin (inside inline SVG, the same kinds of element), and every string reads back.
- JUnit (ElementTree), CTRF and NVVS (json): the output parses, has the same elements /
  keys as the twin, and every string the twin shows reads back exactly, as text.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator, Mapping
from dataclasses import fields, is_dataclass, replace
from html.parser import HTMLParser
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from markdown_it.token import Token

from glimmer.report import render
from glimmer.report.facts import xml_safe
from glimmer.report.markdown import inline_text, literal
from glimmer.report.model import (
    ArtifactView,
    Checkpoint,
    Gate,
    NodeIdentity,
    NotEvaluatedView,
    Report,
    ResultView,
    SegmentsView,
    Summary,
    ViolationView,
)
from glimmer.verdict import Cause, Phase, Provenance

HOSTILE = (
    "[click](javascript:alert(1))",
    "![x](https://evil.example/pixel.png)",
    "[ref]",
    "[ref]: https://evil.example",
    "[^1]",
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "<!-- hidden -->",
    "<https://evil.example>",
    "https://evil.example/x",
    "www.evil.example",
    "mallory@evil.example",
    "# FORGED: PASS",
    "\n# FORGED\n",
    "\n===\n",
    "\n---\n",
    "> quoted",
    "- item",
    "`",
    "``",
    " ` ",
    "|",
    "\\|",
    "\\",
    "&amp;",
    "&#60;b&#62;",
    "*",
    "**bold**",
    "_em_",
    "~~gone~~",
    "$x$",
    "#123",
    "@user",
    "\x00",
    "\r\n",
    "\r",
    "\t",
    "  ",
    '"',
    "'",
    "{#id}",
    "\u2028",
    "\ufeff",
)
#: Words the renderers decide by (phases, scopes, causes, provenance, fixed values): a
#: drawn string equal to one of them would change the report's shape, not its text.
FIXED = frozenset(
    {str(p) for p in Phase}
    | {str(c) for c in Cause}
    | {str(p) for p in Provenance}
    | {"Node", "Pair", "Group", "600", "671.2", "0", "n/a", "1", "2", "3"}
)
TIMES = ("2026-11-30T08:00:00Z", "2026-11-30T08:12:30Z")
VALUES = ("671.2", "0", "n/a", "600", "-3")

hostile_text = (
    st.lists(st.one_of(st.sampled_from(HOSTILE), st.text(max_size=6)), min_size=1, max_size=4)
    .map("".join)
    .filter(lambda s: inline_text(s) != "" and s not in FIXED)
)


class Drawn:
    """The strings one example drew, each with its placeholder."""

    def __init__(self, draw: Callable[[st.SearchStrategy[Any]], Any]) -> None:
        self.draw = draw
        self.table: dict[str, str] = {}

    def text(self) -> str:
        value: str = self.draw(hostile_text)
        self.table.setdefault(value, f"r{len(self.table)}x")
        return value

    def maybe(self) -> str:
        return self.text() if self.draw(st.booleans()) else ""

    def pick(self, pool: list[str]) -> str:
        return str(self.draw(st.sampled_from(pool)))


@st.composite
def reports(draw: Callable[[st.SearchStrategy[Any]], Any]) -> tuple[Report, dict[str, str]]:
    d = Drawn(draw)
    tests = [d.text() for _ in range(draw(st.integers(1, 3)))]
    nodes = [d.text() for _ in range(draw(st.integers(1, 3)))]
    metric_names = [d.text() for _ in range(2)]
    results = []
    for _ in range(draw(st.integers(1, 5))):
        scope = draw(st.sampled_from(["Node", "Node", "Pair", "Group", ""]))
        on = draw(st.lists(st.sampled_from(nodes), min_size=1, max_size=2, unique=True))
        metric = d.pick(metric_names)
        results.append(
            ResultView(
                name=d.pick(tests),
                kind=draw(st.sampled_from(["", "gpu-burn"])) or d.maybe(),
                phase_word=draw(st.sampled_from([str(p) for p in Phase])) or d.text(),
                scope=scope,
                nodes=tuple(on if scope else on[:1]),
                started_at=draw(st.sampled_from([None, TIMES[0]])) or d.maybe() or None,
                finished_at=draw(st.sampled_from([None, TIMES[1]])),
                metrics={metric: draw(st.sampled_from(VALUES))},
                message=d.maybe(),
                violations=tuple(
                    ViolationView(
                        index=0,
                        metric=metric,
                        cause=draw(st.sampled_from([str(c) for c in Cause])) or d.text(),
                        kind=d.text(),
                        reason=d.maybe(),
                    )
                    for _ in range(draw(st.integers(0, 1)))
                ),
                not_evaluated=tuple(
                    NotEvaluatedView(metric=d.text(), reason=d.text())
                    for _ in range(draw(st.integers(0, 1)))
                ),
                unmeasurable=tuple(d.text() for _ in range(draw(st.integers(0, 1)))),
                artifacts=tuple(
                    ArtifactView(name=d.text(), dropped=d.maybe(), size_bytes=7)
                    for _ in range(draw(st.integers(0, 1)))
                ),
                segments=draw(st.sampled_from([None, SegmentsView(1, 3, 60)])),
                provenance=draw(st.sampled_from(list(Provenance))),
                suspect=draw(st.booleans()),
            )
        )
    gate = Gate(
        test=d.pick(tests),
        metric=d.pick(metric_names),
        comparison="GreaterThanOrEqual",
        value=draw(st.sampled_from(["600", ""])),
    )
    report = Report(
        namespace=d.text(),
        name=d.text(),
        uid=d.maybe(),
        phase_word=draw(st.sampled_from(["", *(str(p) for p in Phase)])) or d.text(),
        incomplete=draw(st.booleans()),
        baseline=draw(st.booleans()),
        results=tuple(results),
        summary=Summary(passed=1, failed=2, errored=3, skipped=0),
        source=d.text(),
        profile=d.maybe(),
        cluster=d.maybe(),
        sent_at=d.maybe(),
        started_at=d.maybe() or None,
        cancel_reason=d.maybe() or None,
        fingerprint={d.pick(nodes): d.text()},
        checkpoints=(Checkpoint(sequence=1, sent_at=d.text(), results=()),),
        gates=(gate,),
        identities=(
            NodeIdentity(node=d.pick(nodes), gpus=(d.text(),), os_image=d.text(), kernel=""),
        ),
        provenance=draw(st.sampled_from(list(Provenance))),
        simulated_gpu=d.maybe(),
        stopped=d.maybe(),
    )
    return report, d.table


def swap(obj: Any, table: Mapping[str, str]) -> Any:
    """``obj`` with every drawn string replaced by its placeholder (field by field)."""
    if isinstance(obj, str):
        return table.get(obj, obj) if type(obj) is str else obj
    if isinstance(obj, tuple):
        return tuple(swap(x, table) for x in obj)
    if isinstance(obj, Mapping):
        return {swap(k, table): swap(v, table) for k, v in obj.items()}
    if is_dataclass(obj) and not isinstance(obj, type):
        return replace(obj, **{f.name: swap(getattr(obj, f.name), table) for f in fields(obj)})
    return obj


def twins(drawn: tuple[Report, dict[str, str]]) -> tuple[Report, Report, dict[str, str]]:
    report, table = drawn
    return report, swap(report, table), table


def assert_reads_back(
    table: Mapping[str, str],
    *,
    shown_by_twin: str,
    shown: str,
    spelling: Callable[[str], str] = lambda s: s,
) -> None:
    """Every drawn string whose placeholder the twin shows is shown, as text."""
    for value, placeholder in table.items():
        if placeholder in shown_by_twin:
            forms = {spelling(value), spelling(repr(value))}
            assert any(f in shown for f in forms), (value, placeholder)


# --- Markdown ----------------------------------------------------------------------------

MARKDOWN = MarkdownIt("commonmark").enable(["table", "strikethrough"])
MARKUP = frozenset({"link_open", "image", "html_block", "html_inline"})


def tokens(text: str) -> list[Token]:
    return MARKDOWN.parse(text)


def every_token(found: list[Token]) -> Iterator[Token]:
    for token in found:
        yield token
        yield from every_token(token.children or [])


def template_text(inline: Token) -> str:
    """What an inline says outside its code spans (pipes between spans left out)."""
    parts = []
    for child in inline.children or []:
        if child.type == "text":
            parts.append(child.content.replace("|", ""))
        elif child.type != "code_inline":
            parts.append(f"<{child.type}>")
    return "".join(parts)


def visible_text(found: list[Token]) -> str:
    """Every inline as a reader sees it (code span contents included), one per line."""
    return "\n".join(
        "".join(c.content for c in t.children or [] if c.type in ("text", "code_inline"))
        for t in found
        if t.type == "inline"
    )


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(reports())
def test_markdown_runner_text_never_becomes_a_link_image_heading_or_html(
    drawn: tuple[Report, dict[str, str]],
) -> None:
    report, twin, table = twins(drawn)
    text = render(report, "markdown")["burnin-report.md"]
    twin_text = render(twin, "markdown")["burnin-report.md"]
    found, expected = tokens(text), tokens(twin_text)
    markup = [t.type for t in every_token(found) if t.type in MARKUP]
    assert not markup, text
    assert [(t.type, t.tag) for t in found] == [(t.type, t.tag) for t in expected], text
    assert sum(t.type == "heading_open" for t in found) == sum(
        t.type == "heading_open" for t in expected
    )
    inlines = [t for t in found if t.type == "inline"]
    twin_inlines = [t for t in expected if t.type == "inline"]
    for inline, twin_inline in zip(inlines, twin_inlines, strict=True):
        assert template_text(inline) == template_text(twin_inline), inline.content
    assert_reads_back(
        table,
        shown_by_twin=visible_text(expected),
        shown=visible_text(found),
        spelling=inline_text,
    )


@given(hostile_text)
def test_markdown_literal_reads_back_exactly_as_one_code_only_inline(text: str) -> None:
    # Prose around the literal, and a table cell (no prose: "x " must never be stripped
    # from the literal's own text, which may start with it).
    for before, after, source in (
        ("x ", " y", f"x {literal(text)} y"),
        ("", "", f"| a |\n|---|\n| {literal(text)} |"),
    ):
        inline = [t for t in tokens(source) if t.type == "inline"][-1]  # a table: its cell
        kinds = {c.type for c in inline.children or []}
        assert kinds <= {"text", "code_inline"}, source
        shown = "".join(c.content for c in inline.children or [])
        assert shown == f"{before}{inline_text(text)}{after}", source


# --- HTML --------------------------------------------------------------------------------


class _Elements(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.outside_svg: list[tuple[str, str, tuple[str, ...]]] = []
        self.inside_svg: set[tuple[str, tuple[str, ...]]] = set()
        self.texts: list[str] = []
        self._svg_depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        names = tuple(sorted(name for name, _ in attrs))
        self.texts.extend(value for _, value in attrs if value)
        if tag == "svg" or self._svg_depth:
            self._svg_depth += 1
            self.inside_svg.add((tag, names))
        else:
            self.outside_svg.append(("start", tag, names))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        if self._svg_depth:
            self._svg_depth -= 1
        else:
            self.outside_svg.append(("end", tag, ()))

    def handle_data(self, data: str) -> None:
        self.texts.append(data)

    def handle_comment(self, data: str) -> None:
        self.outside_svg.append(("comment", data, ()))


def elements(text: str) -> _Elements:
    parser = _Elements()
    parser.feed(text)
    parser.close()
    return parser


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(reports())
def test_html_runner_text_never_becomes_an_element_or_attribute(
    drawn: tuple[Report, dict[str, str]],
) -> None:
    report, twin, table = twins(drawn)
    got = elements(render(report, "html")["burn-in-report.html"])
    want = elements(render(twin, "html")["burn-in-report.html"])
    assert got.outside_svg == want.outside_svg
    assert got.inside_svg == want.inside_svg
    assert not any(name.startswith("on") for _, names in got.inside_svg for name in names)
    assert_reads_back(table, shown_by_twin="\n".join(want.texts), shown="\n".join(got.texts))


# --- JUnit, CTRF, NVVS ---------------------------------------------------------------------


def xml_shape_and_texts(text: str) -> tuple[list[tuple[str, tuple[str, ...]]], str]:
    root = ET.fromstring(text)
    shape = [(e.tag, tuple(sorted(e.attrib))) for e in root.iter()]
    texts = [v for e in root.iter() for v in (*e.attrib.values(), e.text or "")]
    return shape, "\n".join(texts)


def json_strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from json_strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from json_strings(item)


def json_skeleton(value: Any) -> Any:
    """The document's shape: types, list lengths and how many keys each object has."""
    if isinstance(value, dict):
        return ("object", sorted(map(repr, map(json_skeleton, value.values()))))
    if isinstance(value, list):
        return ("array", [json_skeleton(v) for v in value])
    return type(value).__name__


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(reports())
def test_junit_ctrf_and_nvvs_parse_and_carry_runner_text_as_text(
    drawn: tuple[Report, dict[str, str]],
) -> None:
    report, twin, table = twins(drawn)
    shape, texts = xml_shape_and_texts(render(report, "junit")["junit.xml"])
    twin_shape, twin_texts = xml_shape_and_texts(render(twin, "junit")["junit.xml"])
    assert shape == twin_shape
    assert_reads_back(table, shown_by_twin=twin_texts, shown=texts, spelling=xml_safe)
    for fmt in ("ctrf", "nvvs-json"):
        files, twin_files = render(report, fmt), render(twin, fmt)
        assert len(files) == len(twin_files), fmt  # a node's file name is not its text
        documents = [json.loads(content) for content in files.values()]
        twin_documents = [json.loads(content) for content in twin_files.values()]
        assert sorted(map(repr, map(json_skeleton, documents))) == sorted(
            map(repr, map(json_skeleton, twin_documents))
        ), fmt
        assert_reads_back(
            table,
            shown_by_twin="\n".join(s for d in twin_documents for s in json_strings(d)),
            shown="\n".join(s for d in documents for s in json_strings(d)),
        )
