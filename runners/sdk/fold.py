"""Folding several devices into one result (A17).

Why: a gated metric keeps its name and carries the *worst* device, so one good card can
never certify an eight-GPU node; the fold set tells the reader which card that was and
how many were looked at. Spreads are declared ``n/a`` where they cannot exist (one
device or a mixed board), never printed as 0.
"""

from __future__ import annotations

from collections.abc import Sequence

from runners.sdk.gpus import DeviceSlot, Gpus
from runners.sdk.report import Report


def settle_concurrency(
    *, report: Report, requested: str | None, default: str, also: tuple[str, ...] = ()
) -> str:
    """The mode actually used (``default``, or one it ``also`` runs); a request it cannot
    honour is said in ``configWarnings``.

    ``deviceConcurrency`` must say what the runner did, never echo what was asked.
    """
    if requested is None or requested == default:
        return default
    if requested in also:
        return requested
    report.metric(
        "configWarnings",
        f"deviceConcurrency {requested} not supported by this runner; ran {default}",
    )
    return default


def spread_pct(values: Sequence[float]) -> float:
    """(max - min) / max in percent."""
    top = max(values)
    if top <= 0:
        raise ValueError("spread of non-positive values")
    return (top - min(values)) / top * 100.0


def print_fold(
    *,
    report: Report,
    gpus: Gpus,
    worst: DeviceSlot,
    concurrency: str,
    window_s: float | None = None,
) -> None:
    """Print the device-fold set (§O footnote)."""
    report.metric("deviceCount", len(gpus.slots))
    report.metric("devicesVisible", gpus.visible)
    report.metric("deviceHomogeneous", is_homogeneous(gpus.slots))
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
