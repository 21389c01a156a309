"""Counter deltas over the diagnostic: what the GPUs' own counters say happened during it.

Why deltas: PCIe replays, row remaps and uncorrectable ECC totals are lifetime counts; the
diagnostic answers for its own run, so the figure is after − before, summed over GPUs
(``remappedRows`` is therefore windowed here, unlike host-health's lifetime figure, §O).
With fewer than two readings (NVML unavailable before or after) nothing is printed: a
delta of one reading would be a guess. A counter that went backwards (a reset, a driver
reload) is ``n/a``, as is one the part cannot read: never a 0 that was not observed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from runners.sdk.protocols import (
    DriverUnavailableError,
    GpuDevice,
    GpuLostError,
    NotSupportedError,
    Nvml,
)
from runners.sdk.report import Report


def _remapped(device: GpuDevice) -> int:
    rows = device.remapped_rows()
    return rows.correctable + rows.uncorrectable


def _uncorrected_ecc(device: GpuDevice) -> int:
    """Only with ECC on: a part without ECC reporting has no count to difference."""
    if not device.ecc_enabled():
        raise NotSupportedError("ECC disabled")
    return device.uncorrected_ecc_total()


#: Printed name -> how one GPU's lifetime count is read.
COUNTERS: dict[str, Callable[[GpuDevice], int]] = {
    "pcieReplayErrors": lambda device: device.pcie_replay_count(),
    "remappedRows": _remapped,
    "eccDbeTotal": _uncorrected_ecc,
}


@dataclass(frozen=True)
class Reading:
    """Per counter, per GPU index: the count, or None where the part cannot say."""

    values: dict[str, dict[int, int | None]]


def read_counters(open_nvml: Callable[[], Nvml]) -> Reading | None:
    """One reading of every counter on every GPU; None when NVML cannot be used."""
    try:
        nvml = open_nvml()
        count = nvml.device_count()
        values: dict[str, dict[int, int | None]] = {name: {} for name in COUNTERS}
        for index in range(count):
            device = nvml.device(index)
            for name, read in COUNTERS.items():
                try:
                    values[name][index] = int(read(device))
                except (NotSupportedError, GpuLostError):
                    values[name][index] = None
    except DriverUnavailableError:
        return None
    return Reading(values=values)


def print_deltas(report: Report, before: Reading | None, after: Reading | None) -> None:
    """Each counter's delta summed over GPUs (see the module docstring for the rules)."""
    if before is None or after is None:
        report.note("counter deltas omitted: fewer than two NVML readings")
        return
    for name in COUNTERS:
        first, last = before.values[name], after.values[name]
        if set(first) != set(last) or not first:
            report.unmeasurable(name)
            continue
        deltas: list[int] = []
        for index, start in first.items():
            end = last[index]
            if start is None or end is None or end < start:
                report.unmeasurable(name)
                break
            deltas.append(end - start)
        else:
            report.metric(name, sum(deltas))
