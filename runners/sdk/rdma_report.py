"""What a perftest runner concludes from one tool run, and the evidence it prints.

Why one place: ib-write-bw, gpudirect-rdma and fabric-soak must read a failed run the
same way — a registration failure is the memlock Error (never a bad link), a port
perftest could not reach is the peer's fault (exit 3 naming it), anything else the tool
said is Error with its last line — and must print the registration they really used.
"""

from __future__ import annotations

from collections.abc import Mapping

from runners.sdk import rendezvous as rdv
from runners.sdk.memlock import describe, memlock_error, registration_failed
from runners.sdk.outcome import RunnerError
from runners.sdk.perftest import connect_failed
from runners.sdk.protocols import RdmaPort, ToolResult
from runners.sdk.rdma_pair import Plan
from runners.sdk.report import Report

DEFAULT_FLOOR_PCT = 90.0


def _last_line(result: ToolResult) -> str:
    lines = [line.strip() for line in (result.stdout + "\n" + result.stderr).splitlines()]
    lines = [line for line in lines if line]
    return lines[-1][:300] if lines else "(no output)"


def round_error(result: ToolResult, *, tool: str, limit: int | None, peer: str) -> RunnerError:
    """Why a tool run that exited non-zero measured nothing."""
    text = result.stdout + "\n" + result.stderr
    if registration_failed(text):
        return memlock_error(what=f"{tool} ({_last_line(result)})", limit=limit)
    if connect_failed(text):
        return rdv.PeerUnreachableError(f"{tool} could not reach {peer}: {_last_line(result)}")
    return RunnerError(f"{tool} exited {result.exit_code}: {_last_line(result)}")


def print_port(report: Report, port: RdmaPort) -> None:
    report.metric("rdmaDevice", f"{port.device}:{port.port}")
    report.metric("rdmaLinkLayer", port.link_layer)
    if port.rate_gbps is not None:
        report.metric("linkRateGbps", port.rate_gbps)
    else:
        report.unmeasurable("linkRateGbps")


def print_registration(
    report: Report, *, plan: Plan, limit: int | None, shrunk: bool, fitted_to: int | None
) -> None:
    """The registration actually used, and whether RLIMIT_MEMLOCK (this side's ``limit``;
    the plan was fitted to the smaller of both sides', ``fitted_to``) shrank it."""
    report.metric("rdmaMessageBytes", plan.size)
    report.metric("rdmaQueuePairs", plan.queue_pairs)
    report.metric("memlockLimit", "unlimited" if limit is None else str(limit))
    report.metric("memlockShrunk", shrunk)
    if shrunk:
        report.note(
            f"RLIMIT_MEMLOCK (smaller of the two sides) is {describe(fitted_to)}: message size "
            f"and queue pairs shrunk to {plan.size} bytes x {plan.queue_pairs} to fit "
            "(still a measurement of the link)"
        )


def smaller_limit(mine: int | None, theirs: int | None) -> int | None:
    if mine is None:
        return theirs
    if theirs is None:
        return mine
    return min(mine, theirs)


def link_floor(
    environ: Mapping[str, str], *, report: Report, port: RdmaPort, floor_pct: float
) -> float | None:
    """The bandwidth below which this runner fails the link itself (Gbit/s), or None.

    The expected rate is ``BURNIN_LINK_EXPECTED_GBPS`` when set (catches a port that
    trained down to fewer lanes and reports the lower rate), else the port's own rate.
    """
    text = environ.get("BURNIN_LINK_EXPECTED_GBPS", "").strip()
    expected: float | None = port.rate_gbps
    if text:
        try:
            expected = float(text)
        except ValueError:
            raise RunnerError(f"BURNIN_LINK_EXPECTED_GBPS={text!r} is not a number") from None
        if not 0 < expected < 1e5:
            raise RunnerError(f"BURNIN_LINK_EXPECTED_GBPS={text!r} is out of range")
    report.metric("linkFloorPct", floor_pct)
    if expected is None or floor_pct <= 0:
        return None
    return expected * floor_pct / 100
