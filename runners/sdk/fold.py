"""Folding several devices into one result (A17).

Why: a gated metric keeps its name and carries the *worst* device, so one good card can
never certify an eight-GPU node; the fold set tells the reader which card that was and
how many were looked at. Spreads are declared ``n/a`` where they cannot exist (one
device or a mixed board), never printed as 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from runners.sdk.hardware import Nvml
from runners.sdk.outcome import RunnerError
from runners.sdk.report import Report


@dataclass(frozen=True)
class DeviceSlot:
    """A device a runner measures: NVML index plus identity for the fold lines."""

    index: int
    pci_bus_id: str
    name: str


def select_devices(*, nvml: Nvml, allocated: int | None) -> tuple[list[DeviceSlot], int]:
    """The devices to measure and how many are visible; refuses a short allocation."""
    visible = nvml.device_count()
    if visible == 0:
        raise RunnerError("no GPU visible")
    if allocated is not None and visible < allocated:
        raise RunnerError(f"{allocated} GPUs allocated but only {visible} visible")
    slots = []
    for index in range(visible):
        device = nvml.device(index)
        slots.append(DeviceSlot(index=index, pci_bus_id=device.pci_bus_id(), name=device.name()))
    return slots, visible


def concurrency_mode(
    requested: str | None, *, default: str, supported: tuple[str, ...]
) -> tuple[str, str | None]:
    """The mode actually used and, when the request could not be honoured, why.

    ``deviceConcurrency`` must say what the runner did, never echo what was asked.
    """
    if requested is None or requested == default:
        return default, None
    if requested in supported:
        return requested, None
    return default, f"deviceConcurrency {requested} not supported by this runner; ran {default}"


def spread_pct(values: Sequence[float]) -> float:
    """(max - min) / max in percent."""
    top = max(values)
    if top <= 0:
        raise ValueError("spread of non-positive values")
    return (top - min(values)) / top * 100.0


def print_fold(
    *,
    report: Report,
    slots: Sequence[DeviceSlot],
    visible: int,
    worst: DeviceSlot,
    concurrency: str,
    window_s: float | None,
) -> None:
    """Print the device-fold set (§O footnote)."""
    report.metric("deviceCount", len(slots))
    report.metric("devicesVisible", visible)
    report.metric("deviceHomogeneous", is_homogeneous(slots))
    report.metric("deviceConcurrency", concurrency)
    if window_s is not None:
        report.metric("deviceWindowS", window_s)
    report.metric("worstDeviceIndex", worst.index)
    report.metric("worstDevicePciBusId", worst.pci_bus_id)


def is_homogeneous(slots: Sequence[DeviceSlot]) -> bool:
    return len({slot.name for slot in slots}) == 1


def print_spread(
    *, report: Report, name: str, slots: Sequence[DeviceSlot], values: Sequence[float]
) -> None:
    """A spread metric, or ``n/a`` on one device or a heterogeneous board (B4)."""
    if len(slots) < 2 or not is_homogeneous(slots):
        report.unmeasurable(name)
        return
    report.metric(name, spread_pct(values))
