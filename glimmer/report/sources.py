"""Envelopes from files: ``--from-file`` (one envelope or a JSON array of them) and
``--results-dir`` (a directory of envelope files).

Every envelope goes through the contract's strict decoder
(:func:`glimmer.contract.envelope.from_json`: unknown fields refused, types checked)
and its send-side validation (:func:`~glimmer.contract.envelope.validate`: version,
deliveryId, reason, run.uid, sentAt, metric names), after this package's stricter JSON
reading (no duplicated keys, no NaN constants, bounded size). In a results directory,
files not named ``*.json`` are skipped (a README, a ``.partial`` file); a ``*.json``
file that is not an envelope is an error, never silently left out of the verdict.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from glimmer.contract import envelope as wire
from glimmer.report.reading import ReportInputError, parse_json, read_json_file


def envelope_from_json(value: Any, *, where: str) -> wire.Envelope:
    try:
        envelope = wire.from_json(value, strict=True)
        wire.validate(envelope)
    except (wire.EnvelopeDecodeError, wire.EnvelopeInvalidError) as err:
        raise ReportInputError(f"{where}: {err}") from None
    return envelope


def envelopes_from_value(value: Any, *, where: str) -> list[wire.Envelope]:
    """One envelope, or a JSON array of envelopes."""
    if isinstance(value, list):
        if not value:
            raise ReportInputError(f"{where}: an empty array holds no envelope")
        return [envelope_from_json(v, where=f"{where}[{i}]") for i, v in enumerate(value)]
    return [envelope_from_json(value, where=where)]


def envelopes_from_text(text: str | bytes, *, where: str) -> list[wire.Envelope]:
    return envelopes_from_value(parse_json(text, where=where), where=where)


def from_file(path: Path) -> list[wire.Envelope]:
    return envelopes_from_value(read_json_file(path), where=str(path))


def from_results_dir(directory: Path) -> list[wire.Envelope]:
    if not directory.is_dir():
        raise ReportInputError(f"{directory}: not a directory")
    found: list[wire.Envelope] = []
    for path in sorted(directory.iterdir()):
        if path.suffix != ".json" or not path.is_file():
            continue
        found += from_file(path)
    if not found:
        raise ReportInputError(f"{directory}: no envelope (*.json) files")
    return found
