"""One strict JSON reader for every document read back (side records, report inputs): a
duplicated key or a non-finite constant is refused, never silently resolved."""

from __future__ import annotations

from pathlib import Path

import pytest

from glimmer.contract.strict_json import StrictJSONError, loads_strict
from glimmer.local.records import RecordError, load_json
from glimmer.report.reading import ReportInputError, parse_json


@pytest.mark.parametrize(
    "text",
    ['{"phase": "Failed", "phase": "Passed"}', '{"bw": NaN}', '{"bw": Infinity}',
     '{"bw": -Infinity}', "[" * 100_000, '{"a": '],
)  # fmt: skip
def test_strict_json_refuses_what_would_change_what_a_document_says(text: str) -> None:
    with pytest.raises(StrictJSONError):
        loads_strict(text)


def test_strict_json_both_readers_refuse_a_duplicated_key(tmp_path: Path) -> None:
    doubled = '{"phase": "Failed", "phase": "Passed"}'
    with pytest.raises(ReportInputError, match="duplicate JSON key 'phase'"):
        parse_json(doubled, where="run.json")
    record = tmp_path / "rank-01.json"
    record.write_text(doubled, encoding="utf-8")
    with pytest.raises(RecordError, match="duplicate JSON key 'phase'"):
        load_json(record)
    assert loads_strict('{"bw": 1.5, "ok": [true, null]}') == {"bw": 1.5, "ok": [True, None]}
