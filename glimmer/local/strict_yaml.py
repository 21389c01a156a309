"""A strict YAML reader for manifests: what the apiserver would refuse, the CLI refuses.

A lenient reader turns typos into plausible answers: ``treshold:`` silently means "no
gates" (evaluate Passes, lint is silent), and of two ``kind:`` keys the last one wins
unseen. The apiserver's strict field validation refuses both (``unknown field
"spec.treshold"``, ``duplicate field "spec.kind"``), and so does this reader, with the
same wording, the file and the line. It also refuses what would crash a reader later
instead of being read:

* nesting deeper than :data:`MAX_DEPTH` (a recursive reader would die of a
  RecursionError), counted while composing, before any recursion can happen, and
  again through aliases, which may nest documents inside themselves;
* an alias cycle, and aliases expanding past :data:`MAX_NODES` nodes (a
  "billion laughs" document is small on disk and huge once copied);
* values JSON cannot carry (binary, sets, ordered pairs, dates written with an
  explicit tag, NaN and infinities) and keys that are not strings. Plain dates are
  read as the strings they are, as the apiserver reads JSON.

Only the structure is judged here; which fields exist is :mod:`glimmer.local.schema`'s
business, and what values mean is the plan's.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Final

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

#: Deepest nesting of mappings and sequences accepted (a profile needs about 10).
MAX_DEPTH: Final = 64
#: Most nodes a document may expand to through aliases.
MAX_NODES: Final = 200_000
_MERGE_TAG: Final = "tag:yaml.org,2002:merge"


class StrictYAMLError(ValueError):
    """A document the strict reader refuses; ``str()`` names the field and the line."""


#: Path components shown before the rest of a very deep path is elided.
_SHOWN_PARTS: Final = 12


def field_path(parts: Sequence[str | int]) -> str:
    """``spec.tests[2].inline`` from ``["spec", "tests", 2, "inline"]``."""
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


def _deep_path(parts: Sequence[str | int]) -> str:
    if len(parts) <= _SHOWN_PARTS:
        return field_path(parts) or "the document"
    return f"{field_path(parts[:_SHOWN_PARTS])}..."


def _line(node: Node) -> str:
    return f"line {node.start_mark.line + 1}"


_NO_TIMESTAMPS: Final = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


class _Loader(yaml.SafeLoader):
    """SafeLoader with bounded composition and no implicit timestamps."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.yaml_implicit_resolvers = _NO_TIMESTAMPS
        self._path: list[str | int] = []

    def compose_node(self, parent: Node | None, index: Any) -> Node | None:
        if isinstance(index, ScalarNode):
            self._path.append(str(index.value))
        elif isinstance(index, int):
            self._path.append(index)
        else:
            self._path.append("")  # a mapping key or the document root
        try:
            if len(self._path) > MAX_DEPTH:
                at = _deep_path([p for p in self._path if p != ""])
                raise StrictYAMLError(
                    f"line {self.get_mark().line + 1}: {at} nests deeper than {MAX_DEPTH} levels"
                )
            return super().compose_node(parent, index)
        finally:
            self._path.pop()


def load_all(text: str) -> list[Any]:
    """Every document of ``text``; raises :class:`StrictYAMLError` or ``yaml.YAMLError``."""
    loader = _Loader(text)
    try:
        documents = []
        while loader.check_node():
            node = loader.get_node()
            if node is None:
                continue
            _check_graph(node)
            value = loader.construct_document(node)
            _check_values(value)
            documents.append(value)
        return documents
    finally:
        loader.dispose()


def _children(node: Node) -> list[tuple[Node, str | int]]:
    if isinstance(node, MappingNode):
        return [(value, str(key.value)) for key, value in node.value]
    if isinstance(node, SequenceNode):
        return [(item, index) for index, item in enumerate(node.value)]
    return []


def _check_graph(root: Node) -> None:
    """Duplicates, key types, alias cycles, expanded depth and size; iterative, no recursion."""
    depth: dict[int, int] = {}
    size: dict[int, int] = {}
    open_nodes: set[int] = set()
    stack: list[tuple[Node, tuple[str | int, ...], bool]] = [(root, (), False)]
    while stack:
        node, path, finished = stack.pop()
        key = id(node)
        children = _children(node)
        if finished:
            open_nodes.discard(key)
            depth[key] = 1 + max((depth[id(child)] for child, _ in children), default=0)
            size[key] = 1 + sum(size[id(child)] for child, _ in children)
            if depth[key] > MAX_DEPTH:
                raise StrictYAMLError(
                    f"{_line(node)}: {_deep_path(path)} nests deeper "
                    f"than {MAX_DEPTH} levels through aliases"
                )
            if size[key] > MAX_NODES:
                raise StrictYAMLError(
                    f"{_line(node)}: {_deep_path(path)} expands to "
                    f"more than {MAX_NODES} values through aliases"
                )
            continue
        if key in depth:
            continue
        if key in open_nodes:
            raise StrictYAMLError(
                f"{_line(node)}: {_deep_path(path)} refers to itself through an alias"
            )
        open_nodes.add(key)
        stack.append((node, path, True))
        if isinstance(node, MappingNode):
            _check_keys(node, path)
        stack.extend((child, (*path, part), False) for child, part in reversed(children))


def _check_keys(node: MappingNode, path: tuple[str | int, ...]) -> None:
    seen: set[str] = set()
    for key, _ in node.value:
        if key.tag == _MERGE_TAG:
            continue
        if not isinstance(key, ScalarNode) or key.tag != "tag:yaml.org,2002:str":
            shown = key.value if isinstance(key, ScalarNode) else "a collection"
            raise StrictYAMLError(
                f"{_line(key)}: {field_path(path) or 'the document'}: key {shown!r} "
                "must be a string (quote it)"
            )
        if key.value in seen:
            raise StrictYAMLError(
                f'{_line(key)}: duplicate field "{field_path([*path, key.value])}"'
            )
        seen.add(key.value)


def _check_values(value: Any, path: tuple[str | int, ...] = ()) -> None:
    """Refuse what JSON cannot carry (depth is already bounded, so recursion is safe)."""
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise StrictYAMLError(
                    f"{field_path(path) or 'the document'}: key {key!r} must be a string"
                )
            _check_values(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _check_values(item, (*path, index))
    elif isinstance(value, float) and not math.isfinite(value):
        raise StrictYAMLError(f"{field_path(path)}: {value} is not a JSON number (quote it)")
    elif value is not None and not isinstance(value, str | int | float | bool):
        raise StrictYAMLError(
            f"{field_path(path) or 'the document'}: a {type(value).__name__} value "
            "cannot be sent to the apiserver (quote it as a string)"
        )
