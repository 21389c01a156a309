"""Reading report input off disk: bounded, strict JSON, one clear error per refusal.

A report is often run over files somebody else produced, so every input is hostile
until read: a file larger than :data:`MAX_INPUT_BYTES` is refused before it is read
whole, JSON with a duplicated key or a ``NaN``/``Infinity`` constant is refused (a
duplicated ``phase`` would let two readers see two verdicts), and nothing here
raises anything but :class:`ReportInputError`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final

#: The largest single input file read (a ConfigMap holds at most ~1 MiB; a run.json
#: of a big fleet is a few MiB).
MAX_INPUT_BYTES: Final = 32 * 1024 * 1024


class ReportInputError(ValueError):
    """The input cannot be reported faithfully; the message says which and why."""


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ReportInputError(f"duplicate JSON key {key!r}")
        out[key] = value
    return out


def _no_constant(name: str) -> Any:
    raise ReportInputError(f"JSON constant {name} is not a value")


def parse_json(text: str | bytes, *, where: str) -> Any:
    """``text`` as JSON, refusing duplicate keys and non-finite constants."""
    if len(text) > MAX_INPUT_BYTES:
        raise ReportInputError(f"{where}: {len(text)} bytes, over the {MAX_INPUT_BYTES}-byte limit")
    try:
        return json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)
    except ReportInputError as err:
        raise ReportInputError(f"{where}: {err}") from None
    except (ValueError, RecursionError) as err:
        raise ReportInputError(f"{where}: not valid JSON: {err}") from None


def read_bounded(path: Path) -> bytes:
    """The file's bytes; refused past the limit without reading it whole."""
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_INPUT_BYTES + 1)
    except OSError as err:
        raise ReportInputError(f"{path}: cannot read: {err.strerror or err}") from None
    if len(data) > MAX_INPUT_BYTES:
        raise ReportInputError(f"{path}: larger than the {MAX_INPUT_BYTES}-byte input limit")
    return data


def read_json_file(path: Path) -> Any:
    return parse_json(read_bounded(path), where=str(path))
