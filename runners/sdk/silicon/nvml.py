"""NVML through nvidia-ml-py, translated to the seam's exceptions.

Why translate: runners must tell "the GPU is lost" (hardware finding), "this part cannot
answer" (n/a) and "the driver is broken" (exit 3) apart, and pynvml spells those as
dozens of error classes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from runners.sdk.protocols import (
    ClockKind,
    DriverUnavailableError,
    GpuLostError,
    NotSupportedError,
    RemappedRows,
)

T = TypeVar("T")


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class SiliconDevice:
    def __init__(self, *, nvml: Any, handle: Any, index: int) -> None:
        self._n = nvml
        self._h = handle
        self._index = index

    @property
    def index(self) -> int:
        return self._index

    def _call(self, fn: Callable[..., T], *args: Any) -> T:
        n = self._n
        try:
            return fn(self._h, *args)
        except n.NVMLError as error:
            lost = getattr(n, "NVMLError_GpuIsLost", None)
            if lost is not None and isinstance(error, lost):
                raise GpuLostError(f"GPU {self._index}: {error}", index=self._index) from error
            unsupported = tuple(
                cls
                for cls in (
                    getattr(n, "NVMLError_NotSupported", None),
                    getattr(n, "NVMLError_FunctionNotFound", None),
                )
                if cls is not None
            )
            if unsupported and isinstance(error, unsupported):
                raise NotSupportedError(f"GPU {self._index}: {error}") from error
            raise DriverUnavailableError(f"NVML error on GPU {self._index}: {error}") from error

    def name(self) -> str:
        return _text(self._call(self._n.nvmlDeviceGetName))

    def uuid(self) -> str:
        return _text(self._call(self._n.nvmlDeviceGetUUID))

    def serial(self) -> str:
        return _text(self._call(self._n.nvmlDeviceGetSerial))

    def board_part_number(self) -> str:
        return _text(self._call(self._n.nvmlDeviceGetBoardPartNumber))

    def vbios_version(self) -> str:
        return _text(self._call(self._n.nvmlDeviceGetVbiosVersion))

    def pci_bus_id(self) -> str:
        return _text(self._call(self._n.nvmlDeviceGetPciInfo).busId)

    def compute_capability(self) -> tuple[int, int]:
        major, minor = self._call(self._n.nvmlDeviceGetCudaComputeCapability)
        return int(major), int(minor)

    def memory_total_bytes(self) -> int:
        return int(self._call(self._n.nvmlDeviceGetMemoryInfo).total)

    def memory_bus_width_bits(self) -> int:
        return int(self._call(self._n.nvmlDeviceGetMemoryBusWidth))

    def max_pcie_link(self) -> tuple[int, int]:
        generation = self._call(self._n.nvmlDeviceGetMaxPcieLinkGeneration)
        width = self._call(self._n.nvmlDeviceGetMaxPcieLinkWidth)
        return int(generation), int(width)

    def _clock_type(self, kind: ClockKind) -> int:
        return int(self._n.NVML_CLOCK_SM if kind is ClockKind.SM else self._n.NVML_CLOCK_MEM)

    def clock_mhz(self, kind: ClockKind) -> int:
        return int(self._call(self._n.nvmlDeviceGetClockInfo, self._clock_type(kind)))

    def max_clock_mhz(self, kind: ClockKind) -> int:
        return int(self._call(self._n.nvmlDeviceGetMaxClockInfo, self._clock_type(kind)))

    def performance_state(self) -> int:
        return int(self._call(self._n.nvmlDeviceGetPerformanceState))

    def clock_event_reasons(self) -> int:
        fn = getattr(self._n, "nvmlDeviceGetCurrentClocksEventReasons", None)
        if fn is None:
            fn = self._n.nvmlDeviceGetCurrentClocksThrottleReasons
        return int(self._call(fn))

    def temperature_c(self) -> float:
        return float(self._call(self._n.nvmlDeviceGetTemperature, self._n.NVML_TEMPERATURE_GPU))

    def power_draw_w(self) -> float:
        return float(self._call(self._n.nvmlDeviceGetPowerUsage)) / 1000.0

    def power_limit_w(self) -> float:
        return float(self._call(self._n.nvmlDeviceGetEnforcedPowerLimit)) / 1000.0

    def ecc_enabled(self) -> bool:
        current, _pending = self._call(self._n.nvmlDeviceGetEccMode)
        return bool(current)

    def uncorrected_ecc_total(self) -> int:
        return int(
            self._call(
                self._n.nvmlDeviceGetTotalEccErrors,
                self._n.NVML_MEMORY_ERROR_TYPE_UNCORRECTED,
                self._n.NVML_AGGREGATE_ECC,
            )
        )

    def corrected_ecc_total(self) -> int:
        return int(
            self._call(
                self._n.nvmlDeviceGetTotalEccErrors,
                self._n.NVML_MEMORY_ERROR_TYPE_CORRECTED,
                self._n.NVML_AGGREGATE_ECC,
            )
        )

    def remapped_rows(self) -> RemappedRows:
        correctable, uncorrectable, pending, failure = self._call(self._n.nvmlDeviceGetRemappedRows)
        return RemappedRows(
            correctable=int(correctable),
            uncorrectable=int(uncorrectable),
            pending=bool(pending),
            failure=bool(failure),
        )

    def pcie_replay_count(self) -> int:
        return int(self._call(self._n.nvmlDeviceGetPcieReplayCounter))


class SiliconNvml:
    def __init__(self) -> None:
        try:
            import pynvml
        except ImportError as error:
            raise DriverUnavailableError(f"nvidia-ml-py is not installed: {error}") from error
        try:
            pynvml.nvmlInit()
        except pynvml.NVMLError as error:
            raise DriverUnavailableError(f"NVML could not initialise: {error}") from error
        self._n = pynvml

    def driver_version(self) -> str:
        try:
            return _text(self._n.nvmlSystemGetDriverVersion())
        except self._n.NVMLError as error:
            raise DriverUnavailableError(f"NVML driver version: {error}") from error

    def device_count(self) -> int:
        try:
            return int(self._n.nvmlDeviceGetCount())
        except self._n.NVMLError as error:
            raise DriverUnavailableError(f"NVML device count: {error}") from error

    def device(self, index: int) -> SiliconDevice:
        n = self._n
        try:
            handle = n.nvmlDeviceGetHandleByIndex(index)
        except n.NVMLError as error:
            lost = getattr(n, "NVMLError_GpuIsLost", None)
            if lost is not None and isinstance(error, lost):
                raise GpuLostError(f"GPU {index}: {error}", index=index) from error
            raise DriverUnavailableError(f"NVML handle for GPU {index}: {error}") from error
        return SiliconDevice(nvml=n, handle=handle, index=index)
