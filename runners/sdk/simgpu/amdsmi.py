"""Simulated amdsmi: the Python API of AMD's SMI library, answered from the profile.

Why the library and not the seam: NVML's simulation answers the seam's protocols
directly, but no CI machine has an AMD GPU, so the amdsmi adapter
(``sdk/silicon/amd_smi.py``) would otherwise never run. This object has the same
function names, argument shapes, return dictionaries, ``"N/A"`` fields and
``AmdSmiLibraryException`` (with ``get_error_code``) as the ``amdsmi`` package, so every
simulated fault exercises the adapter's translation on its way to the runners. It is
still the simulator: the platform that carries it is ``provenance=sim``.

Faults (on the last device, like the NVIDIA simulation): ``low-clock`` pins the
performance level at ``LOW`` with the GFX clock at its minimum and no throttler bit
(the P-state trap of clockprobe); ``ecc-uncorrectable`` reports two uncorrectable ECC
errors; ``remap-pending`` one bad page pending retirement; ``fallen-off-bus`` makes every
read fail with ``AMDSMI_STATUS_IO`` while sysfs reads the function's config space as
``0xffff`` (``simgpu/amd_host.py``); ``no-driver`` makes ``amdsmi_init`` fail. Under
load, ``thermal-throttle`` sets the hotspot-temperature throttler and ``power-brake`` a
current (VRM) throttler while they hold (``simgpu/load_faults.py`` says when);
``pcie-downtrain`` halves the link's reported width and speed; ``ecc-correctable-storm``
reports a high and climbing correctable count.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from runners.sdk.simgpu.nvml import ECC_STORM_BASE, ECC_STORM_PER_LOADED_S, pci_bus_id
from runners.sdk.simgpu.spec import ECC_CORRECTABLE_STORM_FAULT, PCIE_DOWNTRAIN_FAULT
from runners.sdk.simgpu.state import SimState

SIM_AMDGPU_DRIVER_VERSION = "6.10.5"
NA = "N/A"

#: Status codes as the ``amdsmi_wrapper`` module spells them (amdsmi.h's values).
STATUS = SimpleNamespace(
    AMDSMI_STATUS_SUCCESS=0,
    AMDSMI_STATUS_INVAL=1,
    AMDSMI_STATUS_NOT_SUPPORTED=2,
    AMDSMI_STATUS_NOT_YET_IMPLEMENTED=3,
    AMDSMI_STATUS_FAIL_LOAD_MODULE=4,
    AMDSMI_STATUS_IO=12,
    AMDSMI_STATUS_INIT_ERROR=18,
    AMDSMI_STATUS_NOT_FOUND=31,
    AMDSMI_STATUS_NO_DATA=40,
)
_STATUS_NAMES = {value: name for name, value in vars(STATUS).items()}


class AmdSmiException(Exception):  # noqa: N818 -- amdsmi's own name, looked up by the adapter
    """Base of amdsmi's exceptions."""


class AmdSmiLibraryException(AmdSmiException):
    """amdsmi's library error: an ``err_code`` and the status name in its text."""

    def __init__(self, err_code: int) -> None:
        super().__init__(err_code)
        self.err_code = abs(err_code)

    def __str__(self) -> str:
        name = _STATUS_NAMES.get(self.err_code, "AMDSMI_STATUS_UNKNOWN_ERROR")
        return f"An error occured with code: {self.err_code}({name})"

    def get_error_code(self) -> int:
        return self.err_code


class AmdSmiClkType(enum.IntEnum):
    SYS = 0
    GFX = 0
    DF = 1
    DCEF = 2
    SOC = 3
    MEM = 4
    PCIE = 5


class AmdSmiTemperatureType(enum.IntEnum):
    EDGE = 0
    HOTSPOT = 1
    JUNCTION = 1
    VRAM = 2


class AmdSmiTemperatureMetric(enum.IntEnum):
    CURRENT = 0
    MAX = 1


class AmdSmiMemoryType(enum.IntEnum):
    VRAM = 0
    VIS_VRAM = 1
    GTT = 2


