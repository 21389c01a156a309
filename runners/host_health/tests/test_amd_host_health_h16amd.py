"""host-health on the simulated AMD parts: every fault gives its matrix phase (h16amd).

The phases are ``runners/fault_matrix.py:AMD_FAULT_MATRIX`` (one table: the conformance
suite runs it on ``mi300xx2``, these tests on ``mi325xx2``). ``xid:79`` is refused
(Error) on an AMD profile: an Xid is an NVIDIA driver event.
"""

from __future__ import annotations

import pytest

from runners.catalog import RUNNERS
from runners.conformance import Case, check, execute
from runners.tests.amd_matrix_cases import amd_matrix_cases

KIND = "host-health"
PROFILES = ("mi300xx2", "mi325xx2")
#: The sibling part the fault cells run on here (conformance runs ``mi300xx2``).
SIBLING = "mi325xx2"
#: Printed on a healthy AMD run besides the catalog's healthy set.
AMD_EVIDENCE = frozenset({"eccSource"})


@pytest.mark.parametrize("case", amd_matrix_cases(KIND, profile=SIBLING), ids=str)
def test_amd_fault_gives_its_matrix_phase(case: Case) -> None:
    assert check(RUNNERS[KIND], case) == []


@pytest.mark.parametrize("profile", PROFILES)
def test_amd_healthy_run_prints_the_amd_evidence_with_provenance_sim(profile: str) -> None:
    spec = RUNNERS[KIND]
    run = execute(
        spec.command,
        kind=KIND,
        env={**spec.test_env, "GLIMMER_SIM_GPU": profile},
        timeout_s=60,
    )
    printed = set(run.report.metrics) | set(run.report.unmeasurable)
    assert printed >= AMD_EVIDENCE, run.stdout[-600:]
    assert run.report.provenance == "sim"


def test_amd_part_has_no_xids_so_xid_events_is_unmeasurable_never_zero() -> None:
    spec = RUNNERS[KIND]
    run = execute(
        spec.command,
        kind=KIND,
        env={**spec.test_env, "GLIMMER_SIM_GPU": "mi300xx2"},
        timeout_s=60,
    )
    assert "xidEvents" in run.report.unmeasurable
    assert "xidEvents" not in run.report.metrics
    assert run.report.metrics["eccSource"] == "amdsmi"
