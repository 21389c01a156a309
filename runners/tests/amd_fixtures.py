"""What the AMD runner tests share: the AMD matrix on a sibling part, a run on an AMD
profile, the two checks every Node runner on AMD passes, and a library whose parts
cannot say why they throttle.

Why one module: the conformance suite runs ``AMD_FAULT_MATRIX`` on ``AMD_MATRIX_PROFILE``
(MI300X); the same gfx942 phases must hold on the MI325X, and each runner's AMD tests
read them from that one table (``runners/fault_matrix.py``) rather than from a copy of
their own. ``xid:79`` is refused (Error) on an AMD profile: an Xid is an NVIDIA driver
event. The healthy run and the reason-less library are the same for every runner that
meets them, so they are written here once too.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar

import pytest

from glimmer.contract import SIM_GPU_ENV
from runners.catalog import RUNNERS
from runners.conformance import Case, Execution, check, execute
from runners.fault_matrix import AMD_FAULT_MATRIX, EXIT_CODES, NOT_READ, PASSED
from runners.sdk.protocols import NotSupportedError

#: The simulated gfx942 parts of two devices each: MI300X and MI325X.
AMD_PROFILES = ("mi300xx2", "mi325xx2")
#: The sibling part the matrix cells run on here (conformance runs ``mi300xx2``).
SIBLING = "mi325xx2"


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


def run_on_profile(kind: str, profile: str) -> Execution:
    """The runner's catalog command on a simulated ``profile``, with its short test settings."""
    spec = RUNNERS[kind]
    return execute(
        spec.command,
        kind=kind,
        env={**spec.test_env, SIM_GPU_ENV: profile},
        timeout_s=60,
    )


def amd_evidence_problems(kind: str, profile: str, *, evidence: Iterable[str]) -> list[str]:
    """What a healthy run on an AMD ``profile`` lacks: the ``evidence`` metrics printed
    (value or n/a) besides the catalog's healthy set, and ``provenance=sim``."""
    run = run_on_profile(kind, profile)
    printed = set(run.report.metrics) | set(run.report.unmeasurable)
    problems = [f"did not print {name}" for name in sorted(set(evidence) - printed)]
    if run.report.provenance != "sim":
        problems.append(f"provenance {run.report.provenance!r}, expected 'sim'")
    if problems:
        problems.append(f"stdout tail: {run.stdout[-600:]!r}")
    return problems


class AmdNodeRunnerChecks:
    """The AMD matrix on :data:`SIBLING` and the AMD evidence of a healthy run on each of
    :data:`AMD_PROFILES`, for one Node runner: a runner's AMD test module subclasses it
    as ``Test...`` with its ``kind`` and ``evidence`` (printed on a healthy AMD run
    besides the catalog's healthy set, value or n/a)."""

    kind: ClassVar[str]
    evidence: ClassVar[frozenset[str]]

    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        if "case" in metafunc.fixturenames:
            metafunc.parametrize("case", amd_matrix_cases(self.kind, profile=SIBLING), ids=str)
        if "profile" in metafunc.fixturenames:
            metafunc.parametrize("profile", AMD_PROFILES)

    def test_amd_fault_gives_its_matrix_phase(self, case: Case) -> None:
        assert check(RUNNERS[self.kind], case) == []

    def test_amd_healthy_run_prints_the_amd_evidence_with_provenance_sim(
        self, profile: str
    ) -> None:
        assert amd_evidence_problems(self.kind, profile, evidence=self.evidence) == []


class _NoReasonsDevice:
    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def clock_event_reasons(self) -> int:
        raise NotSupportedError("indep_throttle_status is N/A")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class _NoReasonsLibrary:
    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def device(self, index: int) -> _NoReasonsDevice:
        return _NoReasonsDevice(self._inner.device(index))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def without_throttle_reasons(library: Any) -> Any:
    """``library`` (the platform's NVML-shaped source) as an AMD part whose firmware
    publishes no throttler status: every device's ``clock_event_reasons`` is refused."""
    return _NoReasonsLibrary(library)
