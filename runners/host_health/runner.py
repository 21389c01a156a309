"""host-health: passive hardware counters over a short window, without load.

The five gated counters (§O) are printed only when actually read: ``xidEvents`` (Xid
records that arrive in the kernel log during the window), ``eccErrors`` (lifetime
uncorrected, summed over GPUs; ``n/a`` only for parts without ECC), ``remappedRows``
(lifetime, summed), ``pcieReplayErrors`` (NVML replay counter delta over the window) and
``nicLinkDownEvents`` (sysfs ``carrier_down_count`` delta over the window). Any measured
one above zero, or a GPU NVML reports lost, is a FAULT (exit 1); nothing measured, or an
unusable GPU driver with nothing found, is an ERROR (exit 3).

Two more readings are printed for thresholds to judge, never gated here, because their
acceptable level is the fleet's to set: ``eccCorrected`` (lifetime corrected ECC errors,
summed: a storm of them foretells the uncorrectable ones, yet a healthy part may carry a
few) and ``pcieLinkDegradedDevices`` (GPUs whose PCIe link trained narrower than its
maximum width, read from sysfs; the link *speed* is not compared, since an idle link
drops its generation to save power and sysfs then reads low on a healthy part).

On an AMD node the counters come from amdsmi (``sdk/silicon/amd_smi.py``): ``eccErrors``
is its uncorrectable ECC count, ``remappedRows`` counts the retired (bad) pages AMD keeps
instead of remapped rows (a page pending retirement is the pending remap), the replay
counter is amdsmi's, and a GPU is lost only when its PCI function stopped answering.
Xids are NVIDIA driver events: an AMD part cannot produce one, so ``xidEvents`` is
``n/a`` there (a positive finding, not a zero) and the kernel log is not searched for
them. A node whose vendor cannot be settled is treated as a GPU driver problem.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

from runners.host_health.xid import parse_xid
from runners.sdk.entry import RunnerContext
from runners.sdk.outcome import Failed, Passed, RunnerError, Verdict
from runners.sdk.protocols import (
    AMD_VENDOR,
    DriverUnavailableError,
    GpuDevice,
    GpuLostError,
    NotSupportedError,
    Sysfs,
)

DEFAULT_WINDOW_S = 15.0
MAX_WINDOW_S = 30.0
POLL_S = 0.5
GATED = ("xidEvents", "eccErrors", "remappedRows", "pcieReplayErrors", "nicLinkDownEvents")


@dataclass
class GpuCounters:
    """What NVML gave, per counter; a missing key means it could not be read."""

    devices: int = 0
    lost: list[int] = field(default_factory=list)
    ecc_errors: int | None = None
    ecc_modes: set[str] = field(default_factory=set)
    remapped_rows: int | None = None
    remap_pending: int = 0
    replay_start: dict[int, int] = field(default_factory=dict)
    ecc_corrected: int | None = None
    #: (device index, current width, maximum width) per GPU whose link sysfs could read.
    link_widths: list[tuple[int, int, int]] = field(default_factory=list)
    link_unread: int = 0
    temps: list[float] = field(default_factory=list)
    powers: list[float] = field(default_factory=list)


def _add(total: int | None, value: int) -> int:
    return value if total is None else total + value


def _read_gpu(device: GpuDevice, counters: GpuCounters) -> None:
    try:
        enabled = device.ecc_enabled()
    except NotSupportedError:
        counters.ecc_modes.add("unsupported")
    else:
        counters.ecc_modes.add("enabled" if enabled else "disabled")
        if enabled:
            try:
                counters.ecc_errors = _add(counters.ecc_errors, device.uncorrected_ecc_total())
            except NotSupportedError:
                counters.ecc_modes.add("unreadable")
            with contextlib.suppress(NotSupportedError):
                counters.ecc_corrected = _add(counters.ecc_corrected, device.corrected_ecc_total())
    try:
        rows = device.remapped_rows()
    except NotSupportedError:
        pass
    else:
        counters.remapped_rows = _add(counters.remapped_rows, rows.correctable + rows.uncorrectable)
        counters.remap_pending += int(rows.pending)
    with contextlib.suppress(NotSupportedError):
        counters.replay_start[device.index] = device.pcie_replay_count()
    for read, sink in (
        (device.temperature_c, counters.temps),
        (device.power_draw_w, counters.powers),
    ):
        with contextlib.suppress(NotSupportedError):
            sink.append(read())


def _read_link_width(device: GpuDevice, sysfs: Sysfs, counters: GpuCounters) -> None:
    """The GPU's trained PCIe width (sysfs) against the maximum its library reports."""
    try:
        bdf = device.pci_bus_id()[-12:].lower()
        _generation, maximum = device.max_pcie_link()
    except NotSupportedError:
        counters.link_unread += 1
        return
    text = sysfs.read_text(f"bus/pci/devices/{bdf}/current_link_width")
    if text is None or not text.strip().isdigit() or maximum <= 0:
        counters.link_unread += 1
        return
    counters.link_widths.append((device.index, int(text.strip()), maximum))


def _physical_nics(sysfs: Sysfs) -> dict[str, int]:
    """carrier_down_count per NIC that has a device behind it (no lo, veth, bridges)."""
    counts: dict[str, int] = {}
    for name in sysfs.list_dir("class/net") or []:
        if sysfs.read_text(f"class/net/{name}/device/vendor") is None:
            continue
        text = sysfs.read_text(f"class/net/{name}/carrier_down_count")
        if text is not None and text.isdigit():
            counts[name] = int(text)
    return counts


