"""disk-io against the runner contract and the fault matrix (runners/conformance.py).

Until the catalog and the fault matrix register disk-io (.handoff/h16disk-shared.md), the
spec and its fault row are built here, from the same fields and the same case rules as
``runners.conformance.cases_for``; every case runs the real fio on a real tmpfs.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from glimmer.contract import SIM_GPU_ENV
from runners.catalog import RunnerSpec
from runners.conformance import Case, check
from runners.disk_io.target import PATH_ENV
from runners.disk_io.tests.mounts import mounted_tmpfs
from runners.fault_matrix import (
    ERROR,
    EXIT_CODES,
    FAULTS,
    MATRIX_PROFILE,
    NOT_READ,
    PASSED,
)

KIND = "disk-io"
HEALTHY_METRICS = frozenset(
    {
        "provenance",
        "writeBandwidthMBs",
        "readBandwidthMBs",
        "ioLatencyUs",
        "p99LatencyUs",
        "ioErrors",
        "diskIoPath",
        "fioVersion",
        "elapsedS",
        "durationRequestedS",
    }
)
#: The catalog entry proposed in .handoff/h16disk-shared.md (test_env's path is a tmpfs here).
SPEC = RunnerSpec(
    kind=KIND,
    module="runners.disk_io",
    prefix="DISK_IO",
    pass_line="DISK_IO_PASS",
    fail_prefix="DISK_IO_FAIL:",
    error_prefix="DISK_IO_ERROR:",
    healthy_metrics=HEALTHY_METRICS,
    reads_gpu=False,
    test_env={"BURNIN_DISK_IO_SIZE_MB": "8", "BURNIN_DISK_IO_SECONDS": "3"},
    missing_dependency_env={"BURNIN_FIO_PATH": "/nonexistent/fio"},
    image="ghcr.io/glimmer-ai/glimmer-runner-disk-io",
)
#: The fault-matrix row proposed for runners/fault_matrix.py: the simulated GPU's faults
#: cannot reach the disk (not read); an injected crash is Error.
ROW = {fault: PASSED if fault == "healthy" else NOT_READ for fault in FAULTS} | {"crash": ERROR}


def cases() -> list[Case]:
    """``runners.conformance.cases_for`` for disk-io, from SPEC and ROW."""
    # A host-only runner: of the healthy profiles only h200 is run (the others change
    # nothing it reads; PROFILE_MATRIX marks them "not read").
    found = [Case(KIND, "healthy-h200", {SIM_GPU_ENV: "h200"}, 0, require_healthy_metrics=True)]
    for fault, phase in ROW.items():
        if phase == NOT_READ:
            continue
        sim = MATRIX_PROFILE if fault == "healthy" else f"{MATRIX_PROFILE}:{fault}"
        found.append(Case(KIND, fault, {SIM_GPU_ENV: sim}, EXIT_CODES[phase], fault == "healthy"))
    found.append(Case(KIND, "missing-dependency", SPEC.missing_dependency_env, 3))
    found.append(Case(KIND, "unknown-fault", {SIM_GPU_ENV: "h200:no-such-fault"}, 3))
    found.append(Case(KIND, "no-silicon-gpu-needed", {SIM_GPU_ENV: ""}, 0, True))
    return found


@pytest.fixture(scope="module")
def tmpfs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with mounted_tmpfs(tmp_path_factory.mktemp("disk-io") / "tmpfs", size="64m") as where:
        yield where


@pytest.mark.parametrize("case", cases(), ids=str)
def test_conforms_to_contract_and_fault_matrix(case: Case, tmpfs: Path) -> None:
    spec = replace(SPEC, test_env={**SPEC.test_env, PATH_ENV: str(tmpfs)})
    assert check(spec, case) == []
    assert list(tmpfs.iterdir()) == []


def test_the_row_covers_every_simulated_fault() -> None:
    assert tuple(ROW) == FAULTS
