"""disk-io against the runner contract and the fault matrix (runners/conformance/node.py):
the catalog's spec and ``cases_for``'s cases, every one run with the real fio on a real
tmpfs (the catalog's test_env has no path on purpose: this module mounts one).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from runners.catalog import RUNNERS
from runners.conformance import Case, cases_for, check
from runners.disk_io.target import PATH_ENV
from runners.disk_io.tests.mounts import mounted_tmpfs
from runners.fault_matrix import ERROR, FAULT_MATRIX, FAULTS, NOT_READ, PASSED

KIND = "disk-io"
SPEC = RUNNERS[KIND]


@pytest.fixture(scope="module")
def tmpfs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with mounted_tmpfs(tmp_path_factory.mktemp("disk-io") / "tmpfs", size="64m") as where:
        yield where


@pytest.mark.parametrize("case", cases_for(KIND), ids=str)
def test_conforms_to_contract_and_fault_matrix(case: Case, tmpfs: Path) -> None:
    spec = replace(SPEC, test_env={**SPEC.test_env, PATH_ENV: str(tmpfs)})
    assert check(spec, case) == []
    assert list(tmpfs.iterdir()) == []


def test_the_gpu_faults_never_reach_the_disk_runner() -> None:
    # The simulated GPU's faults are "not read" by disk-io; only the injected crash is.
    row = FAULT_MATRIX[KIND]
    assert tuple(row) == FAULTS
    assert {f for f, phase in row.items() if phase != NOT_READ} == {"healthy", "crash"}
    assert (row["healthy"], row["crash"]) == (PASSED, ERROR)
