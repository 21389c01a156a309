"""M8: every time a controller writes into a status keeps milliseconds, and every status
time, whole-second or fractional, reads back."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from glimmer.api import BurnInRun, format_time, from_json, parse_time, set_condition, to_json

REPO = Path(__file__).resolve().parents[3]
STATUS_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")
#: A time format spelled out by hand (strftime/strptime directives for seconds).
HAND_FORMAT = re.compile(r"%H:%M:%S")
#: Modules that write into a status or an Event and spell a time format themselves, with
#: why: none may spell a status time; :func:`glimmer.api.format_time` is the one formatter.
OWN_FORMAT = {
    # The heat-expected node annotation's own format, read back only by HeatMarker.parse.
    "glimmer/controllers/kit/cordon.py",
}


def test_M8_the_status_formatter_writes_utc_with_exactly_three_fractional_digits() -> None:
    moment = datetime(2026, 12, 2, 17, 4, 5, 123_999, tzinfo=timezone(timedelta(hours=2)))
    assert format_time(moment) == "2026-12-02T15:04:05.123Z"  # truncated, never rounded up
    assert format_time(datetime(2026, 12, 2, 15, 4, 5, tzinfo=UTC)) == "2026-12-02T15:04:05.000Z"
    assert format_time(datetime(2026, 12, 2, 15, 4, 5, 999_999, tzinfo=UTC)) == (
        "2026-12-02T15:04:05.999Z"
    )
    assert STATUS_TIME.fullmatch(format_time(datetime.now(UTC)))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Whole seconds: older Glimmer objects, the Go implementation, the kubelet.
        ("2026-12-02T15:04:05Z", datetime(2026, 12, 2, 15, 4, 5, tzinfo=UTC)),
        ("2026-12-02T15:04:05.123Z", datetime(2026, 12, 2, 15, 4, 5, 123_000, tzinfo=UTC)),
        # Go's RFC3339Nano and MicroTime; digits past microseconds are dropped.
        ("2026-12-02T15:04:05.123456789Z", datetime(2026, 12, 2, 15, 4, 5, 123_456, tzinfo=UTC)),
        ("2026-12-02T15:04:05.5Z", datetime(2026, 12, 2, 15, 4, 5, 500_000, tzinfo=UTC)),
        ("2026-12-02T17:04:05.123+02:00", datetime(2026, 12, 2, 15, 4, 5, 123_000, tzinfo=UTC)),
    ],
)
def test_M8_status_times_parse_whole_seconds_and_fractions(text: str, expected: datetime) -> None:
    parsed = parse_time(text)
    assert parsed == expected and parsed.tzinfo is UTC


def test_M8_a_status_time_survives_the_round_trip_to_the_millisecond() -> None:
    text = "2026-12-02T15:04:05.123Z"
    assert format_time(parse_time(text)) == text
    assert format_time(parse_time("2026-12-02T15:04:05Z")) == "2026-12-02T15:04:05.000Z"


def test_M8_the_models_times_are_written_with_milliseconds_and_old_ones_still_read() -> None:
    started = datetime(2026, 12, 2, 15, 4, 5, 123_000, tzinfo=UTC)
    conditions = set_condition(
        None, type_="Ready", status="True", reason="Started", message="", now=started
    )
    old = {
        "kind": "BurnInRun",
        "spec": {"profileRef": "p", "target": {}},
        "status": {
            "startedAt": "2026-12-02T15:04:05Z",
            "finishedAt": "2026-12-02T15:04:06.234Z",
            "results": [
                {
                    "name": "gpu-burn",
                    "kind": "gpu-burn",
                    "phase": "Passed",
                    "startedAt": "2026-12-02T15:04:05Z",
                    "finishedAt": "2026-12-02T15:04:06.234Z",
                }
            ],
        },
    }
    run = from_json(old, BurnInRun)
    assert run.status is not None
    assert run.status.started_at == datetime(2026, 12, 2, 15, 4, 5, tzinfo=UTC)
    assert run.status.finished_at == started + timedelta(seconds=1, milliseconds=111)
    written = to_json(run)["status"]
    assert written["startedAt"] == "2026-12-02T15:04:05.000Z"
    assert written["finishedAt"] == "2026-12-02T15:04:06.234Z"
    assert written["results"][0]["finishedAt"] == "2026-12-02T15:04:06.234Z"
    assert to_json(conditions[0])["lastTransitionTime"] == "2026-12-02T15:04:05.123Z"


def test_M8_no_status_writer_spells_a_time_format_of_its_own() -> None:
    """The one formatter (glimmer/api/convert.py:format_time): a writer that spelled
    ``%H:%M:%SZ`` itself would put whole seconds back into a status."""
    spelled = sorted(
        str(path.relative_to(REPO))
        for package in ("glimmer/controllers", "glimmer/api", "glimmer/sinks")
        for path in (REPO / package).rglob("*.py")
        if HAND_FORMAT.search(path.read_text(encoding="utf-8"))
    )
    assert spelled == sorted(OWN_FORMAT)
