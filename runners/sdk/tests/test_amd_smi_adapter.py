"""The amdsmi adapter's translation (``runners/sdk/silicon/amd_smi.py``) and the ROCm
compute backend's device matching, against the simulated amdsmi and hand-made answers."""

from __future__ import annotations

from typing import Any

import pytest

from runners.sdk.protocols import (
    ClockKind,
    DriverUnavailableError,
    GpuLostError,
    NotSupportedError,
)
from runners.sdk.silicon.amd_smi import (
    AmdSmiLibrary,
    pstate_from_perf_level,
    throttle_reasons_from_amd,
)
from runners.sdk.silicon.rocm_compute import hip_pci_address, match_devices
from runners.sdk.simgpu.amd_host import AmdSimSysfs
from runners.sdk.simgpu.amdsmi import STATUS, AmdSmiLibraryException, SimAmdSmi
from runners.sdk.simgpu.profiles import AMD_PROFILES
from runners.sdk.simgpu.spec import parse_spec
from runners.sdk.simgpu.state import SimState


def library(spec: str) -> tuple[AmdSmiLibrary, SimState]:
    state = SimState(spec=parse_spec(spec))
    return AmdSmiLibrary(SimAmdSmi(state), sysfs=AmdSimSysfs(state)), state


class FailingSmi(SimAmdSmi):
    """The simulated amdsmi, with one read failing with a chosen status."""

    def __init__(self, state: SimState, *, status: int) -> None:
        super().__init__(state)
        self._status = status

    def amdsmi_get_gpu_total_ecc_count(self, handle: Any) -> dict[str, Any]:
        raise AmdSmiLibraryException(self._status)


@pytest.mark.parametrize("key", sorted(AMD_PROFILES))
def test_healthy_amd_part_reads_its_datasheet_figures(key: str) -> None:
    smi, _ = library(f"{key}x2")
    profile = AMD_PROFILES[key]
    device = smi.device(1)
    assert device.name() == profile.name
    assert device.memory_total_bytes() == profile.memory_mib * 2**20
    assert device.power_limit_w() == profile.power_limit_w
    assert device.max_clock_mhz(ClockKind.SM) == profile.rated_boost_sm_mhz
    assert device.max_pcie_link() == (5, 16)
    assert device.gfx_target() == "gfx942"
    assert device.ecc_enabled() and device.uncorrected_ecc_total() == 0
    assert device.remapped_rows().uncorrectable == 0
    assert smi.driver_version()
    # 4 transfers x MCLK x 8192 bit is the rated HBM bandwidth (within a rounding MHz).
    rated = 4 * device.max_clock_mhz(ClockKind.MEM) * 1e6 * 8192 / 8 / 1e9
    assert abs(rated - profile.hbm_bandwidth_gbs) < 5
    with pytest.raises(NotSupportedError):
        device.compute_capability()


def test_power_falls_back_to_average_socket_power_when_current_is_na() -> None:
    smi, _ = library("mi300x")
    assert smi.device(0).power_draw_w() == round(750 * 0.14)


def test_not_supported_status_is_not_supported() -> None:
    state = SimState(spec=parse_spec("mi300x"))
    smi = FailingSmi(state, status=STATUS.AMDSMI_STATUS_NOT_SUPPORTED)
    with pytest.raises(NotSupportedError):
        AmdSmiLibrary(smi, sysfs=AmdSimSysfs(state)).device(0).uncorrected_ecc_total()


def test_amd_gpu_is_lost_only_with_positive_pci_evidence() -> None:
    """An I/O error on a part whose config space still answers is a driver problem
    (exit 3), never "lost" (a hardware Fail in host-health)."""
    state = SimState(spec=parse_spec("mi300x"))
    smi = FailingSmi(state, status=STATUS.AMDSMI_STATUS_IO)
    with pytest.raises(DriverUnavailableError):
        AmdSmiLibrary(smi, sysfs=AmdSimSysfs(state)).device(0).uncorrected_ecc_total()


def test_fallen_off_amd_gpu_is_lost_on_the_faulty_device_only() -> None:
    smi, _ = library("mi300xx2:fallen-off-bus")
    assert smi.device(0).uncorrected_ecc_total() == 0
    with pytest.raises(GpuLostError) as lost:
        smi.device(1).uncorrected_ecc_total()
    assert lost.value.index == 1
    assert smi.driver_version()  # read from the device that still answers


