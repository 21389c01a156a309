"""Reading nccl-tests' output: the result table, its footer, and NCCL's own transport lines.

Why defensive: the table is not a published stable format (external-formats.md). A row
is ``size count type redop [root] | time algbw busbw #wrong`` out-of-place then the same
in-place (``root`` is absent in old releases; ``#wrong`` is an integer, ``0e+00`` in old
releases, ``N/A`` without validation). Anything else that looks like a row is refused.

The transport is read from NCCL's ``NCCL_DEBUG=INFO`` lines, never assumed: ``Using
network Socket`` or a channel ``via NET/Socket`` is a TCP fallback wherever it appears;
``Using network IB`` with ``NET/IB : Using [0]mlx5_0:1/RoCE`` is RoCE, ``/IB`` is
InfiniBand; intra-node runs report ``NVLS`` (multicast), ``P2P`` or ``SHM``. RCCL (AMD)
prints the same lines: xGMI and PCIe peer copies are ``via P2P/IPC``, so ``P2P``.

Which build ran is read too (:func:`build_of`): NCCL says ``NCCL version 2.21.5+cuda12.4``
and nccl-tests ``Test CUDA failure``; RCCL says ``RCCL version 2.20.5+hip6.2`` and
rccl-tests ``Test HIP failure``. A CUDA build on an AMD node (or the reverse) measured
nothing of that node's GPUs, so the runner refuses it by name.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from runners.sdk.outcome import RunnerError

SOCKET = "socket"
IB = "IB"
ROCE = "RoCE"
NVLS = "NVLS"
P2P = "P2P"
SHM = "SHM"
FABRIC_TRANSPORTS = frozenset({IB, ROCE})
#: The two builds of the collective library and its tests.
CUDA_BUILD = "cuda"
ROCM_BUILD = "rocm"

_NETWORK = re.compile(r"NCCL INFO Using network (?P<name>\S+)")
_NET_IB = re.compile(r"NCCL INFO NET/IB\s*: Using (?P<devices>.*)")
_OOB = re.compile(r"^#\s*Out of bounds values\s*:\s*(?P<count>\d+)\s+(?P<word>OK|FAILED)\s*$")
_AVG = re.compile(r"^#\s*Avg bus bandwidth\s*:\s*(?P<value>\S+)\s*$")
_RANK = re.compile(r"^#\s+Rank\s+\d+\s")
_VERSION = re.compile(r"\b(?P<lib>NCCL|RCCL) version\s*:?\s*(?P<version>[0-9]\S*)")
_TEST_FAILURE = re.compile(r"Test (?P<api>CUDA|HIP) failure")
#: NCCL's registration failure: the memlock limit (docs/fabric.md).
MEMLOCK_FAILURE = re.compile(r"ibv_reg_mr\S*\s+failed with error Cannot allocate memory")


class NcclOutputError(RunnerError):
    """nccl-tests printed something this parser cannot vouch for."""


@dataclass(frozen=True)
class Cell:
    time_us: float
    algbw_gbs: float
    busbw_gbs: float
    wrong: int | None


@dataclass(frozen=True)
class Row:
    size: int
    out_of_place: Cell
    in_place: Cell


@dataclass(frozen=True)
class NcclReport:
    rows: list[Row]
    out_of_bounds: int | None
    out_of_bounds_ok: bool | None
    average_busbw_gbs: float | None
    ranks: int | None
    transport: str | None

    @property
    def bus_bandwidth_gbs(self) -> float:
        """busbw at the largest size, the worse of out-of-place and in-place."""
        last = max(self.rows, key=lambda r: r.size)
        return min(last.out_of_place.busbw_gbs, last.in_place.busbw_gbs)

    @property
    def peak_alg_bandwidth_gbs(self) -> float:
        return max(max(r.out_of_place.algbw_gbs, r.in_place.algbw_gbs) for r in self.rows)

    @property
    def latency_us(self) -> float:
        """Time of one collective at the smallest size (the better of the two modes)."""
        first = min(self.rows, key=lambda r: r.size)
        return min(first.out_of_place.time_us, first.in_place.time_us)

    @property
    def miscompares(self) -> int | None:
        """Wrong elements over every cell; None when validation did not run."""
        cells = [c for r in self.rows for c in (r.out_of_place, r.in_place)]
        if any(c.wrong is None for c in cells):
            return None
        total = sum(c.wrong or 0 for c in cells)
        if self.out_of_bounds_ok is False:
            total = max(total, self.out_of_bounds or 0, 1)
        return total


def _number(word: str, line: str) -> float:
    try:
        value = float(word)
    except ValueError:
        raise NcclOutputError(f"unreadable table row {line.strip()[:120]!r}") from None
    if not math.isfinite(value) or value < 0:
        raise NcclOutputError(f"non-finite or negative value in {line.strip()[:120]!r}")
    return value


def _wrong(word: str, line: str) -> int | None:
    if word.upper() == "N/A":
        return None
    value = _number(word, line)
    if value != int(value):
        raise NcclOutputError(f"fractional #wrong in {line.strip()[:120]!r}")
    return int(value)


def _cell(words: list[str], line: str) -> Cell:
    return Cell(
        time_us=_number(words[0], line),
        algbw_gbs=_number(words[1], line),
        busbw_gbs=_number(words[2], line),
        wrong=_wrong(words[3], line),
    )


def _row(line: str) -> Row | None:
    words = line.split()
    if not words or not words[0].isdecimal():
        return None
    if len(words) == 13:
        head, tail = words[:5], words[5:]
    elif len(words) == 12:
        head, tail = words[:4], words[4:]
    else:
        raise NcclOutputError(f"table row with {len(words)} fields: {line.strip()[:120]!r}")
    if not head[1].isdecimal():
        raise NcclOutputError(f"unreadable table row {line.strip()[:120]!r}")
    return Row(
        size=int(head[0]), out_of_place=_cell(tail[:4], line), in_place=_cell(tail[4:], line)
    )


def transport_of(text: str) -> str | None:
    """The transport NCCL said it used (see the module docstring), or None."""
    networks = {m.group("name") for m in _NETWORK.finditer(text)}
    if "Socket" in networks or "via NET/Socket" in text:
        return SOCKET
    ib_networks = {n for n in networks if n == "IB" or n.startswith("IBext")}
    if ib_networks or "via NET/IB" in text:
        devices = " ".join(m.group("devices") for m in _NET_IB.finditer(text))
        if "/RoCE" in devices:
            return ROCE
        return IB
    if networks:
        return sorted(networks)[0]
    if "NVLS multicast support is available" in text or "via NVLS" in text:
        return NVLS
    if "via P2P" in text:
        return P2P
    if "via SHM" in text:
        return SHM
    return None


def build_of(text: str) -> tuple[str, str] | None:
    """Which build printed ``text`` (``cuda`` or ``rocm``) and the line that says so; None
    when nothing says. Output naming both builds is refused (it cannot be one run's)."""
    seen: dict[str, str] = {}
    for match in _VERSION.finditer(text):
        lib, version = match.group("lib"), match.group("version")
        build = ROCM_BUILD if lib == "RCCL" or "+hip" in version else CUDA_BUILD
        seen.setdefault(build, match.group(0))
    for match in _TEST_FAILURE.finditer(text):
        build = ROCM_BUILD if match.group("api") == "HIP" else CUDA_BUILD
        seen.setdefault(build, match.group(0))
    if len(seen) > 1:
        raise NcclOutputError(
            "the output names both builds (" + "; ".join(sorted(seen.values())) + ")"
        )
    return next(iter(seen.items()), None)


def parse_report(text: str) -> NcclReport:
    """The table and footer; a run with no row is refused (nothing was measured)."""
    rows: list[Row] = []
    oob: int | None = None
    oob_ok: bool | None = None
    average: float | None = None
    ranks = 0
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("#"):
            if (m := _OOB.match(stripped)) is not None:
                oob, oob_ok = int(m.group("count")), m.group("word") == "OK"
            elif (m := _AVG.match(stripped)) is not None:
                average = _number(m.group("value"), stripped)
            elif _RANK.match(stripped):
                ranks += 1
            continue
        if not stripped or not stripped[0].isdigit():
            continue
        row = _row(stripped)
        if row is not None:
            rows.append(row)
    if not rows:
        raise NcclOutputError("nccl-tests printed no result row")
    return NcclReport(
        rows=rows,
        out_of_bounds=oob,
        out_of_bounds_ok=oob_ok,
        average_busbw_gbs=average,
        ranks=ranks or None,
        transport=transport_of(text),
    )
