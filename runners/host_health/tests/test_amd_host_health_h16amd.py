"""host-health on the simulated AMD parts: every fault gives its matrix phase (h16amd).

The rows for ``runners/fault_matrix.py`` are proposed in ``.handoff/h16amd-shared.md``;
until that table carries AMD rows this local one is the record. ``xid:79`` is refused
(Error) on an AMD profile: an Xid is an NVIDIA driver event.
"""

from __future__ import annotations

import pytest

from runners.catalog import RUNNERS
from runners.conformance import Case, check, execute
from runners.fault_matrix import ERROR, EXIT_CODES, FAILED, PASSED

KIND = "host-health"
PROFILES = ("mi300xx2", "mi325xx2")
AMD_ROW: dict[str, str] = {
    "healthy": PASSED,
    "low-clock": PASSED,
    "ecc-uncorrectable": FAILED,
    "remap-pending": FAILED,
    "fallen-off-bus": FAILED,
    "low-bandwidth": PASSED,
    "nan-compute": PASSED,
    "no-driver": ERROR,
    "crash": ERROR,
    "xid:79": ERROR,
}
#: Printed on a healthy AMD run besides the catalog's healthy set.
AMD_EVIDENCE = frozenset({"eccSource"})


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
