"""stressapptest summaries: recorded PASS (real 1.0.6 run) and a FAIL built from the docs."""

from __future__ import annotations

from pathlib import Path

import pytest

from runners.memory_stress.parse import UnreadableSummaryError, parse_summary

FIXTURES = Path(__file__).parent / "fixtures"


def test_recorded_pass_summary() -> None:
    summary = parse_summary((FIXTURES / "pass-1.0.6.txt").read_text())
    assert summary.passed
    assert (summary.hardware_incidents, summary.errors) == (0, 0)
    assert summary.copy_rate_mbs is not None and summary.copy_rate_mbs > 0
    assert summary.elapsed_s == pytest.approx(5.0)


def test_failing_summary_carries_incidents_and_errors() -> None:
    summary = parse_summary((FIXTURES / "fail-constructed.txt").read_text())
    assert not summary.passed
    assert (summary.hardware_incidents, summary.errors) == (2, 2)


@pytest.mark.parametrize(
    "text",
    ["", "Status: PASS - please verify no corrected errors\n", "Stats: Completed: garbage\n"],
)
def test_fail_closed_summary_without_its_key_lines_is_unreadable(text: str) -> None:
    with pytest.raises(UnreadableSummaryError):
        parse_summary(text)
