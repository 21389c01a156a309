"""Recognising NVIDIA Xid reports in kernel log records.

The driver logs ``NVRM: Xid (PCI:0000:3b:00): 79, pid=..., GPU has fallen off the bus.``;
the code is the first integer after the colon. A record that mentions Xid in any other
shape is not counted (it would be a guess).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_XID = re.compile(r"NVRM: Xid \(PCI:(?P<bus>[0-9A-Fa-f:.]+)\): (?P<code>\d+)")


@dataclass(frozen=True)
class XidEvent:
    bus: str
    code: int


def parse_xid(record: str) -> XidEvent | None:
    match = _XID.search(record)
    if match is None:
        return None
    return XidEvent(bus=match.group("bus").lower(), code=int(match.group("code")))
