"""The controllers' import picture in docs/development.md is the code's import graph.

A diagram drawn once goes stale the day someone adds an import; a reader trusts the
picture over the contracts in pyproject.toml. So the arrows of the mermaid block marked
``controllers-import-graph`` must be exactly the package-level imports among the boxes it
draws from a controllers package: an arrow the code lacks fails, and so does an import
the picture leaves out. (The layers below, engine, api, verdict and so on, are drawn as
destinations only; their own imports are the layers contract's business.)
"""

from __future__ import annotations

import re
from pathlib import Path

import grimp

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "development.md"
MARKER = "<!-- controllers-import-graph -->"

_BOX = re.compile(r'^\s*(\w+)\["([\w.]+)(?:<br/>[^"]*)?"\]\s*$')
_ARROW = re.compile(r"^\s*(\w+)\s*-->\s*(\w+)\s*$")


def diagram(text: str) -> tuple[dict[str, str], set[tuple[str, str]]]:
    """(box id -> glimmer package, arrows as id pairs) of the marked mermaid block."""
    block = text.split(MARKER, 1)[1].split("```mermaid", 1)[1].split("```", 1)[0]
    boxes: dict[str, str] = {}
    arrows: set[tuple[str, str]] = set()
    for line in block.splitlines():
        if box := _BOX.match(line):
            boxes[box.group(1)] = f"glimmer.{box.group(2)}"
        elif arrow := _ARROW.match(line):
            arrows.add((arrow.group(1), arrow.group(2)))
    return boxes, arrows


def imports_between(packages: dict[str, str]) -> set[tuple[str, str]]:
    """Which controllers packages among ``packages`` (id -> module) import which of
    ``packages``, directly, at package level."""
    graph = grimp.build_graph("glimmer")

    def modules(name: str) -> set[str]:
        return {name} | graph.find_descendants(name)

    members = {box: modules(name) for box, name in packages.items()}
    return {
        (a, b)
        for a in packages
        if packages[a].startswith("glimmer.controllers.")
        for b in packages
        if a != b
        and any(
            graph.direct_import_exists(importer=x, imported=y)
            for x in members[a]
            for y in members[b]
        )
    }


def test_the_controllers_picture_is_the_import_graph() -> None:
    boxes, arrows = diagram(DOC.read_text())
    assert {"run", "fingerprint", "schedule", "kit", "operator"} <= boxes.keys()
    unknown = {end for arrow in arrows for end in arrow} - boxes.keys()
    assert not unknown, f"arrows to undeclared boxes: {sorted(unknown)}"
    actual = imports_between(boxes)
    assert sorted(arrows - actual) == [], "drawn, but the code has no such import"
    assert sorted(actual - arrows) == [], "imported, but the picture leaves it out"


def test_the_picture_parser_reads_boxes_and_arrows() -> None:
    """The check can fail: a drawn arrow is read, so a missing or extra one is seen."""
    text = (
        f"{MARKER}\n```mermaid\nflowchart TD\n"
        '    a["controllers.run<br/>x"]\n    b["api"]\n    a --> b\n```\n'
    )
    assert diagram(text) == ({"a": "glimmer.controllers.run", "b": "glimmer.api"}, {("a", "b")})
