"""I3: ``--sim`` is checked with the runners' own parser before anything runs."""

from __future__ import annotations

import pytest

from runners.catalog import sim_spec_problem
from runners.sdk.simgpu.profiles import PROFILES
from runners.sdk.simgpu.spec import FAULTS


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_I3_every_known_profile_and_fault_is_accepted(profile: str) -> None:
    assert sim_spec_problem(profile) is None
    # nvlink-down needs a part with NVLink (a PCIe T4 or a GB10 has none): refused there
    faults = sorted(FAULTS - ({"nvlink-down"} if PROFILES[profile].nvlinks == 0 else set()))
    assert sim_spec_problem(f"{profile}x2:{','.join(faults)},xid:79") is None


@pytest.mark.parametrize("spec", ["t4x2:nvlink-down", "gb10x2:nvlink-down", "h200:nvlink-down"])
def test_nvlink_down_is_refused_where_no_nvlink_can_be_down(spec: str) -> None:
    problem = sim_spec_problem(spec)
    assert problem is not None and "nvlink-down" in problem


def test_I3_unknown_profile_is_named_with_the_known_profiles() -> None:
    problem = sim_spec_problem("h201:low-clock")
    assert problem is not None and "unknown profile 'h201'" in problem
    assert all(repr(key) in problem for key in PROFILES)


@pytest.mark.parametrize("bad", ["low-clok", "xid:9999", "xid:"])
def test_I3_unknown_fault_is_named_with_the_known_faults(bad: str) -> None:
    problem = sim_spec_problem(f"h200:low-clock,{bad}")
    assert problem is not None and f"unknown fault {bad!r}" in problem
    assert all(fault in problem for fault in [*FAULTS, "xid:<code>"])


def test_I3_device_count_out_of_range_is_refused() -> None:
    assert sim_spec_problem("h200x99") == "device count 99 outside 1..64"
