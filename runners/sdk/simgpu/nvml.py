"""Simulated NVML: answers the facade's calls from the profile and the injected faults."""

from __future__ import annotations

from runners.sdk.protocols import (
    ClockKind,
    GpuLostError,
    NotSupportedError,
    RemappedRows,
)
from runners.sdk.simgpu.spec import ECC_CORRECTABLE_STORM_FAULT
from runners.sdk.simgpu.state import SimState

SIM_DRIVER_VERSION = "570.124.06"
#: ``ecc-correctable-storm``: the lifetime corrected count the faulty device starts at,
#: and how many more it corrects per second under load (memory traffic finds more).
ECC_STORM_BASE = 18_000
ECC_STORM_PER_LOADED_S = 25.0


def pci_bus_id(index: int) -> str:
    return f"00000000:{0x18 + index * 0x10:02X}:00.0"


class SimDevice:
    def __init__(self, *, state: SimState, index: int) -> None:
        self._state = state
        self._index = index
        self._profile = state.spec.profile

    @property
    def index(self) -> int:
        return self._index

    def _check(self) -> None:
        if self._faulty("fallen-off-bus"):
            raise GpuLostError(
                f"GPU {self._index} is lost (NVML_ERROR_GPU_IS_LOST)", index=self._index
            )

    def _faulty(self, fault: str) -> bool:
        return self._state.fault_on(fault, self._index)

    def name(self) -> str:
        self._check()
        return self._profile.name

    def uuid(self) -> str:
        self._check()
        return f"GPU-5100{self._index:04x}-0000-4000-8000-{self._profile.pci_device_id:012x}"

    def serial(self) -> str:
        self._check()
        return f"SIM{self._profile.key.upper()}{self._index:06d}"

    def board_part_number(self) -> str:
        self._check()
        return self._profile.board_part_number

    def vbios_version(self) -> str:
        self._check()
        return self._profile.vbios

    def pci_bus_id(self) -> str:
        self._check()
        return pci_bus_id(self._index)

    def compute_capability(self) -> tuple[int, int]:
        self._check()
        return self._profile.compute_capability

    def memory_total_bytes(self) -> int:
        self._check()
        return self._profile.memory_mib * 2**20

    def memory_bus_width_bits(self) -> int:
        self._check()
        return self._profile.memory_bus_width_bits

    def max_pcie_link(self) -> tuple[int, int]:
        self._check()
        return self._profile.pcie_generation, self._profile.pcie_width

    def _loaded_and_free(self) -> bool:
        return self._index in self._state.loaded and not self._faulty("low-clock")

    def clock_mhz(self, kind: ClockKind) -> int:
        self._check()
        if kind is ClockKind.MEM:
            return self._profile.max_mem_clock_mhz if self._loaded_and_free() else 1593
        if self._loaded_and_free():
            # A small deterministic wobble so averages are not trivially the maximum.
            wobble = (int(self._state.clock.now * 10) % 3) * 15
            scale = self._state.condition(self._index).sm_scale
            return round(self._profile.rated_boost_sm_mhz * scale) - wobble
        return self._profile.idle_sm_mhz

    def max_clock_mhz(self, kind: ClockKind) -> int:
        self._check()
        if kind is ClockKind.MEM:
            return self._profile.max_mem_clock_mhz
        return self._profile.rated_boost_sm_mhz

    def performance_state(self) -> int:
        self._check()
        return 0 if self._loaded_and_free() else 8

    def clock_event_reasons(self) -> int:
        self._check()
        if self._index in self._state.loaded:
            # A part pinned low by a stuck P-state reports no reason at all: that is
            # what makes it invisible to passive checks. A throttling one says why.
            return self._state.condition(self._index).reasons
        return 0x1

    def temperature_c(self) -> float:
        self._check()
        if self._index not in self._state.loaded:
            return 34.0
        hot = self._state.condition(self._index).temp_c
        return 67.0 if hot is None else hot

    def power_draw_w(self) -> float:
        self._check()
        if self._loaded_and_free():
            braked = self._state.condition(self._index).power_scale
            return self._profile.power_limit_w * (0.93 if braked is None else braked)
        return self._profile.power_limit_w * 0.11

    def power_limit_w(self) -> float:
        self._check()
        return self._profile.power_limit_w

    def ecc_enabled(self) -> bool:
        self._check()
        if not self._profile.ecc_supported:
            raise NotSupportedError("ECC not supported on this part")
        return True

    def uncorrected_ecc_total(self) -> int:
        self._check()
        return 2 if self._faulty("ecc-uncorrectable") else 0

    def corrected_ecc_total(self) -> int:
        self._check()
        if not self._faulty(ECC_CORRECTABLE_STORM_FAULT):
            return 0
        loaded = self._state.seconds_loaded(self._index)
        return ECC_STORM_BASE + round(ECC_STORM_PER_LOADED_S * loaded)

    def remapped_rows(self) -> RemappedRows:
        self._check()
        if self._faulty("remap-pending"):
            return RemappedRows(correctable=0, uncorrectable=1, pending=True, failure=False)
        return RemappedRows(correctable=0, uncorrectable=0, pending=False, failure=False)

    def pcie_replay_count(self) -> int:
        self._check()
        return 0


class SimNvml:
    def __init__(self, state: SimState) -> None:
        state.require_driver("NVML: libnvidia-ml.so.1 not found (NVML_ERROR_LIBRARY_NOT_FOUND)")
        self._state = state

    def driver_version(self) -> str:
        return SIM_DRIVER_VERSION

    def device_count(self) -> int:
        return self._state.spec.count

    def device(self, index: int) -> SimDevice:
        if not 0 <= index < self._state.spec.count:
            raise IndexError(index)
        return SimDevice(state=self._state, index=index)
