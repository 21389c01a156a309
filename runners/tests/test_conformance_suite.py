"""The conformance suite itself can fail: broken runner behaviours are reported."""

from __future__ import annotations

from dataclasses import replace

import pytest

from runners.catalog import RUNNERS
from runners.conformance import Case, case_findings, cases_for, check
from runners.fault_matrix import FAULT_MATRIX, PASSED

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


def _findings(script: str, case: Case) -> dict[str, list[str]]:
    found, judged, _stdout = case_findings(SPEC, case, command=fake(script))
    by_clause: dict[str, list[str]] = {clause: [] for clause in judged}
    for finding in found:
        by_clause.setdefault(finding.clause, []).append(finding.detail)
    return by_clause


PASSING = "print('provenance=sim'); print('{line}'); print('MEMORY_BW_PASS')"


@pytest.mark.parametrize(
    ("line", "broken"),
    [
        ("memoryBandwidthGBs=3200 GB/s", True),  # the unit belongs in the name
        ("hostToDeviceBandwidthGBs=85%", True),
        ("memoryBandwidthGBs=3200", False),
        ("gpuName=NVIDIA H200", False),  # no unit, not a measurement: a word is fine
    ],
)
def test_units_clause_wants_a_plain_number_where_the_name_carries_a_unit(
    line: str, broken: bool
) -> None:
    case = Case(kind="memory-bw", label="fake", env={}, expected_exit=0)
    found = _findings(PASSING.format(line=line), case)
    assert "units" in found  # judged on every execution
    assert bool(found["units"]) is broken, found["units"]


def test_na_clause_refuses_a_measurement_declared_n_a_on_a_part_that_has_it() -> None:
    case = Case(kind="memory-bw", label="fake", env={}, expected_exit=0, forbid_na=True)
    found = _findings(PASSING.format(line="memoryBandwidthGBs=n/a"), case)
    assert found["n/a"] and "memoryBandwidthGBs" in found["n/a"][0]
    # an unregistered, unit-less word may still be n/a: n/a is for measurements
    assert _findings(PASSING.format(line="boardSerial=n/a"), case)["n/a"] == []
    # and where the part may lack the feature, the clause is not judged at all
    lax = replace(case, forbid_na=False)
    assert "n/a" not in _findings(PASSING.format(line="memoryBandwidthGBs=n/a"), lax)


@pytest.mark.parametrize(("elapsed", "broken"), [("20", False), ("20.5", True), ("600", True)])
def test_duration_clause_refuses_a_window_past_the_budget(elapsed: str, broken: bool) -> None:
    case = Case(kind="memory-bw", label="duration", env={}, expected_exit=0)
    found = _findings(PASSING.format(line=f"elapsedS={elapsed}"), case)
    assert bool(found["duration-deadline"]) is broken, found["duration-deadline"]


def test_every_node_kind_has_a_duration_case_and_an_n_a_case() -> None:
    for kind, spec in RUNNERS.items():
        if spec.scope != "Node":
            continue
        cases = cases_for(kind)
        assert any(c.label == "duration" for c in cases), kind
        healthy = [c for c in cases if c.label == "healthy"]
        assert healthy and healthy[0].forbid_na is (FAULT_MATRIX[kind]["healthy"] == PASSED)
