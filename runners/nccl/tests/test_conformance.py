"""nccl against the runner contract: the Node fault matrix on h200x2, and the fabric
matrix over a Group of four real processes (and a Pair) on loopback."""

import pytest

from runners.catalog import RUNNERS
from runners.conformance import Case, FabricCase, cases_for, check, check_fabric, fabric_cases_for

KIND = "nccl"


@pytest.mark.parametrize("case", cases_for(KIND), ids=str)
def test_node_scope_conforms_to_contract_and_fault_matrix(case: Case) -> None:
    assert check(RUNNERS[KIND], case) == []


@pytest.mark.parametrize("case", fabric_cases_for(KIND), ids=str)
def test_pair_and_group_conform_to_the_fabric_fault_matrix(case: FabricCase) -> None:
    assert check_fabric(RUNNERS[KIND], case) == []
