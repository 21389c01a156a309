"""fabric-soak: repeated RDMA bandwidth samples across a Pair, and the port's error counters.

Pair only, a load kind. The perftest session of ib-write-bw (``runners.sdk.rdma_pair``),
but the client asks for round after round of ``ib_write_bw`` until the window
(``BURNIN_FABRIC_SOAK_SECONDS``, default 60, capped by the duration budget) or
``BURNIN_FABRIC_SOAK_ITERATIONS`` (default 1000) is spent. Each side reads its port's
error counters (``/sys/class/infiniband/<dev>/ports/<n>/counters``) before the first
round and after the last; the server sends its delta to the client at the end of the
session (``rdma_pair``'s ``SUMMARY``), because the client's verdict decides the Pair and
a flapping port is often seen only at the server's end.

Metrics: ``minBandwidthGbps``, ``p1BandwidthGbps`` (nearest-rank 1st percentile),
``meanBandwidthGbps`` and ``bandwidthStdDevGbps`` (evidence), ``soakIterations``,
``soakFailedIterations``, ``linkErrorEvents`` (the counters' summed delta, ``n/a`` when
they cannot be read or went backwards: never a made-up 0; on the client, both ends'
deltas summed, see :func:`link_delta`). Exit 1 for a measured
problem: error counters moved, a round failed after others succeeded, or the minimum
fell below ``BURNIN_LINK_FLOOR_PCT`` (default 90) of the port's rate. No round
measured: exit 3.
"""

from __future__ import annotations

import math
import statistics
import time

from runners.sdk import rendezvous as rdv
from runners.sdk.entry import RunnerContext
from runners.sdk.link import NO_RENDEZVOUS, link_faults
from runners.sdk.memlock import fit
from runners.sdk.outcome import Failed, Passed, RunnerError, Verdict
from runners.sdk.perftest import PerftestOutputError, parse_bandwidth
from runners.sdk.protocols import Fabric, RdmaPort, ToolResult
from runners.sdk.rdma_pair import Plan, active_port, join, pair_settings, serve
from runners.sdk.rdma_report import (
    DEFAULT_FLOOR_PCT,
    link_floor,
    print_port,
    print_registration,
    round_error,
    smaller_limit,
)
from runners.sdk.report import Report

RUNNER = "fabric-soak"
PREFIX = "FABRIC_SOAK"
DEFAULT_SECONDS = 60.0
DEFAULT_ITERATIONS = 1000
SIZE = 1 << 20
QUEUE_PAIRS = 4
TOOL_ITERATIONS = 2000


def counter_delta(before: dict[str, int] | None, after: dict[str, int] | None) -> int | None:
    """The summed increase of the error counters, or None when it cannot be known."""
    if before is None or after is None or set(before) != set(after):
        return None
    deltas = [after[name] - before[name] for name in before]
    if any(delta < 0 for delta in deltas):
        return None  # a counter reset or wrapped: the delta is unknown, not zero
    return sum(deltas)


class _Absent:
    """No peer delta was asked for (the server's own report)."""


_ABSENT = _Absent()


def link_delta(own: int | None, peer: int | None) -> int | None:
    """Both ends' error-counter deltas as one link figure: their sum when both are known;
    when one is unknown, the known one only if it moved (a measured fault stands), else
    unknown (``n/a``: a quiet end does not vouch for the end nobody read)."""
    if own is not None and peer is not None:
        return own + peer
    known = own if own is not None else peer
    return known if known else None


def _peer_delta(fields: dict[str, str], *, peer: str) -> int | None:
    value = fields.get("linkErrorEvents", "")
    if value.lower() == "n/a":
        return None
    if not value.isdecimal():
        raise rdv.ProtocolError(f"server {peer} sent linkErrorEvents={value[:40]!r}")
    return int(value)


def p1(samples: list[float]) -> float:
    """Nearest-rank 1st percentile (the minimum below 100 samples)."""
    ordered = sorted(samples)
    return ordered[max(math.ceil(0.01 * len(ordered)) - 1, 0)]


