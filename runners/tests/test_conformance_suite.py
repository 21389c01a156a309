"""The conformance suite itself can fail: broken runner behaviours are reported."""

from __future__ import annotations

from dataclasses import replace

import pytest

from runners.catalog import RUNNERS
from runners.conformance import Case, check

SPEC = replace(RUNNERS["memory-bw"], test_env={})


def fake(script: str) -> tuple[str, ...]:
    return ("python", "-c", script)


@pytest.mark.parametrize(
    ("script", "expected_exit", "complaint"),
    [
        ("raise SystemExit(2)", 2, "without a declared"),
        ("1/0", 3, "exit 1, expected 3"),
        ("print('provenance=silicon'); print('MEMORY_BW_PASS')", 0, "provenance 'silicon'"),
        ("print('provenance=sim'); print('MEMORY_BW_PASS')", 0, "did not print"),
        ("print('provenance=sim'); print('Gpu=1'); print('MEMORY_BW_PASS')", 0, "invalid"),
        ("print('MEMORY_BW_ERROR: x'); raise SystemExit(1)", 1, "exit 1 but last line"),
    ],
)
def test_suite_reports_contract_violations(script: str, expected_exit: int, complaint: str) -> None:
    case = Case(
        kind="memory-bw",
        label="fake",
        env={},
        expected_exit=expected_exit,
        require_healthy_metrics=True,
    )
    problems = check(SPEC, case, command=fake(script))
    assert any(complaint in p for p in problems), problems