class AmdSmiMemoryPageStatus(enum.IntEnum):
    RESERVED = 0
    PENDING = 1
    UNRESERVABLE = 2


#: indep_throttle_status bits as the SMU firmware numbers its throttlers (0-15 power,
#: 16-31 current, 32-55 temperature/VR, 56+ other).
THROTTLER_PPT0_BIT = 0
THROTTLER_TEMP_HOTSPOT_BIT = 36
#: A current (EDC/TDC, the VRM's) throttler: what a power-delivery transient trips.
THROTTLER_CURRENT_BIT = 16


@dataclass(frozen=True)
class SimHandle:
    """An opaque processor handle (the real one is a ctypes pointer)."""

    index: int


class SimAmdSmi:
    """The ``amdsmi`` module's surface, over one simulated node."""

    AmdSmiException = AmdSmiException
    AmdSmiLibraryException = AmdSmiLibraryException
    AmdSmiClkType = AmdSmiClkType
    AmdSmiTemperatureType = AmdSmiTemperatureType
    AmdSmiTemperatureMetric = AmdSmiTemperatureMetric
    AmdSmiMemoryType = AmdSmiMemoryType
    AmdSmiMemoryPageStatus = AmdSmiMemoryPageStatus
    amdsmi_wrapper = STATUS

    def __init__(self, state: SimState) -> None:
        self._state = state
        self._profile = state.spec.profile
        self._initialised = False

    # -- library lifetime -------------------------------------------------------------

    def amdsmi_init(self, flags: int = 0) -> None:
        if self._state.spec.has("no-driver"):
            # What amdsmi raises when the amdgpu kernel module is not loaded.
            raise AmdSmiLibraryException(STATUS.AMDSMI_STATUS_INIT_ERROR)
        self._initialised = True

    def amdsmi_shut_down(self) -> None:
        self._initialised = False

    def amdsmi_get_processor_handles(self) -> list[SimHandle]:
        self._require_init()
        return [SimHandle(index) for index in range(self._state.spec.count)]

    def _require_init(self) -> None:
        if not self._initialised:
            raise AmdSmiLibraryException(STATUS.AMDSMI_STATUS_INIT_ERROR)

    def _read(self, handle: SimHandle) -> int:
        """The device index behind ``handle``; a fallen-off device fails every read."""
        self._require_init()
        if self._state.fault_on("fallen-off-bus", handle.index):
            raise AmdSmiLibraryException(STATUS.AMDSMI_STATUS_IO)
        return handle.index

    def _faulty(self, fault: str, index: int) -> bool:
        return self._state.fault_on(fault, index)

    def _loaded_and_free(self, index: int) -> bool:
        return index in self._state.loaded and not self._faulty("low-clock", index)

    # -- identity ---------------------------------------------------------------------

    def amdsmi_get_gpu_device_bdf(self, handle: SimHandle) -> str:
        # The BDF is cached in the handle by amdsmi_init: it answers even for a lost part.
        self._require_init()
        return pci_bus_id(handle.index)[4:].lower()

    def amdsmi_get_gpu_device_uuid(self, handle: SimHandle) -> str:
        index = self._read(handle)
        return f"{self._profile.pci_device_id:04x}ff00-0000-1000-8000-{index:012x}"

    def amdsmi_get_gpu_asic_info(self, handle: SimHandle) -> dict[str, Any]:
        index = self._read(handle)
        return {
            "market_name": self._profile.name,
            "vendor_id": "0x1002",
            "vendor_name": "Advanced Micro Devices Inc. [AMD/ATI]",
            "device_id": f"0x{self._profile.pci_device_id:04x}",
            "rev_id": "0x00",
            "asic_serial": f"0xSIM{self._profile.key.upper()}{index:06d}",
            "target_graphics_version": self._profile.gfx_target,
            "num_compute_units": 304,
        }

    def amdsmi_get_gpu_board_info(self, handle: SimHandle) -> dict[str, Any]:
        self._read(handle)
        return {
            "model_number": self._profile.board_part_number,
            "product_serial": NA,
            "product_name": self._profile.name,
            "manufacturer_name": "AMD",
        }

    def amdsmi_get_gpu_vbios_info(self, handle: SimHandle) -> dict[str, Any]:
        self._read(handle)
        return {"name": "SIM", "build_date": NA, "part_number": NA, "version": self._profile.vbios}

    def amdsmi_get_gpu_driver_info(self, handle: SimHandle) -> dict[str, Any]:
        self._read(handle)
        return {"driver_name": "amdgpu", "driver_version": SIM_AMDGPU_DRIVER_VERSION}

    def amdsmi_get_gpu_memory_total(self, handle: SimHandle, mem_type: int) -> int:
        self._read(handle)
        if mem_type != AmdSmiMemoryType.VRAM:
            raise AmdSmiLibraryException(STATUS.AMDSMI_STATUS_NOT_SUPPORTED)
        return self._profile.memory_mib * 2**20

    def amdsmi_get_gpu_vram_info(self, handle: SimHandle) -> dict[str, Any]:
        self._read(handle)
        return {
            "vram_type": "HBM3E" if self._profile.key == "mi325x" else "HBM3",
            "vram_vendor": NA,
            "vram_size": self._profile.memory_mib,
            "vram_bit_width": self._profile.memory_bus_width_bits,
        }

    def amdsmi_get_pcie_info(self, handle: SimHandle) -> dict[str, Any]:
        index = self._read(handle)
        down = 1 if self._faulty(PCIE_DOWNTRAIN_FAULT, index) else 0
        return {
            "pcie_static": {
                "max_pcie_width": self._profile.pcie_width,
                "max_pcie_speed": 32000,
                "pcie_interface_version": self._profile.pcie_generation,
                "slot_type": "OAM",
            },
            "pcie_metric": {
                "pcie_width": self._profile.pcie_width >> down,
                "pcie_speed": 32000 >> down,
            },
        }

    # -- clocks, performance level, throttling ----------------------------------------

    def amdsmi_get_clock_info(self, handle: SimHandle, clk_type: int) -> dict[str, Any]:
        index = self._read(handle)
        profile = self._profile
        if clk_type == AmdSmiClkType.MEM:
            high = profile.max_mem_clock_mhz
            current = high if self._loaded_and_free(index) else 900
            return {"clk": current, "min_clk": 900, "max_clk": high, "clk_locked": False}
        if clk_type != AmdSmiClkType.GFX:
            raise AmdSmiLibraryException(STATUS.AMDSMI_STATUS_NOT_SUPPORTED)
        if self._loaded_and_free(index):
            # The same small deterministic wobble the NVIDIA simulation has.
            wobble = (int(self._state.clock.now * 10) % 3) * 15
            scale = self._state.condition(index).sm_scale
            current = round(profile.rated_boost_sm_mhz * scale) - wobble
        else:
            current = profile.idle_sm_mhz
        return {
            "clk": current,
            "min_clk": profile.idle_sm_mhz,
            "max_clk": profile.rated_boost_sm_mhz,
            "clk_locked": self._faulty("low-clock", index),
            "clk_deep_sleep": current == profile.idle_sm_mhz,
        }

    def amdsmi_get_gpu_perf_level(self, handle: SimHandle) -> str:
        index = self._read(handle)
        if self._faulty("low-clock", index):
            return "AMDSMI_DEV_PERF_LEVEL_LOW"
        return "AMDSMI_DEV_PERF_LEVEL_AUTO"

    def amdsmi_get_gpu_metrics_info(self, handle: SimHandle) -> dict[str, Any]:
        index = self._read(handle)
        loaded = index in self._state.loaded
        condition = self._state.condition(index)
        # A part pinned low reports no throttler: that is what hides it from passive checks.
        # A throttling one sets its hotspot-temperature or current (VRM) throttler.
        throttlers = 0
        if condition.thermal:
            throttlers |= 1 << THROTTLER_TEMP_HOTSPOT_BIT
        if condition.power_brake:
            throttlers |= 1 << THROTTLER_CURRENT_BIT
        return {
            "temperature_hotspot": self._hotspot_c(index),
            "temperature_mem": 60 if loaded else 33,
            "average_gfx_activity": 100 if loaded else 0,
            "throttle_status": NA,
            "indep_throttle_status": throttlers,
            "current_gfxclk": NA,
        }

    def amdsmi_get_gpu_activity(self, handle: SimHandle) -> dict[str, Any]:
        index = self._read(handle)
        busy = 100 if index in self._state.loaded else 0
        return {"gfx_activity": busy, "umc_activity": busy, "mm_activity": NA}

    # -- temperature and power --------------------------------------------------------

    def amdsmi_get_temp_metric(self, handle: SimHandle, sensor: int, metric: int) -> int:
        index = self._read(handle)
        if sensor == AmdSmiTemperatureType.EDGE:
            # MI300-class parts have no edge sensor; hotspot (junction) is the one to read.
            raise AmdSmiLibraryException(STATUS.AMDSMI_STATUS_NOT_SUPPORTED)
        if metric != AmdSmiTemperatureMetric.CURRENT:
            raise AmdSmiLibraryException(STATUS.AMDSMI_STATUS_NOT_SUPPORTED)
        return self._hotspot_c(index)

    def _hotspot_c(self, index: int) -> int:
        if index not in self._state.loaded:
            return 38
        hot = self._state.condition(index).temp_c
        return 71 if hot is None else round(hot)

    def amdsmi_get_power_info(self, handle: SimHandle) -> dict[str, Any]:
        index = self._read(handle)
        limit = self._profile.power_limit_w
        braked = self._state.condition(index).power_scale
        draw = limit * (
            (0.93 if braked is None else braked) if self._loaded_and_free(index) else 0.14
        )
        # MI300-class parts report the average socket power; the current one is N/A.
        return {
            "current_socket_power": NA,
            "average_socket_power": round(draw),
            "gfx_voltage": NA,
            "soc_voltage": NA,
            "mem_voltage": NA,
            "power_limit": round(limit * 1e6),
        }

    def amdsmi_get_power_cap_info(self, handle: SimHandle) -> dict[str, Any]:
        self._read(handle)
        cap = round(self._profile.power_limit_w * 1e6)
        return {
            "power_cap": cap,
            "default_power_cap": cap,
            "dpm_cap": 0,
            "min_power_cap": 0,
            "max_power_cap": cap,
        }

    # -- memory errors and the PCIe link ----------------------------------------------

    def amdsmi_get_gpu_ecc_enabled(self, handle: SimHandle) -> int:
        self._read(handle)
        if not self._profile.ecc_supported:
            raise AmdSmiLibraryException(STATUS.AMDSMI_STATUS_NOT_SUPPORTED)
        return 0x3FFF  # every RAS block (UMC, SDMA, GFX, ...) has ECC on

    def amdsmi_get_gpu_total_ecc_count(self, handle: SimHandle) -> dict[str, Any]:
        index = self._read(handle)
        uncorrectable = 2 if self._faulty("ecc-uncorrectable", index) else 0
        correctable = 0
        if self._faulty(ECC_CORRECTABLE_STORM_FAULT, index):
            loaded = self._state.seconds_loaded(index)
            correctable = ECC_STORM_BASE + round(ECC_STORM_PER_LOADED_S * loaded)
        return {
            "correctable_count": correctable,
            "uncorrectable_count": uncorrectable,
            "deferred_count": 0,
        }

    def amdsmi_get_gpu_bad_page_info(self, handle: SimHandle) -> list[dict[str, Any]]:
        index = self._read(handle)
        if not self._faulty("remap-pending", index):
            return []
        return [
            {
                "value": 0,
                "page_address": 0x3F_FA00_0000,
                "page_size": 4096,
                "status": AmdSmiMemoryPageStatus.PENDING,
            }
        ]

    def amdsmi_get_gpu_pci_replay_counter(self, handle: SimHandle) -> int:
        self._read(handle)
        return 0
