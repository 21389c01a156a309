"""Counting NVIDIA Xid reports that arrive in the kernel log while a load runs.

Why only new records: the backlog holds Xids from before this window (another job, last
week's reset); a load test answers for its own window, so the backlog is drained and set
aside at the start. Each record is attributed to a GPU by the PCI bus and device numbers
the driver prints, so the fold can name the card; one it cannot attribute still counts.
"""

from __future__ import annotations

import re

from runners.sdk.protocols import KmsgReader

_XID = re.compile(r"NVRM: Xid \(PCI:(?P<bus>[0-9A-Fa-f:.]+)\): (?P<code>\d+)")


def bus_key(pci: str) -> tuple[str, str]:
    """``(bus, device)`` from ``00000000:3B:00.0`` or the driver's ``0000:3b:00``."""
    parts = pci.lower().split(".", 1)[0].split(":")
    if len(parts) < 2:
        return ("", "")
    return (parts[-2].lstrip("0") or "0", parts[-1].lstrip("0") or "0")


class XidWatch:
    def __init__(self, kmsg: KmsgReader) -> None:
        self._kmsg = kmsg
        self.preexisting = sum(1 for line in kmsg.drain() if _XID.search(line))
        self.events: list[tuple[tuple[str, str], int]] = []

    def poll(self) -> None:
        for line in self._kmsg.drain():
            match = _XID.search(line)
            if match is not None:
                self.events.append((bus_key(match.group("bus")), int(match.group("code"))))

    @property
    def count(self) -> int:
        return len(self.events)

    @property
    def last_code(self) -> int | None:
        return self.events[-1][1] if self.events else None

    def dropped(self) -> int:
        return self._kmsg.dropped()

    def events_on(self, pci_bus_id: str) -> int:
        key = bus_key(pci_bus_id)
        return sum(1 for bus, _code in self.events if bus == key)

    def close(self) -> None:
        self._kmsg.close()
