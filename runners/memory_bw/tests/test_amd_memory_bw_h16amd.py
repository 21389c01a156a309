"""memory-bw on the simulated AMD parts: every fault gives its matrix phase (h16amd).

The rows for ``runners/fault_matrix.py`` are proposed in ``.handoff/h16amd-shared.md``;
until that table carries AMD rows this local one is the record. ``xid:79`` is refused
(Error) on an AMD profile: an Xid is an NVIDIA driver event.
"""

from __future__ import annotations

import re

import pytest

from runners.catalog import RUNNERS
from runners.conformance import Case, check, execute
from runners.fault_matrix import ERROR, EXIT_CODES, FAILED, PASSED

KIND = "memory-bw"
PROFILES = ("mi300xx2", "mi325xx2")
AMD_ROW: dict[str, str] = {
    "healthy": PASSED,
    "low-clock": PASSED,
    "ecc-uncorrectable": PASSED,
    "remap-pending": PASSED,
    "fallen-off-bus": ERROR,
    "low-bandwidth": FAILED,
    "nan-compute": PASSED,
    "no-driver": ERROR,
    "crash": ERROR,
    "xid:79": ERROR,
}
#: Printed on a healthy AMD run besides the catalog's healthy set.
AMD_EVIDENCE = frozenset({"gfxTarget", "memoryBandwidthGBs"})


def cases() -> list[Case]:
    return [
        Case(
            kind=KIND,
            label=f"{profile}-{fault}",
            env={"GLIMMER_SIM_GPU": profile if fault == "healthy" else f"{profile}:{fault}"},
            expected_exit=EXIT_CODES[phase],
            require_healthy_metrics=fault == "healthy",
            faulty_device=1,
        )
        for profile in PROFILES
        for fault, phase in AMD_ROW.items()
    ]


@pytest.mark.parametrize("case", cases(), ids=str)
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
