"""What a runner may read from hardware: the protocols, the values they return, the errors.

Why a module of its own: this is the bottom of the one-way runner seam
(docs/runners.md). The silicon and simulated implementations (``sdk/silicon``,
``sdk/simgpu``) import only this module (and ``sdk/outcome``, the errors' base), and the
platform choice (``sdk/platform``) sits above both, so no implementation can reach the
chooser or another implementation (import-linter enforces the direction). Runners see
these protocols and nothing of how they are answered, so a simulated read can never
pass for silicon by a stray import.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from runners.sdk.outcome import RunnerError


class DriverUnavailableError(RunnerError):
    """The GPU driver/library cannot be used: nothing can be measured (exit 3)."""


class GpuLostError(RunnerError):
    """NVML reports the GPU lost (fallen off the bus)."""

    def __init__(self, message: str, *, index: int) -> None:
        super().__init__(message)
        self.index = index


class VendorUndeterminedError(DriverUnavailableError):
    """Which vendor's GPUs this node has cannot be established, or the evidence conflicts:
    nothing may be read through either vendor's library (exit 3, never a guessed path).

    A kind of "no usable GPU library", so every runner that treats an unusable driver as
    "GPU not read" (an optional temperature, host-health's counters) does the same here."""


class ToolMissingError(RunnerError):
    """A site-provided tool (dcgmi, stressapptest) is not installed: exit 3, never Fail."""


class NotSupportedError(RunnerError):
    """This part or driver does not support the query.

    Runners catch it where the answer is optional (or where "not supported" is itself the
    finding, e.g. a part without ECC); anywhere else it ends the run with exit 3.
    """


#: The GPU vendors the seam has a backend for (api imagesByVendor's words).
NVIDIA_VENDOR = "nvidia"
AMD_VENDOR = "amd"
GPU_VENDORS: tuple[str, ...] = (NVIDIA_VENDOR, AMD_VENDOR)


class ClockKind(enum.Enum):
    SM = "sm"
    MEM = "mem"


#: NVML clock-event reason bits (external-formats.md) and our names for them.
#: Simulated faults of a node's network, named once for the simulator (which parses
#: them from ``GLIMMER_SIM_GPU``) and the link runners (which act on them over real
#: sockets): pace this side's traffic, never take part in the rendezvous, corrupt the
#: data this side sends.
SLOW_LINK_FAULT = "slow-link"
NO_RENDEZVOUS_FAULT = "no-rendezvous"
CORRUPT_DATA_FAULT = "corrupt-data"
#: Simulated faults of the node's RDMA fabric (docs/fabric.md): the link moves half its
#: rate; the port's error counters move (a flapping link); RLIMIT_MEMLOCK is containerd's
#: 8 MiB default; NCCL finds no usable RDMA device and falls back to TCP sockets.
DEGRADED_LINK_FAULT = "degraded-link"
FLAPPING_LINK_FAULT = "flapping-link"
#: The link flaps only while it carries traffic: an idle read of its counters sees nothing.
NIC_FLAP_UNDER_LOAD_FAULT = "nic-flap-under-load"
MEMLOCK_8MIB_FAULT = "memlock-8mib"
NCCL_SOCKET_FALLBACK_FAULT = "nccl-socket-fallback"

CLOCK_EVENT_REASONS: Mapping[int, str] = {
    0x1: "gpuIdle",
    0x2: "applicationsClocksSetting",
    0x4: "swPowerCap",
    0x8: "hwSlowdown",
    0x20: "swThermalSlowdown",
    0x40: "hwThermalSlowdown",
    0x80: "hwPowerBrakeSlowdown",
}


@dataclass(frozen=True)
class RemappedRows:
    correctable: int
    uncorrectable: int
    pending: bool
    failure: bool


class GpuDevice(Protocol):
    """One GPU as its vendor's management library (NVML, or amdsmi on AMD) sees it. Reads
    raise :class:`GpuLostError` or :class:`NotSupportedError`.

    The vocabulary is NVML's: ``clock_event_reasons`` is an NVML reason mask and
    ``performance_state`` a P-state number; the AMD backend translates amdsmi's throttler
    bits and performance level into them (``sdk/silicon/amd_smi.py`` says how), and
    answers ``compute_capability`` with :class:`NotSupportedError` (AMD parts have gfx
    targets, not CUDA capabilities).
    """

    @property
    def index(self) -> int: ...
    def name(self) -> str: ...
    def uuid(self) -> str: ...
    def serial(self) -> str: ...
    def board_part_number(self) -> str: ...
    def vbios_version(self) -> str: ...
    def pci_bus_id(self) -> str: ...
    def compute_capability(self) -> tuple[int, int]: ...
    def memory_total_bytes(self) -> int: ...
    def memory_bus_width_bits(self) -> int: ...
    def max_pcie_link(self) -> tuple[int, int]: ...
    def clock_mhz(self, kind: ClockKind) -> int: ...
    def max_clock_mhz(self, kind: ClockKind) -> int: ...
    def performance_state(self) -> int: ...
    def clock_event_reasons(self) -> int: ...
    def temperature_c(self) -> float: ...
    def power_draw_w(self) -> float: ...
    def power_limit_w(self) -> float: ...
    def ecc_enabled(self) -> bool: ...
    def uncorrected_ecc_total(self) -> int: ...
    def corrected_ecc_total(self) -> int: ...
    def remapped_rows(self) -> RemappedRows: ...
    def pcie_replay_count(self) -> int: ...


@runtime_checkable
class GfxTargetedDevice(Protocol):
    """An AMD GPU's extra identity: its LLVM gfx target (``gfx942``), the AMD counterpart
    of a CUDA compute capability (evidence ``gfxTarget``)."""

    def gfx_target(self) -> str: ...


class Nvml(Protocol):
    """The vendor's GPU management library: NVML, or amdsmi on an AMD node."""

    def driver_version(self) -> str: ...
    def device_count(self) -> int: ...
    def device(self, index: int) -> GpuDevice: ...


@dataclass(frozen=True)
class GemmCheck:
    """A low-precision GEMM compared element-wise against a higher-precision reference."""

    precision: str
    shape: tuple[int, int, int]
    nonfinite: int
    max_abs_error: float | None
    max_abs_ref: float | None


class LoadHandle(Protocol):
    """Sustained compute load running on some devices until :meth:`stop`."""

    def stop(self) -> dict[int, float]:
        """Stop and return achieved TFLOP/s per device; raises if the load failed."""
        ...


class Compute(Protocol):
    def device_count(self) -> int: ...
    def built_arch_list(self) -> list[str]: ...
    def gemm_check(self, *, device: int, precision: str, size: int) -> GemmCheck: ...
    def gemm_throughput_tflops(
        self, *, device: int, precision: str, size: int, seconds: float
    ) -> float: ...
    def start_load(self, devices: Sequence[int]) -> LoadHandle: ...
    def copy_bandwidth_gbs(
        self, *, device: int, direction: str, nbytes: int, repeats: int
    ) -> float: ...
    def peer_bandwidth_gbs(
        self, *, src: int, dst: int, mode: str, nbytes: int, repeats: int
    ) -> float | None: ...


class Clock(Protocol):
    def monotonic(self) -> float: ...
    def sleep(self, seconds: float) -> None: ...


class KmsgReader(Protocol):
    """Kernel log records; :meth:`drain` returns what arrived since the last call."""

    def drain(self) -> list[str]: ...
    def dropped(self) -> int: ...
    def close(self) -> None: ...


class Sysfs(Protocol):
    def read_text(self, path: str) -> str | None: ...
    def list_dir(self, path: str) -> list[str] | None: ...
    def link_name(self, path: str) -> str | None:
        """Final component of a symlink's target (a bound driver's name), or None."""
        ...


@dataclass(frozen=True)
class ToolResult:
    exit_code: int
    stdout: str
    stderr: str


class Dcgmi(Protocol):
    def diag(self, *, level: int, timeout_s: float, parameters: str = "") -> ToolResult:
        """``dcgmi diag -r <level> -j``, with ``-p <parameters>`` when not empty
        (DCGM's ``<test>.<parameter>=<value>`` clauses joined by ``;``)."""
        ...


class MemoryStressTool(Protocol):
    def run(self, *, argv: Sequence[str], timeout_s: float) -> ToolResult: ...


@dataclass(frozen=True)
class RdmaPort:
    """One RDMA port as ``/sys/class/infiniband/<device>/ports/<port>`` describes it."""

    device: str
    port: int
    #: ``InfiniBand`` or ``Ethernet`` (RoCE).
    link_layer: str
    #: ``ACTIVE``, ``DOWN``, ... (the word after ``4: `` in ``state``).
    state: str
    #: The negotiated rate in Gbit/s (``rate``: ``400 Gb/sec (4X NDR)``), None if unreadable.
    rate_gbps: float | None


class Fabric(Protocol):
    """The node's RDMA fabric: ports, their error counters, the pinned-memory limit, and
    the fabric tools (perftest, nccl-tests, mpirun) run as processes.

    ``run_tool`` takes the tool by name (``ib_write_bw``, ``ib_write_lat``,
    ``all_reduce_perf``, ``mpirun``, ...) and returns what it printed; a tool that is not
    installed raises :class:`ToolMissingError`. ``env`` is added to the tool's environment.
    """

    def rdma_ports(self) -> list[RdmaPort]: ...
    def error_counters(self, port: RdmaPort) -> dict[str, int] | None:
        """The port's error counters (``counters/*``), None when they cannot be read."""
        ...

    def memlock_limit_bytes(self) -> int | None:
        """RLIMIT_MEMLOCK (soft) in bytes; None when unlimited."""
        ...

    def run_tool(
        self, argv: Sequence[str], *, env: Mapping[str, str], timeout_s: float
    ) -> ToolResult: ...


def _vendor_never_settled() -> str:
    raise VendorUndeterminedError("this platform was assembled without a GPU vendor")


@dataclass
class Platform:
    """Everything a runner may read, all from one provenance.

    ``vendor()`` says whose GPUs the node has (``GPU_VENDORS``); it is settled on first
    use by the platform choice (``sdk/vendor.py``) and raises
    :class:`VendorUndeterminedError` when that cannot be established. An assembler that
    names no vendor gets a platform whose ``vendor()`` refuses, never a default.
    """

    provenance: str
    clock: Clock
    sysfs: Sysfs
    _nvml: Callable[[], Nvml]
    _compute: Callable[[], Compute]
    _kmsg: Callable[[], KmsgReader | None]
    _dcgmi: Callable[[], Dcgmi]
    _fabric: Callable[[], Fabric]
    _vendor: Callable[[], str] = _vendor_never_settled
    _nvml_open: Nvml | None = field(default=None, init=False)
    _compute_open: Compute | None = field(default=None, init=False)

    def vendor(self) -> str:
        """Whose GPUs this node has; raises :class:`VendorUndeterminedError`."""
        return self._vendor()

    def nvml(self) -> Nvml:
        """The vendor's management library (NVML, or amdsmi on AMD), initialised on first
        use; raises :class:`DriverUnavailableError` or :class:`VendorUndeterminedError`."""
        if self._nvml_open is None:
            self._nvml_open = self._nvml()
        return self._nvml_open

    def compute(self) -> Compute:
        """The compute library, loaded on first use; raises :class:`DriverUnavailableError`."""
        if self._compute_open is None:
            self._compute_open = self._compute()
        return self._compute_open

    def open_kmsg(self) -> KmsgReader | None:
        """The kernel log, or None when it cannot be read (never an empty stand-in)."""
        return self._kmsg()

    def dcgmi(self) -> Dcgmi:
        return self._dcgmi()

    def fabric(self) -> Fabric:
        """The RDMA fabric of this node (never simulated behind a silicon provenance)."""
        return self._fabric()
