"""memory-stress against the runner contract and the fault matrix (runners/conformance/node.py)."""

import pytest

from runners.catalog import RUNNERS
from runners.conformance import Case, cases_for, check

KIND = "memory-stress"


@pytest.mark.parametrize("case", cases_for(KIND), ids=str)
def test_conforms_to_contract_and_fault_matrix(case: Case) -> None:
    assert check(RUNNERS[KIND], case) == []
