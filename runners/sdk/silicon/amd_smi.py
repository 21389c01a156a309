"""amdsmi (AMD's SMI library, Python bindings) behind the seam's ``Nvml``/``GpuDevice``.

Why an adapter over "an amdsmi": it takes the library as an argument — the ``amdsmi``
package on silicon (:func:`load_amdsmi`, imported only then), the simulated library
(``simgpu/amdsmi.py``) under ``GLIMMER_SIM_GPU=mi300x`` — so the translation below runs
under every simulated fault although no CI machine has an AMD GPU. On silicon it is
written against amdsmi's published Python API and is untested on hardware here.

Translation (the seam speaks NVML's vocabulary, ``sdk/protocols.py``):

- errors: ``AMDSMI_STATUS_NOT_SUPPORTED``/``NOT_YET_IMPLEMENTED``/``NO_DATA`` and a
  field reading ``"N/A"`` are :class:`NotSupportedError`; any other library error is
  :class:`GpuLostError` only with positive evidence — the function's PCI config space
  reads ``0xffff`` or it is gone from sysfs (what a part off the bus looks like) — and
  otherwise :class:`DriverUnavailableError` (exit 3, never a hardware verdict);
- clocks: GFX is the SM clock, MEM the memory clock (amdsmi's MCLK, a quarter of the
  HBM3 data rate on CDNA3: ``simgpu/profiles.py`` ``mem_transfers_per_clock``);
- ``performance_state``: amdsmi has performance *levels*, not P-states: ``AUTO``,
  ``HIGH``, ``STABLE_PEAK`` and ``DETERMINISM`` leave the part free to boost (0);
  ``LOW``, ``STABLE_MIN_SCLK`` and ``STABLE_MIN_MCLK`` force it to its floor (8, the
  pinned-low case clockprobe names); ``MANUAL``/``STABLE_STD``/others fix it (2);
- ``clock_event_reasons``: the SMU's independent throttler bits
  (``indep_throttle_status``) folded into NVML reason bits: power (bits 0-15) ->
  ``swPowerCap``, current (16-31) -> ``hwSlowdown``, temperature/VR (32-55) ->
  ``swThermalSlowdown``, the rest -> ``hwSlowdown``;
- ECC: ``amdsmi_get_gpu_ecc_enabled`` (a block mask, non-zero = on) and
  ``amdsmi_get_gpu_total_ecc_count``'s uncorrectable count;
- ``remapped_rows``: AMD retires bad *pages* rather than remapping rows: the page count
  is reported as uncorrectable, ``pending`` when one awaits retirement, ``failure`` when
  one could not be reserved;
- temperature: the hotspot (junction) sensor — MI300-class parts have no edge sensor;
- power: the current socket power, else the average (MI300 reports only that); the limit
  is ``amdsmi_get_power_cap_info``'s ``power_cap`` (microwatts).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from runners.sdk.protocols import (
    ClockKind,
    DriverUnavailableError,
    GpuLostError,
    NotSupportedError,
    RemappedRows,
    Sysfs,
)

T = TypeVar("T")
NA = "N/A"
_UNSUPPORTED_STATUSES = (
    "AMDSMI_STATUS_NOT_SUPPORTED",
    "AMDSMI_STATUS_NOT_YET_IMPLEMENTED",
    "AMDSMI_STATUS_NO_DATA",
)
#: Performance level (the word after ``AMDSMI_DEV_PERF_LEVEL_``) -> P-state analogue.
_FREE_LEVELS = frozenset({"AUTO", "HIGH", "STABLE_PEAK", "DETERMINISM"})
_FLOOR_LEVELS = frozenset({"LOW", "STABLE_MIN_SCLK", "STABLE_MIN_MCLK"})
PSTATE_FREE, PSTATE_FIXED, PSTATE_FLOOR = 0, 2, 8
#: NVML reason bits the throttler groups fold into (``protocols.CLOCK_EVENT_REASONS``).
_SW_POWER_CAP, _HW_SLOWDOWN, _SW_THERMAL = 0x4, 0x8, 0x20


def load_amdsmi() -> Any:
    """The ``amdsmi`` package (ROCm's Python bindings), imported only on an AMD node."""
    try:
        import amdsmi
    except ImportError as error:
        raise DriverUnavailableError(
            f"amdsmi (ROCm's Python bindings) is not installed: {error}"
        ) from error
    return amdsmi


def throttle_reasons_from_amd(mask: int) -> int:
    """``indep_throttle_status`` bits as an NVML clock-event reason mask."""
    reasons = 0
    if mask & 0xFFFF:
        reasons |= _SW_POWER_CAP
    if mask & (0xFFFF << 16):
        reasons |= _HW_SLOWDOWN
    if mask & (0xFFFFFF << 32):
        reasons |= _SW_THERMAL
    if mask >> 56:
        reasons |= _HW_SLOWDOWN
    return reasons


def pstate_from_perf_level(level: object) -> int:
    """amdsmi's performance level (``AMDSMI_DEV_PERF_LEVEL_LOW`` or an enum) as a P-state."""
    name = getattr(level, "name", None) or str(level)
    word = name.upper().removeprefix("AMDSMI_DEV_PERF_LEVEL_")
    if word in _FREE_LEVELS:
        return PSTATE_FREE
    if word in _FLOOR_LEVELS:
        return PSTATE_FLOOR
    return PSTATE_FIXED


class AmdSmiErrors:
    """Tells amdsmi's "not supported" from "lost" from "broken" (module docstring)."""

    def __init__(self, *, smi: Any, sysfs: Sysfs) -> None:
        self._smi = smi
        self._sysfs = sysfs
        self.library_error: type[BaseException] = smi.AmdSmiLibraryException
        wrapper = getattr(smi, "amdsmi_wrapper", None)
        self._unsupported_codes = {
            int(code)
            for name in _UNSUPPORTED_STATUSES
            if isinstance(code := getattr(wrapper, name, None), int)
        }

    def unsupported(self, error: BaseException) -> bool:
        code = getattr(error, "get_error_code", None)
        if callable(code) and code() in self._unsupported_codes:
            return True
        return any(status in str(error) for status in _UNSUPPORTED_STATUSES)

    def off_the_bus(self, bdf: str) -> bool:
        """Positive evidence the function stopped answering: config space reads all ones,
        or the function is gone from the PCI tree."""
        vendor = self._sysfs.read_text(f"bus/pci/devices/{bdf}/vendor")
        if vendor is not None:
            return vendor.strip().lower() == "0xffff"
        present = self._sysfs.list_dir("bus/pci/devices")
        # An unreadable PCI tree is no evidence either way.
        return present is not None and bdf not in present


def _value(value: Any, *, what: str) -> Any:
    if value is None or (isinstance(value, str) and value.strip().upper() == NA):
        raise NotSupportedError(f"amdsmi reports {what} as N/A")
    return value


def _number(value: Any, *, what: str) -> float:
    value = _value(value, what=what)
    try:
        return float(value)
    except (TypeError, ValueError):
        raise NotSupportedError(f"amdsmi {what} {value!r} is not a number") from None


class AmdSmiDevice:
    """One AMD GPU through amdsmi, answering the seam's ``GpuDevice`` protocol."""

    def __init__(self, *, smi: Any, errors: AmdSmiErrors, handle: Any, index: int, bdf: str):
        self._smi = smi
        self._errors = errors
        self._h = handle
        self._index = index
        self._bdf = bdf

    @property
    def index(self) -> int:
        return self._index

    def _call(self, fn: Callable[..., T], *args: Any) -> T:
        try:
            return fn(self._h, *args)
        except self._errors.library_error as error:
            if self._errors.unsupported(error):
                raise NotSupportedError(f"GPU {self._index}: {error}") from error
            if self._errors.off_the_bus(self._bdf):
                raise GpuLostError(
                    f"GPU {self._index} ({self._bdf}) is lost: amdsmi {error}; its PCI "
                    "config space no longer answers",
                    index=self._index,
                ) from error
            raise DriverUnavailableError(f"amdsmi error on GPU {self._index}: {error}") from error

    def _field(self, record: Mapping[str, Any], key: str, *, what: str) -> Any:
        return _value(record.get(key), what=f"GPU {self._index} {what}")

    def name(self) -> str:
        info = self._call(self._smi.amdsmi_get_gpu_asic_info)
        return str(self._field(info, "market_name", what="market name"))

    def uuid(self) -> str:
        return str(_value(self._call(self._smi.amdsmi_get_gpu_device_uuid), what="uuid"))

    def serial(self) -> str:
        info = self._call(self._smi.amdsmi_get_gpu_asic_info)
        return str(self._field(info, "asic_serial", what="ASIC serial"))

    def board_part_number(self) -> str:
        info = self._call(self._smi.amdsmi_get_gpu_board_info)
        return str(self._field(info, "model_number", what="board model number"))

    def vbios_version(self) -> str:
        info = self._call(self._smi.amdsmi_get_gpu_vbios_info)
        return str(self._field(info, "version", what="VBIOS version"))

    def gfx_target(self) -> str:
        """The LLVM gfx target (``gfx942``): AMD's counterpart of a compute capability."""
        info = self._call(self._smi.amdsmi_get_gpu_asic_info)
        return str(self._field(info, "target_graphics_version", what="gfx target"))

    def pci_bus_id(self) -> str:
        return self._bdf

    def compute_capability(self) -> tuple[int, int]:
        raise NotSupportedError(
            f"GPU {self._index} is an AMD part: gfx targets, no CUDA capability"
        )

    def memory_total_bytes(self) -> int:
        vram = self._smi.AmdSmiMemoryType.VRAM
        return int(_number(self._call(self._smi.amdsmi_get_gpu_memory_total, vram), what="VRAM"))

    def memory_bus_width_bits(self) -> int:
        info = self._call(self._smi.amdsmi_get_gpu_vram_info)
        return int(_number(info.get("vram_bit_width"), what="VRAM bus width"))

    def max_pcie_link(self) -> tuple[int, int]:
        info = self._call(self._smi.amdsmi_get_pcie_info)
        static = info.get("pcie_static") or {}
        generation = _number(static.get("pcie_interface_version"), what="PCIe generation")
        width = _number(static.get("max_pcie_width"), what="PCIe width")
        return int(generation), int(width)

    def _clock(self, kind: ClockKind) -> Mapping[str, Any]:
        types = self._smi.AmdSmiClkType
        clock_type = types.GFX if kind is ClockKind.SM else types.MEM
        info: Mapping[str, Any] = self._call(self._smi.amdsmi_get_clock_info, clock_type)
        return info

    def clock_mhz(self, kind: ClockKind) -> int:
        info = self._clock(kind)
        # amdsmi before 6.1 spelt the current clock ``cur_clk``.
        current = info.get("clk", info.get("cur_clk"))
        return int(_number(current, what=f"GPU {self._index} {kind.value} clock"))

    def max_clock_mhz(self, kind: ClockKind) -> int:
        info = self._clock(kind)
        return int(_number(info.get("max_clk"), what=f"GPU {self._index} max {kind.value} clock"))

    def performance_state(self) -> int:
        return pstate_from_perf_level(self._call(self._smi.amdsmi_get_gpu_perf_level))

    def clock_event_reasons(self) -> int:
        metrics = self._call(self._smi.amdsmi_get_gpu_metrics_info)
        mask = _number(metrics.get("indep_throttle_status"), what="throttler status")
        return throttle_reasons_from_amd(int(mask))

    def temperature_c(self) -> float:
        smi = self._smi
        return _number(
            self._call(
                smi.amdsmi_get_temp_metric,
                smi.AmdSmiTemperatureType.HOTSPOT,
                smi.AmdSmiTemperatureMetric.CURRENT,
            ),
            what="hotspot temperature",
        )

    def power_draw_w(self) -> float:
        info = self._call(self._smi.amdsmi_get_power_info)
        for key in ("current_socket_power", "average_socket_power"):
            value = info.get(key)
            if value is not None and not (isinstance(value, str) and value.upper() == NA):
                return _number(value, what=key)
        raise NotSupportedError(f"GPU {self._index}: amdsmi reports no socket power")

    def power_limit_w(self) -> float:
        info = self._call(self._smi.amdsmi_get_power_cap_info)
        return _number(info.get("power_cap"), what="power cap") / 1e6

    def ecc_enabled(self) -> bool:
        return bool(_number(self._call(self._smi.amdsmi_get_gpu_ecc_enabled), what="ECC mask"))

    def uncorrected_ecc_total(self) -> int:
        counts = self._call(self._smi.amdsmi_get_gpu_total_ecc_count)
        return int(_number(counts.get("uncorrectable_count"), what="uncorrectable ECC count"))

    def corrected_ecc_total(self) -> int:
        counts = self._call(self._smi.amdsmi_get_gpu_total_ecc_count)
        return int(_number(counts.get("correctable_count"), what="correctable ECC count"))

    def remapped_rows(self) -> RemappedRows:
        pages = self._call(self._smi.amdsmi_get_gpu_bad_page_info)
        if isinstance(pages, str):
            # amdsmi before 6.1 answered "No bad pages found." for an empty table.
            if "no bad pages" in pages.lower():
                return RemappedRows(correctable=0, uncorrectable=0, pending=False, failure=False)
            raise NotSupportedError(f"GPU {self._index}: bad page table {pages!r}")
        statuses = [self._page_status(page) for page in pages]
        return RemappedRows(
            correctable=0,
            uncorrectable=len(statuses),
            pending="PENDING" in statuses,
            failure="UNRESERVABLE" in statuses,
        )

    def _page_status(self, page: Mapping[str, Any]) -> str:
        status = page.get("status")
        name = getattr(status, "name", None)
        if name is None:
            try:
                name = self._smi.AmdSmiMemoryPageStatus(status).name
            except (AttributeError, ValueError, TypeError):
                name = str(status)
        return str(name).upper().rsplit("_", 1)[-1]

    def pcie_replay_count(self) -> int:
        count = self._call(self._smi.amdsmi_get_gpu_pci_replay_counter)
        return int(_number(count, what="PCIe replay counter"))

    def driver_version(self) -> str:
        info = self._call(self._smi.amdsmi_get_gpu_driver_info)
        return str(self._field(info, "driver_version", what="driver version"))


class AmdSmiLibrary:
    """amdsmi, initialised, answering the seam's ``Nvml`` protocol (the vendor's library)."""

    def __init__(self, smi: Any, *, sysfs: Sysfs) -> None:
        self._smi = smi
        self._errors = AmdSmiErrors(smi=smi, sysfs=sysfs)
        try:
            smi.amdsmi_init()
            handles = list(smi.amdsmi_get_processor_handles())
            bdfs = [str(smi.amdsmi_get_gpu_device_bdf(handle)).lower() for handle in handles]
        except self._errors.library_error as error:
            raise DriverUnavailableError(f"amdsmi could not initialise: {error}") from error
        # amdsmi's order is its own; the seam's index is the PCI order, as on NVIDIA.
        ordered = sorted(zip(bdfs, handles, strict=True), key=lambda pair: pair[0])
        self._devices = [
            AmdSmiDevice(smi=smi, errors=self._errors, handle=handle, index=index, bdf=bdf)
            for index, (bdf, handle) in enumerate(ordered)
        ]

    def driver_version(self) -> str:
        """amdgpu's version, from the first device that answers (amdsmi reads it per GPU)."""
        problems = []
        for device in self._devices:
            try:
                return device.driver_version()
            except (GpuLostError, NotSupportedError, DriverUnavailableError) as error:
                problems.append(str(error))
        raise DriverUnavailableError(
            "amdsmi gives no driver version: " + ("; ".join(problems) or "it sees no AMD GPU")
        )

    def device_count(self) -> int:
        return len(self._devices)

    def device(self, index: int) -> AmdSmiDevice:
        if not 0 <= index < len(self._devices):
            raise IndexError(index)
        return self._devices[index]
