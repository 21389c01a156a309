"""Reading stressapptest's summary (format in external-formats.md).

Why strict: the summary is not a stable, published format. Every figure the runner gates
must come from a line that matched exactly; a summary without its ``Completed`` and
``Status`` lines is unreadable (exit 3), never a pass.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_COMPLETED = re.compile(
    r"^Stats: Completed: (?P<mb>[0-9.]+)M in (?P<secs>[0-9.]+)s (?P<rate>[0-9.]+)MB/s, "
    r"with (?P<incidents>\d+) hardware incidents, (?P<errors>\d+) errors\s*$",
    re.MULTILINE,
)
_COPY = re.compile(r"^Stats: Memory Copy: (?P<mb>[0-9.]+)M at (?P<rate>[0-9.]+)MB/s\s*$", re.M)
_STATUS = re.compile(r"^Status: (?P<status>PASS|FAIL)\b(?P<rest>.*)$", re.MULTILINE)


class UnreadableSummaryError(ValueError):
    """The output lacks a line the verdict depends on."""


@dataclass(frozen=True)
class StressSummary:
    passed: bool
    status_line: str
    elapsed_s: float
    hardware_incidents: int
    errors: int
    copy_rate_mbs: float | None


def parse_summary(text: str) -> StressSummary:
    completed = _COMPLETED.search(text)
    status = _STATUS.search(text)
    if completed is None:
        raise UnreadableSummaryError("no 'Stats: Completed' line")
    if status is None:
        raise UnreadableSummaryError("no 'Status: PASS|FAIL' line")
    copy = _COPY.search(text)
    return StressSummary(
        passed=status.group("status") == "PASS",
        status_line=status.group(0).strip(),
        elapsed_s=float(completed.group("secs")),
        hardware_incidents=int(completed.group("incidents")),
        errors=int(completed.group("errors")),
        copy_rate_mbs=float(copy.group("rate")) if copy is not None else None,
    )
