"""The one wire-integer reader, shared by the result codec and the run view."""

from __future__ import annotations

import pytest

from glimmer.verdict.codec import int_or_default


@pytest.mark.parametrize(
    ("value", "expected"),
    [(3, 3), ("7", 7), (" 8 ", 8), (True, -1), (False, -1), (None, -1), ("many", -1), (1.5, -1)],
)
def test_I4_a_wire_integer_reads_or_falls_back_never_crashes(value: object, expected: int) -> None:
    assert int_or_default(value, -1) == expected


def test_I4_the_default_may_be_none_for_an_absent_reading() -> None:
    assert int_or_default("x", None) is None
