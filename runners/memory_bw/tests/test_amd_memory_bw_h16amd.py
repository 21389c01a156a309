"""memory-bw on the simulated AMD parts: every fault gives its matrix phase (h16amd).

The phases are ``runners/fault_matrix.py:AMD_FAULT_MATRIX`` (one table: the conformance
suite runs it on ``mi300xx2``, these tests on ``mi325xx2``). ``xid:79`` is refused
(Error) on an AMD profile: an Xid is an NVIDIA driver event.
"""

from __future__ import annotations

import re

import pytest

from runners.catalog import RUNNERS
from runners.conformance import Case, check, execute
from runners.tests.amd_matrix_cases import amd_matrix_cases

KIND = "memory-bw"
PROFILES = ("mi300xx2", "mi325xx2")
#: The sibling part the fault cells run on here (conformance runs ``mi300xx2``).
SIBLING = "mi325xx2"
#: Printed on a healthy AMD run besides the catalog's healthy set.
AMD_EVIDENCE = frozenset({"gfxTarget", "memoryBandwidthGBs"})


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


@pytest.mark.parametrize(("profile", "rated"), [("mi300x", 5300), ("mi325x", 6000)])
def test_amd_hbm_floor_is_the_datasheet_bandwidth(profile: str, rated: int) -> None:
    """amdsmi's MCLK counts four transfers per clock on CDNA3: the floor's basis must be
    the part's rated HBM bandwidth, not half of it (which would hide a slow part)."""
    spec = RUNNERS[KIND]
    run = execute(spec.command, kind=KIND, env={"GLIMMER_SIM_GPU": profile}, timeout_s=60)
    floors = [float(x) for x in re.findall(r"d2d: .* of ([0-9.]+) GB/s theoretical", run.stdout)]
    assert floors, run.stdout[-600:]
    assert all(abs(floor - rated) / rated < 0.01 for floor in floors), floors
