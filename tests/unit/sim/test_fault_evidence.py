"""The evidence table: each reading that shows a fault a runner passes, and the gate.

Each entry of ``runners.fault_matrix.FAULT_EVIDENCE`` runs twice through its runner on
the simulated part, healthy and faulty, and its threshold is evaluated by the verdict's
own threshold code: the healthy run must meet it (a gate that fails healthy nodes is no
finding) and the faulty run must violate it as UNSATISFIED (the fault shows in the
reading), while the runner itself exits 0 both times (else the matrix cell, not the
evidence, would catch the fault).
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from glimmer.contract import SIM_GPU_ENV, read_report
from glimmer.verdict.thresholds import Threshold, ViolationKind, evaluate
from runners.catalog import RUNNERS
from runners.fault_matrix import FAULT_EVIDENCE, FAULT_MATRIX, PASSED, Evidence

CASES = [(fault, e) for fault, entries in FAULT_EVIDENCE.items() for e in entries]


def _run(evidence: Evidence, sim: str) -> tuple[int, dict[str, str], set[str]]:
    spec = RUNNERS[evidence.kind]
    env = {**os.environ, **spec.test_env, **dict(evidence.env), SIM_GPU_ENV: sim}
    done = subprocess.run(
        [sys.executable, "-m", spec.module], env=env, capture_output=True, timeout=300, check=False
    )
    report = read_report(done.stdout, kind=evidence.kind, exit_code=done.returncode)
    return done.returncode, dict(report.metrics), set(report.unmeasurable)


@pytest.mark.parametrize(
    ("fault", "evidence"), CASES, ids=[f"{f}-{e.kind}-{e.metric}" for f, e in CASES]
)
def test_evidence_gate_passes_the_healthy_part_and_catches_the_fault(
    fault: str, evidence: Evidence
) -> None:
    assert FAULT_MATRIX[evidence.kind][fault] == PASSED, "evidence is for a Passed cell"
    gate = Threshold(metric=evidence.metric, comparison=evidence.comparison, value=evidence.value)
    exit_healthy, metrics, unmeasurable = _run(evidence, evidence.sim)
    assert exit_healthy == 0
    assert evaluate([gate], metrics, unmeasurable).passed, metrics.get(evidence.metric)
    exit_faulty, metrics, unmeasurable = _run(evidence, f"{evidence.sim}:{fault}")
    assert exit_faulty == 0
    violations = evaluate([gate], metrics, unmeasurable).violations
    assert [v.kind for v in violations] == [ViolationKind.UNSATISFIED], metrics.get(evidence.metric)


def test_every_modelled_fault_no_node_runner_fails_has_evidence_or_a_stated_miss() -> None:
    """A fault every Node runner passes must name its evidence, or be one only a link
    test catches (its story says which): never a silent row of Passed."""
    link_only = {"nic-flap-under-load"}
    for fault in FAULT_MATRIX["gpu-burn"]:
        cells = {FAULT_MATRIX[kind][fault] for kind in FAULT_MATRIX}
        if fault != "healthy" and cells <= {PASSED, "Skipped", "not read"}:
            assert fault in FAULT_EVIDENCE or fault in link_only, fault
