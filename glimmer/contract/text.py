"""Go's notion of white space, so trimming and field splitting match the reference.

Python's ``str.strip()`` also strips the ASCII separators U+001C..U+001F, which Go's
``unicode.IsSpace`` does not; a key like ``\\x1cfoo`` must not silently become ``foo``.
"""

from __future__ import annotations

from typing import Final

GO_SPACE: Final = (
    "\t\n\v\f\r \u0085\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
_GO_SPACE_SET: Final = frozenset(GO_SPACE)


def go_trim(text: str) -> str:
    """``strings.TrimSpace``."""
    return text.strip(GO_SPACE)


def go_fields(text: str) -> list[str]:
    """``strings.Fields``: split around runs of Go white space."""
    fields: list[str] = []
    current: list[str] = []
    for ch in text:
        if ch in _GO_SPACE_SET:
            if current:
                fields.append("".join(current))
                current = []
        else:
            current.append(ch)
    if current:
        fields.append("".join(current))
    return fields