def test_no_driver_is_driver_unavailable() -> None:
    with pytest.raises(DriverUnavailableError, match="amdsmi could not initialise"):
        library("mi325x:no-driver")


def test_bad_pages_are_retired_rows_and_a_pending_page_is_a_pending_remap() -> None:
    smi, _ = library("mi300xx2:remap-pending")
    rows = smi.device(1).remapped_rows()
    assert rows.uncorrectable == 1 and rows.pending and not rows.failure


def test_low_clock_is_a_floor_performance_level_with_no_throttler() -> None:
    smi, state = library("mi300xx2:low-clock")
    state.loaded.update({0, 1})
    assert smi.device(1).performance_state() == 8
    assert smi.device(1).clock_event_reasons() == 0
    assert smi.device(1).clock_mhz(ClockKind.SM) == AMD_PROFILES["mi300x"].idle_sm_mhz
    assert smi.device(0).performance_state() == 0


def test_devices_are_in_pci_order_whatever_amdsmi_returns() -> None:
    state = SimState(spec=parse_spec("mi300xx3"))

    class Reversed(SimAmdSmi):
        def amdsmi_get_processor_handles(self) -> list[Any]:
            return list(reversed(super().amdsmi_get_processor_handles()))

    smi = AmdSmiLibrary(Reversed(state), sysfs=AmdSimSysfs(state))
    bdfs = [smi.device(i).pci_bus_id() for i in range(3)]
    assert bdfs == sorted(bdfs)


@pytest.mark.parametrize(
    ("mask", "reasons"),
    [
        (0, 0),
        (1 << 0, 0x4),
        (1 << 17, 0x8),
        (1 << 36, 0x20),
        (1 << 57, 0x8),
        ((1 << 2) | (1 << 33), 0x24),
    ],
)
def test_throttler_bits_fold_into_nvml_reasons(mask: int, reasons: int) -> None:
    assert throttle_reasons_from_amd(mask) == reasons


@pytest.mark.parametrize(
    ("level", "pstate"),
    [
        ("AMDSMI_DEV_PERF_LEVEL_AUTO", 0),
        ("AMDSMI_DEV_PERF_LEVEL_DETERMINISM", 0),
        ("AMDSMI_DEV_PERF_LEVEL_LOW", 8),
        ("AMDSMI_DEV_PERF_LEVEL_STABLE_MIN_SCLK", 8),
        ("AMDSMI_DEV_PERF_LEVEL_MANUAL", 2),
        ("AMDSMI_DEV_PERF_LEVEL_UNKNOWN", 2),
    ],
)
def test_performance_levels_map_to_pstates(level: str, pstate: int) -> None:
    assert pstate_from_perf_level(level) == pstate


def test_hip_devices_are_matched_to_amdsmi_by_pci_address() -> None:
    seam = ["0000:05:00.0", "0000:26:00.0"]
    assert match_devices(seam_bdfs=seam, hip_bdfs=["0000:26:00.0", "0000:05:00.0"]) == [1, 0]


def test_hip_order_unknowable_on_a_multi_gpu_node_is_refused() -> None:
    with pytest.raises(DriverUnavailableError, match="cannot be matched"):
        match_devices(seam_bdfs=["0000:05:00.0", "0000:26:00.0"], hip_bdfs=[None, None])
    with pytest.raises(DriverUnavailableError, match="amdsmi sees 2 GPUs but HIP sees 1"):
        match_devices(seam_bdfs=["0000:05:00.0", "0000:26:00.0"], hip_bdfs=["0000:05:00.0"])
    assert match_devices(seam_bdfs=["0000:05:00.0"], hip_bdfs=[None]) == [0]


def test_hip_pci_address_from_device_properties() -> None:
    class Props:
        pci_bus_id = 0x26
        pci_device_id = 0
        pci_domain_id = 0

    assert hip_pci_address(Props()) == "0000:26:00.0"
    assert hip_pci_address(object()) is None


def test_xid_faults_are_refused_on_amd_profiles() -> None:
    from runners.sdk.outcome import RunnerError

    with pytest.raises(RunnerError, match="xid faults are NVIDIA driver events"):
        parse_spec("mi300x:xid:79")


def test_amd_count_spelling_is_refused_with_the_spelling_that_works() -> None:
    from runners.sdk.outcome import RunnerError

    with pytest.raises(RunnerError, match="did you mean mi300xx2"):
        parse_spec("mi300x2")
    assert parse_spec("mi300xx2").count == 2 and parse_spec("mi300xx2").profile.key == "mi300x"
