"""The result codec carries an attempt's ``podUID`` (I18 audit trail), omitted when empty."""

from __future__ import annotations

from glimmer.verdict import Phase, Trigger, attempt_record
from glimmer.verdict.codec import attempt_from_json, attempt_to_json
from tests.unit.verdict.helpers import gte, judge


def test_I18_the_codec_round_trips_an_attempts_pod_uid() -> None:
    verdict = judge("bw=150\nRUNNER_PASS\n", [gte("bw", "100")])
    assert verdict.phase is Phase.PASSED
    record = attempt_record(
        verdict, attempt=1, trigger=Trigger.INITIAL, pod_name="p", pod_uid="uid-1"
    )
    for deciding in (False, True):
        entry = attempt_to_json(record, deciding=deciding)
        assert entry["podUID"] == "uid-1"
        assert attempt_from_json(entry).pod_uid == "uid-1"


def test_I18_no_pod_uid_is_written_when_there_was_no_pod() -> None:
    verdict = judge("bw=150\nRUNNER_PASS\n", [gte("bw", "100")])
    entry = attempt_to_json(attempt_record(verdict, attempt=1, trigger=Trigger.INITIAL))
    assert "podUID" not in entry
    assert attempt_from_json(entry).pod_uid == ""
