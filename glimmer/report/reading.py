"""Reading report input off disk: bounded, strict JSON, one clear error per refusal.

A report is often run over files somebody else produced, so every input is hostile
until read: a file larger than :data:`MAX_INPUT_BYTES` is refused before it is read
whole, JSON with a duplicated key or a ``NaN``/``Infinity`` constant is refused (a
duplicated ``phase`` would let two readers see two verdicts), and nothing here
raises anything but :class:`ReportInputError`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

from glimmer.contract.strict_json import StrictJSONError, loads_strict

#: The largest single input file read (a ConfigMap holds at most ~1 MiB; a run.json
#: of a big fleet is a few MiB).
MAX_INPUT_BYTES: Final = 32 * 1024 * 1024


class ReportInputError(ValueError):
    """The input cannot be reported faithfully; the message says which and why."""


def parse_json(text: str | bytes, *, where: str) -> Any:
    """``text`` as JSON, refusing duplicate keys and non-finite constants."""
    if len(text) > MAX_INPUT_BYTES:
        raise ReportInputError(f"{where}: {len(text)} bytes, over the {MAX_INPUT_BYTES}-byte limit")
    try:
        return loads_strict(text)
    except StrictJSONError as err:
        raise ReportInputError(f"{where}: {err}") from None


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
