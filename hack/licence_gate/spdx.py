"""Declared licences as SPDX: names normalised, expressions evaluated against a policy.

Metadata says the same licence many ways ("Apache 2.0", "Apache Software License",
"BSD 2-Clause License", "MIT OR Apache-2.0"); :func:`normalise_name` maps the spellings
seen in practice to one SPDX id and returns None for anything it does not know, so an
unknown spelling is never guessed into an allowed one. :func:`allowed` reads ``OR`` as
a choice (one allowed alternative suffices) and ``AND`` as a conjunction (every part
must be allowed); ``X WITH exception`` is judged as ``X`` (an exception only adds
permissions, and a copyleft base stays refused).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TypeAlias

#: Lower-cased spellings seen in License fields and trove classifiers -> SPDX id.
_ALIASES: dict[str, str] = {
    "mit": "MIT",
    "mit license": "MIT",
    "the mit license": "MIT",
    "mit-0": "MIT-0",
    "apache 2.0": "Apache-2.0",
    "apache-2.0": "Apache-2.0",
    "apache 2": "Apache-2.0",
    "apache license 2.0": "Apache-2.0",
    "apache license, version 2.0": "Apache-2.0",
    "apache software license": "Apache-2.0",
    "apache software license 2.0": "Apache-2.0",
    "bsd-2-clause": "BSD-2-Clause",
    "bsd 2-clause license": "BSD-2-Clause",
    "simplified bsd license": "BSD-2-Clause",
    "bsd-3-clause": "BSD-3-Clause",
    "bsd 3-clause license": "BSD-3-Clause",
    "new bsd license": "BSD-3-Clause",
    "modified bsd license": "BSD-3-Clause",
    "isc": "ISC",
    "isc license": "ISC",
    "isc license (iscl)": "ISC",
    "psf-2.0": "PSF-2.0",
    "psf": "PSF-2.0",
    "python software foundation license": "PSF-2.0",
    "mpl-2.0": "MPL-2.0",
    "mozilla public license 2.0 (mpl 2.0)": "MPL-2.0",
    "unlicense": "Unlicense",
    "the unlicense (unlicense)": "Unlicense",
    "cc0-1.0": "CC0-1.0",
    "cc0 1.0 universal (cc0 1.0) public domain dedication": "CC0-1.0",
    "0bsd": "0BSD",
    "zlib": "Zlib",
    "gpl-2.0": "GPL-2.0-only",
    "gpl-3.0": "GPL-3.0-only",
    "gnu general public license v2 (gplv2)": "GPL-2.0-only",
    "gnu general public license v3 (gplv3)": "GPL-3.0-only",
    "gnu general public license v2 or later (gplv2+)": "GPL-2.0-or-later",
    "gnu general public license v3 or later (gplv3+)": "GPL-3.0-or-later",
    "gnu general public license (gpl)": "GPL",
    "gnu affero general public license v3": "AGPL-3.0-only",
    "gnu lesser general public license v2 (lgplv2)": "LGPL-2.0-only",
    "gnu lesser general public license v3 (lgplv3)": "LGPL-3.0-only",
    "gnu lesser general public license v2 or later (lgplv2+)": "LGPL-2.0-or-later",
    "gnu lesser general public license v3 or later (lgplv3+)": "LGPL-3.0-or-later",
    "gnu lgpl v3+": "LGPL-3.0-or-later",
    "lgpl-2.1": "LGPL-2.1-only",
    "lgpl-3.0": "LGPL-3.0-only",
    "lgpl-3.0-or-later": "LGPL-3.0-or-later",
    "lgpl-2.1-or-later": "LGPL-2.1-or-later",
    "lgpl-3.0-only": "LGPL-3.0-only",
    "lgpl-2.1-only": "LGPL-2.1-only",
}

#: SPDX ids as they are written (case-insensitive lookup of the canonical spelling).
_CANONICAL = {v.lower(): v for v in _ALIASES.values()}


def normalise_name(name: str) -> str | None:
    """One SPDX id (or expression, when the text is one) for a declared name; None if unknown."""
    key = re.sub(r"\s+", " ", name.strip()).lower()
    if key in _ALIASES:
        return _ALIASES[key]
    if key in _CANONICAL:
        return _CANONICAL[key]
    if key.endswith("+"):  # the deprecated "LGPL-3.0+" form
        base = normalise_name(key[:-1])
        if base is not None and base.endswith("-only"):
            return f"{base.removesuffix('-only')}-or-later"
        return None
    if _is_expression(name):
        return " ".join(_tokens(name))
    return None


def _tokens(expression: str) -> list[str]:
    return re.findall(r"\(|\)|[^\s()]+", expression)


def _is_expression(text: str) -> bool:
    """Whether ``text`` is an SPDX expression over ids this module knows."""
    tokens = _tokens(text)
    if not any(t.upper() in ("AND", "OR", "WITH") for t in tokens):
        return False
    try:
        parse(text)
    except ValueError:
        return False
    return all(
        t in ("(", ")") or t.upper() in ("AND", "OR", "WITH") or normalise_name(t) is not None
        for i, t in enumerate(tokens)
        if i == 0 or tokens[i - 1].upper() != "WITH"
    )


#: A licence id, or (operator, left, right).
Node: TypeAlias = "str | tuple[str, Node, Node]"


def parse(expression: str) -> Node:
    """An SPDX expression as nested ``("AND"|"OR", left, right)`` tuples of ids.

    ``WITH`` binds tightest, then ``AND``, then ``OR`` (SPDX annex D)."""
    tokens = _tokens(expression)
    position = 0

    def peek() -> str | None:
        return tokens[position] if position < len(tokens) else None

    def take() -> str:
        nonlocal position
        if position >= len(tokens):
            raise ValueError(f"SPDX expression ends early: {expression!r}")
        position += 1
        return tokens[position - 1]

    def atom() -> Node:
        token = take()
        if token == "(":
            inner = disjunction()
            if take() != ")":
                raise ValueError(f"unbalanced parentheses: {expression!r}")
            return inner
        if token in (")",) or token.upper() in ("AND", "OR", "WITH"):
            raise ValueError(f"expected a licence id, got {token!r}: {expression!r}")
        if (peek() or "").upper() == "WITH":
            take()
            take()  # the exception id: judged as its base licence (module docstring)
        return token

    def conjunction() -> Node:
        left = atom()
        while (peek() or "").upper() == "AND":
            take()
            left = ("AND", left, atom())
        return left

    def disjunction() -> Node:
        left = conjunction()
        while (peek() or "").upper() == "OR":
            take()
            left = ("OR", left, conjunction())
        return left

    tree = disjunction()
    if position != len(tokens):
        raise ValueError(f"trailing tokens in SPDX expression: {expression!r}")
    return tree


def allowed(expression: str, *, permits: Callable[[str], bool]) -> bool:
    """Whether the expression is satisfiable with only ids ``permits`` accepts."""

    def judge(node: Node) -> bool:
        if isinstance(node, str):
            spdx = normalise_name(node)
            return spdx is not None and permits(spdx)
        operator, left, right = node
        if operator == "AND":
            return judge(left) and judge(right)
        return judge(left) or judge(right)

    return judge(parse(expression))