def measure(ctx: RunnerContext) -> Verdict:
    report = ctx.report
    platform = ctx.platform()
    window_s = ctx.env.window_s(default=DEFAULT_WINDOW_S, cap=MAX_WINDOW_S)
    window_s = ctx.env.number(
        "BURNIN_HOST_HEALTH_WINDOW_SECONDS", default=window_s, low=0.1, high=MAX_WINDOW_S
    )
    report.metric("hostHealthVersion", "glimmer-1")
    report.metric("hostHealthStage", "gpu")
    gpu = GpuCounters()
    driver_problem: str | None = None
    nvml = None
    vendor: str | None = None
    try:
        vendor = platform.vendor()
        nvml = platform.nvml()
        report.metric("driverVersion", nvml.driver_version())
        gpu.devices = nvml.device_count()
        for index in range(gpu.devices):
            try:
                device = nvml.device(index)
                _read_gpu(device, gpu)
                _read_link_width(device, platform.sysfs, gpu)
            except GpuLostError as lost:
                gpu.lost.append(lost.index)
    except DriverUnavailableError as error:  # VendorUndeterminedError included
        driver_problem = str(error)
        report.note(f"GPU counters unreadable: {error}")

    report.metric("hostHealthStage", "window")
    amd = vendor == AMD_VENDOR
    # No Xids to watch for on an AMD part (module docstring).
    kmsg = None if amd else platform.open_kmsg()
    nics_before = _physical_nics(platform.sysfs)
    clock = platform.clock
    xid_codes: list[int] = []
    preexisting = 0
    if kmsg is not None:
        preexisting = sum(1 for line in kmsg.drain() if parse_xid(line) is not None)
    started = clock.monotonic()
    while True:
        remaining = window_s - (clock.monotonic() - started)
        if kmsg is not None:
            for line in kmsg.drain():
                event = parse_xid(line)
                if event is not None:
                    xid_codes.append(event.code)
                    report.note(f"Xid {event.code} on PCI {event.bus} during the window")
        if remaining <= 0:
            break
        clock.sleep(min(POLL_S, remaining))
    elapsed = clock.monotonic() - started
    nics_after = _physical_nics(platform.sysfs)
    replay_delta: int | None = None
    if nvml is not None:
        for index, start in gpu.replay_start.items():
            try:
                end = nvml.device(index).pcie_replay_count()
            except (NotSupportedError, GpuLostError):
                continue
            replay_delta = _add(replay_delta, max(end - start, 0))

    report.metric("hostHealthStage", "report")
    measured: dict[str, int] = {}
    if kmsg is not None:
        report.metric("xidSource", "kmsg")
        report.metric("xidPreexisting", preexisting)
        report.metric("xidLogDropped", kmsg.dropped())
        measured["xidEvents"] = len(xid_codes)
        if xid_codes:
            report.metric("lastXidCode", xid_codes[-1])
        kmsg.close()
    elif amd:
        report.metric("xidSource", "none")
        report.unmeasurable("xidEvents")
    else:
        report.metric("xidSource", "none")
    if amd and nvml is not None:
        report.metric("eccSource", "amdsmi")
    if gpu.ecc_modes:
        report.metric("eccMode", "+".join(sorted(gpu.ecc_modes)))
    if gpu.ecc_errors is not None:
        measured["eccErrors"] = gpu.ecc_errors
    elif gpu.ecc_modes == {"unsupported"}:
        report.unmeasurable("eccErrors")
    if gpu.remapped_rows is not None:
        measured["remappedRows"] = gpu.remapped_rows
        report.metric("remapPendingDevices", gpu.remap_pending)
    if replay_delta is not None:
        measured["pcieReplayErrors"] = replay_delta
    common = nics_before.keys() & nics_after.keys()
    if common:
        measured["nicLinkDownEvents"] = sum(max(nics_after[n] - nics_before[n], 0) for n in common)
        report.metric("nicsWatched", len(common))
    for name in GATED:
        if name in measured:
            report.metric(name, measured[name])
    if nvml is not None:
        report.metric("devicesVisible", gpu.devices)
        report.metric("gpusLost", len(gpu.lost))
    if gpu.ecc_corrected is not None:
        report.metric("eccCorrected", gpu.ecc_corrected)
    if gpu.link_widths and not gpu.link_unread:
        narrow = [(i, width, top) for i, width, top in gpu.link_widths if width < top]
        for index, width, top in narrow:
            report.note(f"GPU {index}: PCIe link trained x{width} of x{top}")
        report.metric("pcieLinkDegradedDevices", len(narrow))
    if gpu.temps:
        report.metric("gpuTempC", max(gpu.temps))
    if gpu.powers:
        report.metric("powerDrawW", max(gpu.powers))
    report.metric("elapsedS", elapsed)

    faults = [f"{name}={value}" for name, value in measured.items() if value > 0]
    if gpu.lost:
        faults.append("GPU " + ",".join(str(i) for i in gpu.lost) + " lost (fallen off the bus)")
    if faults:
        return Failed("; ".join(faults))
    if driver_problem is not None:
        raise RunnerError(f"GPU driver unusable, GPU counters not read: {driver_problem}")
    if not measured:
        raise RunnerError(f"none of {', '.join(GATED)} could be measured")
    return Passed()
