"""memory-bw on the simulated AMD parts: the AMD matrix cells and evidence
(``runners/tests/amd_fixtures.py``), and the basis of the HBM bandwidth floor."""

from __future__ import annotations

import re

import pytest

from runners.catalog import RUNNERS
from runners.conformance import execute
from runners.tests.amd_fixtures import AmdNodeRunnerChecks

KIND = "memory-bw"


class TestMemoryBwOnAmd(AmdNodeRunnerChecks):
    kind = KIND
    evidence = frozenset({"gfxTarget", "memoryBandwidthGBs"})


@pytest.mark.parametrize(("profile", "rated"), [("mi300x", 5300), ("mi325x", 6000)])
def test_amd_hbm_floor_is_the_datasheet_bandwidth(profile: str, rated: int) -> None:
    """amdsmi's MCLK counts four transfers per clock on CDNA3: the floor's basis must be
    the part's rated HBM bandwidth, not half of it (which would hide a slow part)."""
    spec = RUNNERS[KIND]
    run = execute(spec.command, kind=KIND, env={"GLIMMER_SIM_GPU": profile}, timeout_s=60)
    floors = [float(x) for x in re.findall(r"d2d: .* of ([0-9.]+) GB/s theoretical", run.stdout)]
    assert floors, run.stdout[-600:]
    assert all(abs(floor - rated) / rated < 0.01 for floor in floors), floors
