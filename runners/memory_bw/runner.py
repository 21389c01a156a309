"""memory-bw: host-to-device, device-to-host, device-to-device and peer copy bandwidth.

Pinned host memory, 1 GiB transfers, CUDA-event timing, best of five; a device-to-device
copy counts bytes read plus bytes written. Each figure is the worst GPU's. Fails when a
GPU's D2D figure is below ``BURNIN_BANDWIDTH_FLOOR_PCT`` (default 50) percent of its HBM
theoretical bandwidth, or its H2D/D2H below that percent of its PCIe link's theoretical
bandwidth (``expected.py``); where NVML cannot give the theoretical figure, no floor is
applied and thresholds alone decide.

On an AMD node (amdsmi + HIP, ``docs/vendors/amd.md``) the same copies run through
PyTorch's ROCm build; the HBM figure counts amdsmi's memory clock at four transfers per
clock (``expected.py``), the floor basis is ``amdsmi``, and the worst device's D2D figure
is also printed as ``memoryBandwidthGBs`` (what the ROCm image emits, section O) with the
part's ``gfxTarget``.
"""

from __future__ import annotations

import contextlib
from itertools import permutations

from runners.memory_bw.expected import (
    TRANSFERS_PER_MEM_CLOCK,
    hbm_theoretical_gbs,
    pcie_theoretical_gbs,
)
from runners.sdk.entry import RunnerContext
from runners.sdk.fold import print_fold, print_spread, settle_concurrency
from runners.sdk.gpus import LIBRARY_NAMES, DeviceSlot, open_node_gpus
from runners.sdk.outcome import Failed, Passed, Verdict
from runners.sdk.protocols import (
    AMD_VENDOR,
    ClockKind,
    DriverUnavailableError,
    NotSupportedError,
    Nvml,
)
from runners.sdk.rocm import print_gfx_target

TRANSFER_BYTES = 1 << 30
REPEATS = 5
DIRECTIONS = {
    "h2d": "hostToDeviceBandwidthGBs",
    "d2h": "deviceToHostBandwidthGBs",
    "d2d": "deviceToDeviceBandwidthGBs",
}


def _theoretical(nvml: Nvml, slot: DeviceSlot, *, vendor: str) -> dict[str, float]:
    device = nvml.device(slot.index)
    limits: dict[str, float] = {}
    # The floor is optional evidence: a library read that fails only removes the floor.
    with contextlib.suppress(NotSupportedError, DriverUnavailableError):
        limits["d2d"] = hbm_theoretical_gbs(
            bus_width_bits=device.memory_bus_width_bits(),
            max_mem_clock_mhz=device.max_clock_mhz(ClockKind.MEM),
            transfers_per_clock=TRANSFERS_PER_MEM_CLOCK[vendor],
        )
    try:
        generation, width = device.max_pcie_link()
    except (NotSupportedError, DriverUnavailableError):
        pass
    else:
        pcie = pcie_theoretical_gbs(generation=generation, width=width)
        if pcie is not None:
            limits["h2d"] = limits["d2h"] = pcie
    return limits


def measure(ctx: RunnerContext) -> Verdict:
    report = ctx.report
    platform = ctx.platform()
    gpus = open_node_gpus(platform=platform, env=ctx.env)
    nvml, compute, slots = gpus.nvml, gpus.compute, gpus.slots
    floor_pct = ctx.env.number("BURNIN_BANDWIDTH_FLOOR_PCT", default=50.0, low=0.0, high=100.0)
    clock = platform.clock
    started = clock.monotonic()
    figures: dict[str, dict[int, float]] = {d: {} for d in DIRECTIONS}
    shortfalls: list[tuple[float, DeviceSlot, str]] = []
    has_basis = False
    for slot in slots:
        limits = _theoretical(nvml, slot, vendor=gpus.vendor)
        has_basis = has_basis or bool(limits)
        for direction in DIRECTIONS:
            gbs = compute.copy_bandwidth_gbs(
                device=slot.index, direction=direction, nbytes=TRANSFER_BYTES, repeats=REPEATS
            )
            figures[direction][slot.index] = gbs
            limit = limits.get(direction)
            pct = None if limit is None else gbs / limit * 100.0
            report.note(
                f"device {slot.index} ({slot.pci_bus_id}) {direction}: {gbs:.1f} GB/s"
                + ("" if limit is None else f" = {pct:.0f} % of {limit:.0f} GB/s theoretical")
            )
            if pct is not None and pct < floor_pct:
                shortfalls.append((pct, slot, direction))
    peers: dict[str, list[float]] = {"read": [], "write": []}
    for src, dst in permutations([slot.index for slot in slots], 2):
        for mode, values in peers.items():
            peer_gbs = compute.peer_bandwidth_gbs(
                src=src, dst=dst, mode=mode, nbytes=TRANSFER_BYTES, repeats=REPEATS
            )
            if peer_gbs is not None:
                values.append(peer_gbs)
    elapsed = clock.monotonic() - started

    worst_slot = slots[0]
    for direction, name in DIRECTIONS.items():
        per_device = figures[direction]
        report.metric(name, min(per_device.values()))
        report.metric(name.replace("BandwidthGBs", "BandwidthMaxGBs"), max(per_device.values()))
    print_spread(
        report=report,
        name="hostToDeviceBandwidthSpreadPct",
        slots=slots,
        values=[figures["h2d"][slot.index] for slot in slots],
    )
    for mode, values in peers.items():
        name = f"peer{mode.capitalize()}BandwidthGBs"
        if values:
            report.metric(name, min(values))
            report.metric(name.replace("BandwidthGBs", "BandwidthMaxGBs"), max(values))
        else:
            # Fewer than two GPUs, or no peer path between them: there is no peer figure.
            report.unmeasurable(name)
    report.metric("bandwidthFloorPct", floor_pct)
    basis = LIBRARY_NAMES[gpus.vendor][0].lower()
    report.metric("bandwidthFloorBasis", basis if has_basis else "none")
    report.metric("gpuName", slots[0].name)
    if gpus.vendor == AMD_VENDOR:
        report.metric("memoryBandwidthGBs", min(figures["d2d"].values()))
        print_gfx_target(report=report, device=nvml.device(slots[0].index))
    if shortfalls:
        worst_slot = min(shortfalls, key=lambda item: item[0])[1]
    else:
        worst_slot = min(slots, key=lambda slot: figures["d2d"][slot.index])
    report.metric("elapsedS", elapsed)
    concurrency = settle_concurrency(
        report=report, requested=ctx.env.device_concurrency, default="sequential"
    )
    print_fold(report=report, gpus=gpus, worst=worst_slot, concurrency=concurrency)
    if shortfalls:
        pct, slot, direction = min(shortfalls, key=lambda item: item[0])
        return Failed(
            f"GPU {slot.index} {direction} bandwidth is {pct:.0f} % of theoretical "
            f"(floor {floor_pct:g} %)"
        )
    return Passed()
