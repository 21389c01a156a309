"""Sustained GEMM load, checked against a reference and watched through NVML, per GPU.

Why one engine for gpu-burn and thermal-soak: both hold every GPU at full load for a
window and must tell three things apart that a throughput figure alone hides: a part that
computes *wrong* (miscompares, silent corruption, non-finite output), a part that protects
itself (clocks, temperature, power, throttle reasons), and a part the driver reports
failing (ECC, Xid). Correctness is checked repeatedly during the load, because silent
corruption under heat is intermittent: one check at the start proves nothing about the
fortieth minute.

A check is ``Compute.gemm_check``: a BF16 GEMM compared element-wise with a float64
reference computed from the same operands. A check *miscompares* when its output holds a
non-finite element or its normwise error exceeds the tolerance; it is a *silent* data
corruption (``sdcDetections``) when every element was finite and still wrong.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from runners.gpu_burn.xid_watch import XidWatch
from runners.sdk.clocks import RunningClocks, read_clock_sample
from runners.sdk.gpus import DeviceSlot, Gpus
from runners.sdk.outcome import RunnerError
from runners.sdk.protocols import (
    Clock,
    ClockKind,
    GemmCheck,
    GpuDevice,
    NotSupportedError,
)

BURN_PRECISION = "bf16"
#: Normwise tolerance of a BF16 GEMM against its float64 reference (compute-smoke's).
TOLERANCE = 1e-2
CHECK_SIZE = 4096
SAMPLE_INTERVAL_S = 1.0
CHECK_INTERVAL_S = 5.0
#: Running totals are re-printed this often, so a checkpoint (H1) reads a coherent snapshot.
REPRINT_INTERVAL_S = 15.0
MIN_SAMPLES = 2


def read_ecc(device: GpuDevice) -> tuple[str, int | None]:
    """ECC mode and the lifetime uncorrected total (None when the part cannot say)."""
    try:
        if not device.ecc_enabled():
            return "disabled", None
        return "enabled", device.uncorrected_ecc_total()
    except NotSupportedError:
        return "unsupported", None


def read_corrected(device: GpuDevice) -> int | None:
    """The lifetime corrected ECC count (None when the part cannot say or has ECC off)."""
    try:
        return device.corrected_ecc_total() if device.ecc_enabled() else None
    except NotSupportedError:
        return None


@dataclass
class DeviceBurn:
    """One GPU's tally over the window (the clock and throttle counts are the SDK's
    running fold, :class:`runners.sdk.clocks.RunningClocks`: constant memory however
    long the window)."""

    slot: DeviceSlot
    rated_sm_mhz: int
    ecc_mode: str
    ecc_before: int | None
    clocks: RunningClocks = field(default_factory=RunningClocks)
    checks: int = 0
    miscompares: int = 0
    sdc: int = 0
    nonfinite: int = 0
    max_relative_error: float | None = None
    ecc_after: int | None = None
    corrected_before: int | None = None
    corrected_after: int | None = None
    xids: int = 0
    tflops: float | None = None

    def record(self, check: GemmCheck) -> None:
        """Fold one reference check in (see the module docstring for the rule)."""
        if check.nonfinite == 0 and (check.max_abs_error is None or not check.max_abs_ref):
            raise RunnerError(f"GPU {self.slot.index}: a reference check gave no comparable output")
        self.checks += 1
        self.nonfinite += check.nonfinite
        relative = None
        if check.max_abs_error is not None and check.max_abs_ref:
            relative = check.max_abs_error / check.max_abs_ref
            if self.max_relative_error is None or relative > self.max_relative_error:
                self.max_relative_error = relative
        wrong = relative is not None and relative > TOLERANCE
        if check.nonfinite or wrong:
            self.miscompares += 1
        if check.nonfinite == 0 and wrong:
            self.sdc += 1

    @property
    def ecc_delta(self) -> int:
        if self.ecc_before is None or self.ecc_after is None:
            return 0
        return max(self.ecc_after - self.ecc_before, 0)

    @property
    def corrected_delta(self) -> int | None:
        """Corrected ECC errors during the load (None when either read was impossible)."""
        if self.corrected_before is None or self.corrected_after is None:
            return None
        return max(self.corrected_after - self.corrected_before, 0)

    @property
    def sustained_pct(self) -> float:
        return self.clocks.mean_sm_mhz / self.rated_sm_mhz * 100.0

    def badness(self) -> tuple[int, int, int, int, float]:
        """Sort key for the fold's worst device: wrong results first, then driver-reported
        faults, then the lowest sustained clock."""
        return (self.miscompares, self.nonfinite, self.ecc_delta, self.xids, -self.sustained_pct)


@dataclass
class Burn:
    devices: list[DeviceBurn]
    elapsed_s: float
    xid: XidWatch | None

    @property
    def worst(self) -> DeviceBurn:
        return max(self.devices, key=DeviceBurn.badness)


Progress = Callable[[Burn], None]


def run_burn(
    *,
    gpus: Gpus,
    clock: Clock,
    window_s: float,
    xid: XidWatch | None,
    progress: Progress | None = None,
    check_interval_s: float = CHECK_INTERVAL_S,
) -> Burn:
    """Load every GPU for ``window_s``, sampling NVML each second and checking each GPU's
    GEMM against its reference every ``check_interval_s``; ``progress`` is called with the
    running tally every ``REPRINT_INTERVAL_S``."""
    handles = {slot.index: gpus.nvml.device(slot.index) for slot in gpus.slots}
    devices = []
    for slot in gpus.slots:
        handle = handles[slot.index]
        mode, before = read_ecc(handle)
        devices.append(
            DeviceBurn(
                slot=slot,
                rated_sm_mhz=handle.max_clock_mhz(ClockKind.SM),
                ecc_mode=mode,
                ecc_before=before,
                corrected_before=read_corrected(handle),
            )
        )
    burn = Burn(devices=devices, elapsed_s=0.0, xid=xid)
    compute = gpus.compute
    load = compute.start_load([d.slot.index for d in devices])
    started = clock.monotonic()
    next_check, next_print = started, started + REPRINT_INTERVAL_S
    try:
        while (now := clock.monotonic()) - started < window_s:
            for device in devices:
                device.clocks.add(read_clock_sample(handles[device.slot.index]))
            if now >= next_check:
                for device in devices:
                    device.record(
                        compute.gemm_check(
                            device=device.slot.index, precision=BURN_PRECISION, size=CHECK_SIZE
                        )
                    )
                next_check = now + check_interval_s
            if xid is not None:
                xid.poll()
            burn.elapsed_s = clock.monotonic() - started
            if progress is not None and now >= next_print:
                progress(burn)
                next_print += REPRINT_INTERVAL_S
            clock.sleep(SAMPLE_INTERVAL_S)
    finally:
        try:
            achieved = load.stop()
        except Exception as error:
            raise RunnerError(f"sustained load failed: {error}") from error
    burn.elapsed_s = clock.monotonic() - started
    if xid is not None:
        xid.poll()
    for device in devices:
        if device.clocks.count < MIN_SAMPLES or device.checks == 0:
            raise RunnerError(f"window {window_s:g} s too short to sample and check every GPU")
        if device.slot.index not in achieved:
            raise RunnerError(f"GPU {device.slot.index}: the load reported no throughput")
        device.tflops = achieved[device.slot.index]
        device.ecc_after = read_ecc(handles[device.slot.index])[1]
        device.corrected_after = read_corrected(handles[device.slot.index])
        if xid is not None:
            device.xids = xid.events_on(device.slot.pci_bus_id)
    return burn
