"""Every relative link in README.md, docs/*.md and docs/vendors/*.md resolves inside the repository.

A link to a file that is not in the repo (or to a heading that is not in the file) is a
doc that lies about where to look. Links inside code (fenced blocks and `spans`) are not
links and are skipped; links with a scheme (https:, mailto:) are not checked here.
Anchors are matched against GitHub's heading ids: lower-cased, punctuation other than
``-`` and ``_`` dropped, spaces made ``-``, repeats numbered ``-1``, ``-2``; and against
explicit HTML anchors (``<a id="e10"></a>``, ``<a name="...">``), which is how
docs/rules.md gives each rule the id ``rules.md#e10`` or ``rules.md#i18``.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOCUMENTS = sorted(
    [REPO / "README.md", *(REPO / "docs").glob("*.md"), *(REPO / "docs" / "vendors").glob("*.md")]
)

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")
_INLINE_LINK = re.compile(
    r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)"
)
_REFERENCE = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
_HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_HTML_ANCHOR = re.compile(r"""<a\s+(?:[^>]*\s)?(?:id|name)\s*=\s*["']([^"']+)["']""", re.IGNORECASE)


def outside_fences(text: str) -> list[tuple[int, str]]:
    """(line number, line) for every line outside fenced code."""
    lines: list[tuple[int, str]] = []
    fence: str | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        opened = _FENCE.match(line)
        if fence is not None:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = None
            continue
        if opened:
            fence = opened.group(1)
            continue
        lines.append((number, line))
    return lines


def links(text: str) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    for number, raw in outside_fences(text):
        line = _CODE_SPAN.sub("", raw)
        found.extend((number, m.group(1)) for m in _INLINE_LINK.finditer(line))
        reference = _REFERENCE.match(line)
        if reference:
            found.append((number, reference.group(1)))
    return found


def slug(heading: str) -> str:
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link reads as its text
    text = text.replace("`", "").replace("*", "").strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(text: str) -> set[str]:
    seen: Counter[str] = Counter()
    ids: set[str] = set()
    for _, line in outside_fences(text):
        ids.update(_HTML_ANCHOR.findall(_CODE_SPAN.sub("", line)))
        heading = _HEADING.match(line)
        if not heading:
            continue
        base = slug(heading.group(2))
        ids.add(f"{base}-{seen[base]}" if seen[base] else base)
        seen[base] += 1
    return ids


def broken_links(document: Path, *, root: Path) -> list[str]:
    """What is wrong with each relative link of ``document`` (empty when none is)."""
    text = document.read_text()
    problems: list[str] = []
    for number, target in links(text):
        if not target or _SCHEME.match(target):
            continue
        where = f"{document.relative_to(root)}:{number}: {target}"
        path_part, _, anchor = target.partition("#")
        if path_part.startswith("/"):
            problems.append(f"{where}: an absolute path is not a link into the repository")
            continue
        resolved = (document.parent / path_part).resolve() if path_part else document
        if not resolved.is_relative_to(root):
            problems.append(f"{where}: points outside the repository")
        elif not resolved.exists():
            problems.append(f"{where}: no such file in the repository")
        elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved.read_text()):
            problems.append(f"{where}: no heading with id #{anchor} in {resolved.name}")
    return problems


@pytest.mark.parametrize(
    "document", DOCUMENTS, ids=[d.relative_to(REPO).as_posix() for d in DOCUMENTS]
)
def test_every_relative_link_in_the_docs_resolves(document: Path) -> None:
    assert broken_links(document, root=REPO) == []


def test_the_checker_finds_broken_links_and_ignores_code(tmp_path: Path) -> None:
    """The check can fail: each kind of broken link is reported, code is not read."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "there.md").write_text(
        '# A `code` heading!\n\n## Twice\n## Twice\n<a id="i18"></a>\n`<a id="spanned"></a>`\n'
    )
    page = tmp_path / "docs" / "page.md"
    page.write_text(
        "\n".join(
            [
                "# Page",
                "[ok](there.md) [ok](there.md#a-code-heading) [ok](there.md#twice-1)",
                "[ok](#page) [web](https://example.com/x.md) ![img](there.md) [ok](there.md#i18)",
                "`[in a span](missing.md)`",
                "```",
                "[in a fence](missing.md)",
                "```",
                "[gone](missing.md)",
                "[bad anchor](there.md#nowhere)",
                "[outside](../../elsewhere.md)",
                "[absolute](/srv/shared/reference/semantics.md)",
                "[ref]: gone-too.md",
                "[in code, not an anchor](there.md#spanned)",
            ]
        )
    )
    found = broken_links(page, root=tmp_path)
    assert [problem.split(": ", 1)[0] for problem in found] == [
        "docs/page.md:8",
        "docs/page.md:9",
        "docs/page.md:10",
        "docs/page.md:11",
        "docs/page.md:12",
        "docs/page.md:13",
    ]
    assert "no such file" in found[0] and "#nowhere" in found[1]
    assert "outside the repository" in found[2] and "absolute path" in found[3]
