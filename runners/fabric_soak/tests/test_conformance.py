"""fabric-soak against the runner contract and the fabric fault matrix: a real server and
client on loopback, the simulated fabric behind each (runners/conformance/fabric.py)."""

import pytest

from runners.catalog import RUNNERS
from runners.conformance import FabricCase, check_fabric, fabric_cases_for

KIND = "fabric-soak"


@pytest.mark.parametrize("case", fabric_cases_for(KIND), ids=str)
def test_conforms_to_contract_and_fabric_fault_matrix(case: FabricCase) -> None:
    assert check_fabric(RUNNERS[KIND], case) == []
