"""dcgmi diag JSON in both layouts, recorded from the documented format."""

from __future__ import annotations

from pathlib import Path

import pytest

from runners.dcgm_diag.parse import UnexpectedDocumentError, parse_diag

FIXTURES = Path(__file__).parent / "fixtures"


def load(name: str) -> str:
    return (FIXTURES / name).read_text()


def test_current_layout_counts_failed_and_warned_tests_and_finds_the_xid() -> None:
    diag = parse_diag(load("current-fail.json"))
    assert diag.layout == "current"
    assert (diag.count("Fail"), diag.count("Warn"), diag.count("Pass"), diag.count("Skip")) == (
        1,
        1,
        1,
        1,
    )
    assert diag.last_xid == 79
    assert diag.driver_version == "570.124.06"
    assert diag.gpus == {"0", "1"}


def test_legacy_layout_is_read_with_its_top_level_metadata() -> None:
    diag = parse_diag(load("legacy-pass.json"))
    assert diag.layout == "legacy"
    assert diag.count("Pass") == 6
    assert diag.count("Fail") == 0
    assert (diag.driver_version, diag.dcgm_version) == ("535.104.05", "3.2.6")
    assert diag.gpus == {"0", "1"}


def test_runtime_error_is_surfaced() -> None:
    assert parse_diag(load("runtime-error.json")).runtime_error is not None


@pytest.mark.parametrize(
    "text",
    [
        "",
        "Error: unable to connect to host engine",
        "[]",
        '{"something": {}}',
        '{"DCGM Diagnostic": {"test_categories": {}}}',
        '{"DCGM Diagnostic": {"test_categories": [{"tests": [{"name": "x"}]}]}}',
    ],
)
def test_fail_closed_unexpected_documents_are_refused(text: str) -> None:
    with pytest.raises(UnexpectedDocumentError):
        parse_diag(text)


def test_fail_closed_unknown_status_word_is_refused() -> None:
    with pytest.raises(UnexpectedDocumentError, match="unknown status"):
        parse_diag(load("unexpected.json"))
