"""The AMD fault matrix's cells on a sibling AMD profile (one table, many parts).

Why a helper: the conformance suite runs ``AMD_FAULT_MATRIX`` on ``AMD_MATRIX_PROFILE``
(MI300X); the same gfx942 phases must hold on the MI325X, and each runner's AMD tests
read them from that one table rather than from a copy of its own.
"""

from __future__ import annotations

from glimmer.contract import SIM_GPU_ENV
from runners.conformance import Case
from runners.fault_matrix import AMD_FAULT_MATRIX, EXIT_CODES, NOT_READ, PASSED


def amd_matrix_cases(kind: str, *, profile: str) -> list[Case]:
    """Every read cell of ``kind``'s AMD row, run on a two-device ``profile`` (``mi325xx2``):
    faults land on the last device, 1, as on ``AMD_MATRIX_PROFILE``."""
    if not profile.endswith("x2"):
        raise ValueError(f"{profile}: the AMD matrix is defined on two devices")
    faulty = 1
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
