"""Strict JSON: one reader for every document Glimmer reads back from disk or a
ConfigMap (bare-host side records, reports' inputs).

Python's ``json`` accepts two things no JSON document of ours contains and that would
change what it says: a duplicated key (the last one silently wins, so a record could
carry a passing value after a failing one) and the constants ``NaN``/``Infinity``
(not JSON; a NaN gate must never be read from a file as a number). Both are refused.
"""

from __future__ import annotations

import json
from typing import Any


class StrictJSONError(ValueError):
    """The text is not strict JSON; the message says why (without the caller's where)."""


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise StrictJSONError(f"duplicate JSON key {key!r}")
        out[key] = value
    return out


def _no_constant(name: str) -> Any:
    raise StrictJSONError(f"JSON constant {name} is not a value")


def loads_strict(text: str | bytes) -> Any:
    """``text`` as JSON, refusing duplicate keys and non-finite constants; any other
    problem (syntax, encoding, nesting too deep) is a :class:`StrictJSONError` too."""
    try:
        return json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)
    except StrictJSONError:
        raise
    except (ValueError, RecursionError) as err:
        raise StrictJSONError(f"not valid JSON: {err}") from None
