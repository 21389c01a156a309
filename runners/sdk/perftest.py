"""Reading perftest's ``ib_write_bw`` and ``ib_write_lat`` reports.

Why strict: perftest's table is not a published stable format (external-formats.md), so
anything unexpected (no header, other units, a short row, a non-finite number) is a
:class:`PerftestOutputError` (exit 3), never a guess. The runners always pass
``--report_gbits``: a report in MB/sec was not asked for and is refused rather than
converted. The peak column is read but never reported as a metric (``peakBandwidthGbps``
is a single best burst, not what the link sustains).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from runners.sdk.outcome import RunnerError

_BW_HEADER = re.compile(r"#bytes\s+#iterations\s+BW peak\[(?P<unit>[^\]]+)\]\s+BW average\[")
_LAT_HEADER = re.compile(r"#bytes\s+#iterations\s+t_min\[usec\]\s+t_max\[usec\]")


class PerftestOutputError(RunnerError):
    """The tool's report could not be read: nothing was measured that we can trust."""


@dataclass(frozen=True)
class BandwidthRow:
    size: int
    iterations: int
    peak_gbps: float
    average_gbps: float
    message_rate_mpps: float


@dataclass(frozen=True)
class LatencyRow:
    size: int
    iterations: int
    min_us: float
    max_us: float
    typical_us: float
    average_us: float
    stdev_us: float
    p99_us: float
    p999_us: float | None


def _numbers(line: str, *, count: int, tool: str) -> list[float]:
    words = line.split()
    if len(words) < count:
        raise PerftestOutputError(f"{tool}: short result row {line.strip()[:120]!r}")
    try:
        values = [float(word) for word in words]
    except ValueError:
        raise PerftestOutputError(f"{tool}: unreadable result row {line.strip()[:120]!r}") from None
    if not all(math.isfinite(v) and v >= 0 for v in values):
        raise PerftestOutputError(f"{tool}: non-finite or negative value in {line.strip()[:120]!r}")
    return values


def _row_after(lines: list[str], index: int, *, tool: str) -> str:
    for line in lines[index + 1 :]:
        stripped = line.strip()
        if not stripped or stripped.startswith("-"):
            continue
        return line
    raise PerftestOutputError(f"{tool}: the report has a header but no result row")


def parse_bandwidth(text: str, *, tool: str = "ib_write_bw") -> BandwidthRow:
    lines = text.splitlines()
    for index, line in enumerate(lines):
        header = _BW_HEADER.search(line)
        if header is None:
            continue
        if header.group("unit") != "Gb/sec":
            raise PerftestOutputError(
                f"{tool}: report in {header.group('unit')}, expected Gb/sec (--report_gbits)"
            )
        values = _numbers(_row_after(lines, index, tool=tool), count=5, tool=tool)
        size, iterations, peak, average, rate = values[:5]
        if size < 1 or iterations < 1 or size != int(size) or iterations != int(iterations):
            raise PerftestOutputError(f"{tool}: implausible size/iterations in the result row")
        return BandwidthRow(
            size=int(size),
            iterations=int(iterations),
            peak_gbps=peak,
            average_gbps=average,
            message_rate_mpps=rate,
        )
    raise PerftestOutputError(f"{tool}: no bandwidth table in its output")


def parse_latency(text: str, *, tool: str = "ib_write_lat") -> LatencyRow:
    lines = text.splitlines()
    for index, line in enumerate(lines):
        if _LAT_HEADER.search(line) is None:
            continue
        values = _numbers(_row_after(lines, index, tool=tool), count=8, tool=tool)
        if values[0] < 1 or values[1] < 1:
            raise PerftestOutputError(f"{tool}: implausible size/iterations in the result row")
        return LatencyRow(
            size=int(values[0]),
            iterations=int(values[1]),
            min_us=values[2],
            max_us=values[3],
            typical_us=values[4],
            average_us=values[5],
            stdev_us=values[6],
            p99_us=values[7],
            p999_us=values[8] if len(values) > 8 else None,
        )
    raise PerftestOutputError(f"{tool}: no latency table in its output")


def connect_failed(text: str) -> bool:
    """perftest's client could not reach the server's port (the server is not up yet)."""
    return "Couldn't connect to" in text or "Unable to init the socket connection" in text
