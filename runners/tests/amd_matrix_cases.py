"""The AMD fault matrix's cells on a sibling AMD profile (one table, many parts).

Why a helper: the conformance suite runs ``AMD_FAULT_MATRIX`` on ``AMD_MATRIX_PROFILE``
(MI300X); the same gfx942 phases must hold on the MI325X, and each runner's AMD tests
read them from that one table rather than from a copy of its own.
"""

from __future__ import annotations

from glimmer.contract import SIM_GPU_ENV
from runners.conformance import Case
from runners.fault_matrix import AMD_FAULT_MATRIX, EXIT_CODES, NOT_READ, PASSED
from runners.sdk.simgpu.spec import parse_spec


def amd_matrix_cases(kind: str, *, profile: str) -> list[Case]:
    """Every read cell of ``kind``'s AMD row, run on ``profile`` (e.g. ``mi325xx2``)."""
    faulty = parse_spec(profile).faulty_index
    return [
        Case(
            kind=kind,
            label=f"{profile}-{fault}",
            env={SIM_GPU_ENV: profile if fault == "healthy" else f"{profile}:{fault}"},
            expected_exit=EXIT_CODES[phase],
            require_healthy_metrics=fault == "healthy" and phase == PASSED,
            faulty_device=faulty,
        )
        for fault, phase in AMD_FAULT_MATRIX[kind].items()
        if phase != NOT_READ
    ]
