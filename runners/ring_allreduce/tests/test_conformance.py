"""ring-allreduce against the runner contract and its link fault matrix: three real
ranks on loopback, real bytes around the ring (runners/conformance/links.py)."""

import pytest

from runners.catalog import RUNNERS
from runners.conformance import LinkCase, check_link, link_cases_for

KIND = "ring-allreduce"


@pytest.mark.parametrize("case", link_cases_for(KIND), ids=str)
def test_conforms_to_contract_and_link_fault_matrix(case: LinkCase) -> None:
    assert check_link(RUNNERS[KIND], case) == []
