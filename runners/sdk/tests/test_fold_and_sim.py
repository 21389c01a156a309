"""Device folding (A17, B4) and the simulated GPU's fault placement."""

from __future__ import annotations

import io

import pytest

from runners.sdk.fold import print_spread, spread_pct
from runners.sdk.gpus import DeviceSlot, select_devices
from runners.sdk.outcome import RunnerError
from runners.sdk.platform import open_platform
from runners.sdk.protocols import GpuLostError
from runners.sdk.report import Markers, Report
from runners.sdk.simgpu.spec import parse_spec


def slots(*names: str) -> list[DeviceSlot]:
    return [DeviceSlot(index=i, pci_bus_id=f"bus{i}", name=n) for i, n in enumerate(names)]


def printed(fn: object) -> list[str]:
    out = io.StringIO()
    fn(Report(markers=Markers.for_prefix("T"), out=out))
    return out.getvalue().splitlines()


def test_B4_spread_is_na_on_one_device() -> None:
    lines = printed(
        lambda r: print_spread(
            report=r, name="sustainedClockSpreadPct", slots=slots("A"), values=[99]
        )
    )
    assert lines == ["sustainedClockSpreadPct=n/a"]


def test_B4_spread_is_na_on_a_heterogeneous_board() -> None:
    lines = printed(
        lambda r: print_spread(
            report=r, name="sustainedClockSpreadPct", slots=slots("A", "B"), values=[99, 50]
        )
    )
    assert lines == ["sustainedClockSpreadPct=n/a"]


def test_B4_spread_is_measured_on_a_homogeneous_board() -> None:
    assert spread_pct([100.0, 80.0]) == pytest.approx(20.0)


def test_A17_short_allocation_is_an_error_not_a_smaller_test() -> None:
    platform = open_platform({"GLIMMER_SIM_GPU": "h200x2"})
    with pytest.raises(RunnerError, match="8 GPUs allocated but only 2 visible"):
        select_devices(nvml=platform.nvml(), allocated=8)


def test_faults_land_on_the_last_device_so_folds_must_find_them() -> None:
    platform = open_platform({"GLIMMER_SIM_GPU": "h100x4:fallen-off-bus"})
    nvml = platform.nvml()
    assert nvml.device(0).name() == "NVIDIA H100 80GB HBM3"
    with pytest.raises(GpuLostError):
        nvml.device(3).name()


def test_sim_spec_parses_profile_count_and_faults() -> None:
    spec = parse_spec("GB200x4:xid:79,low-clock")
    assert (spec.profile.key, spec.count, spec.xid_codes) == ("gb200", 4, (79,))
    assert spec.has("low-clock")


@pytest.mark.parametrize("text", ["h300", "h200x0", "h200:warp-drive", "h200:xid:abc"])
def test_sim_spec_refuses_what_it_does_not_know(text: str) -> None:
    with pytest.raises(RunnerError):
        parse_spec(text)


def test_sim_memory_clock_reproduces_nominal_hbm_bandwidth() -> None:
    h100 = parse_spec("h100").profile
    assert 2 * h100.max_mem_clock_mhz * 1e6 * h100.memory_bus_width_bits / 8 / 1e9 == (
        pytest.approx(3350, rel=1e-3)
    )