def measure(ctx: RunnerContext) -> Verdict:
    side = rdv.pair_side(ctx.environ, runner=RUNNER)
    env = ctx.env
    settings = pair_settings(ctx, prefix=PREFIX)
    window = env.window_s(
        default=env.number(
            f"BURNIN_{PREFIX}_SECONDS", default=DEFAULT_SECONDS, low=0.1, high=86400
        ),
        cap=86400,
        margin=settings.connect_s + 30,
    )
    max_rounds = int(
        env.number(f"BURNIN_{PREFIX}_ITERATIONS", default=DEFAULT_ITERATIONS, low=1, high=10**6)
    )
    floor_pct = env.number("BURNIN_LINK_FLOOR_PCT", default=DEFAULT_FLOOR_PCT, low=0, high=100)
    if NO_RENDEZVOUS in link_faults(ctx.environ):
        time.sleep(min(settings.connect_s + 1, settings.server_bound_s))
        raise RunnerError(
            f"simulated fault {NO_RENDEZVOUS}: this {side.role} never took part "
            f"(peer {side.peer} was left waiting)"
        )
    fabric = ctx.platform().fabric()
    port = active_port(fabric, device=settings.device)
    limit = fabric.memlock_limit_bytes()
    report = ctx.report
    print_port(report, port)
    before = fabric.error_counters(port)
    fitted_to, shrunk = limit, False
    after: dict[str, int] | None = None
    peer_delta: int | _Absent | None = _ABSENT
    if side.role == rdv.SERVER:

        def summary() -> dict[str, str]:
            nonlocal after
            after = fabric.error_counters(port)
            delta = counter_delta(before, after)
            return {"linkErrorEvents": "n/a" if delta is None else str(delta)}

        def propose(peer_limit: int | None) -> Plan:
            nonlocal fitted_to, shrunk
            fitted_to = smaller_limit(limit, peer_limit)
            reg = fit(size=SIZE, queue_pairs=QUEUE_PAIRS, limit=fitted_to, tool="ib_write_bw")
            shrunk = reg.shrunk
            return Plan("ib_write_bw", reg.size, reg.queue_pairs, TOOL_ITERATIONS)

        session = serve(
            ctx,
            kind=RUNNER,
            side=side,
            settings=settings,
            propose=propose,
            port=port,
            summary=summary,
        )
    else:
        end = time.monotonic() + window

        def more(index: int, result: ToolResult) -> bool:
            return index + 1 < max_rounds and time.monotonic() < end

        session = join(
            ctx,
            kind=RUNNER,
            side=side,
            settings=settings,
            limit=limit,
            port=port,
            more=more,
            summary=True,
        )
        plan = session.plan
        shrunk = (plan.size, plan.queue_pairs) != (SIZE, QUEUE_PAIRS)
        peer_delta = _peer_delta(session.peer_summary, peer=side.peer)
        after = fabric.error_counters(port)
    if session.provenance == "sim":
        report.metric("provenance", "sim")
    print_registration(report, plan=session.plan, limit=limit, shrunk=shrunk, fitted_to=fitted_to)
    peer = f"{'client' if side.role == rdv.SERVER else 'server'} {side.peer}"
    return _conclude(
        ctx,
        report=report,
        results=[r.result for r in session.rounds],
        limit=limit,
        peer=peer,
        port=port,
        counters=(before, after),
        peer_delta=peer_delta,
        floor_pct=floor_pct,
        fabric=fabric,
    )


def _conclude(
    ctx: RunnerContext,
    *,
    report: Report,
    results: list[ToolResult],
    limit: int | None,
    peer: str,
    port: RdmaPort,
    counters: tuple[dict[str, int] | None, dict[str, int] | None],
    peer_delta: int | _Absent | None,
    floor_pct: float,
    fabric: Fabric,
) -> Verdict:
    samples: list[float] = []
    failures: list[RunnerError] = []
    for result in results:
        if result.exit_code != 0:
            failures.append(round_error(result, tool="ib_write_bw", limit=limit, peer=peer))
            continue
        try:
            samples.append(parse_bandwidth(result.stdout + "\n" + result.stderr).average_gbps)
        except PerftestOutputError as error:
            failures.append(error)
    report.metric("soakIterations", len(results))
    report.metric("soakFailedIterations", len(failures))
    own = counter_delta(*counters)
    delta = own if isinstance(peer_delta, _Absent) else link_delta(own, peer_delta)
    if not isinstance(peer_delta, _Absent):
        if peer_delta is None:
            report.unmeasurable("peerLinkErrorEvents")
        else:
            report.metric("peerLinkErrorEvents", peer_delta)
    if delta is None:
        report.unmeasurable("linkErrorEvents")
    else:
        report.metric("linkErrorEvents", delta)
    if not samples:
        raise failures[0] if failures else RunnerError("no soak round ran")
    report.metric("minBandwidthGbps", min(samples))
    report.metric("p1BandwidthGbps", p1(samples))
    report.metric("meanBandwidthGbps", statistics.fmean(samples))
    if len(samples) > 1:
        report.metric("bandwidthStdDevGbps", statistics.pstdev(samples))
    else:
        report.unmeasurable("bandwidthStdDevGbps")
    floor = link_floor(ctx.environ, report=report, port=port, floor_pct=floor_pct)
    problems = []
    if delta:
        where = f"{port.device}:{port.port}"
        if not isinstance(peer_delta, _Absent):
            where = f"this end {where}: {own if own is not None else 'n/a'}, {peer}: " + (
                "n/a" if peer_delta is None else str(peer_delta)
            )
        problems.append(f"linkErrorEvents {delta}: error counters moved ({where})")
    if failures:
        problems.append(f"{len(failures)} of {len(results)} rounds failed ({failures[0]})")
    if floor is not None and min(samples) < floor:
        problems.append(f"minBandwidthGbps {min(samples):g} is below the floor {floor:g} Gbit/s")
    if problems:
        return Failed("; ".join(problems))
    return Passed()
