"""One RDMA write measurement across a Pair: ib-write-bw, and gpudirect-rdma (GPU memory).

Why shared: the two kinds differ only in where the buffer lives (``--use_cuda``), so the
memlock fitting, the transport to the peer, the floor and the metrics are written once.
Metrics (semantics §O): ``measurand=bandwidth`` prints ``bandwidthGbps`` (the average,
never the peak) and ``messageRateMpps``; ``measurand=latency`` runs ``ib_write_lat`` and
prints ``latencyUs`` (average), ``p99LatencyUs``, ``minLatencyUs`` and ``maxLatencyUs``.
With no ``measurand`` axis both run, one session after the other, so a test gating both
(the upstream samples do) has both. The bandwidth session prints the registration used.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from runners.sdk import rendezvous as rdv
from runners.sdk.entry import RunnerContext
from runners.sdk.link import NO_RENDEZVOUS, link_faults
from runners.sdk.memlock import fit
from runners.sdk.outcome import Failed, Passed, RunnerError, Verdict
from runners.sdk.perftest import parse_bandwidth, parse_latency
from runners.sdk.protocols import RdmaPort
from runners.sdk.rdma_pair import (
    PairSettings,
    Plan,
    Session,
    active_port,
    join,
    pair_settings,
    serve,
)
from runners.sdk.rdma_report import (
    DEFAULT_FLOOR_PCT,
    link_floor,
    print_port,
    print_registration,
    round_error,
    smaller_limit,
)

MEASURANDS = ("bandwidth", "latency")
DEFAULT_SIZE = 1 << 20
DEFAULT_QUEUE_PAIRS = 4
DEFAULT_ITERATIONS = 5000
LATENCY_SIZE = 2
LATENCY_ITERATIONS = 1000


@dataclass(frozen=True)
class WriteTest:
    kind: str
    prefix: str
    #: Extra perftest flags for this side (``--use_cuda=<gpu>``).
    extra: tuple[str, ...] = ()


def _plan(
    ctx: RunnerContext, *, test: WriteTest, measurand: str, limit: int | None
) -> tuple[Plan, bool]:
    env = ctx.env
    p = test.prefix
    if measurand == "latency":
        size = int(
            env.number(f"BURNIN_{p}_LATENCY_BYTES", default=LATENCY_SIZE, low=1, high=1 << 20)
        )
        iterations = int(
            env.number(f"BURNIN_{p}_ITERATIONS", default=LATENCY_ITERATIONS, low=1, high=10**7)
        )
        reg = fit(size=size, queue_pairs=1, limit=limit, tool="ib_write_lat")
        return Plan("ib_write_lat", reg.size, 1, iterations), reg.shrunk
    size = int(env.number(f"BURNIN_{p}_MESSAGE_BYTES", default=DEFAULT_SIZE, low=1, high=1 << 30))
    qps = int(env.number(f"BURNIN_{p}_QUEUE_PAIRS", default=DEFAULT_QUEUE_PAIRS, low=1, high=64))
    iterations = int(
        env.number(f"BURNIN_{p}_ITERATIONS", default=DEFAULT_ITERATIONS, low=1, high=10**7)
    )
    reg = fit(size=size, queue_pairs=qps, limit=limit, tool="ib_write_bw")
    return Plan("ib_write_bw", reg.size, reg.queue_pairs, iterations), reg.shrunk


def measure_write(ctx: RunnerContext, test: WriteTest) -> Verdict:
    """Both sides of the Pair; the verdict this side can conclude on its own."""
    side = rdv.pair_side(ctx.environ, runner=test.kind)
    chosen = ctx.environ.get("BURNIN_VARIANT_MEASURAND", "").strip()
    measurands: tuple[str, ...] = MEASURANDS
    if chosen:
        measurands = (
            ctx.env.choice("BURNIN_VARIANT_MEASURAND", default="bandwidth", allowed=MEASURANDS),
        )
    settings = pair_settings(ctx, prefix=test.prefix)
    floor_pct = ctx.env.number("BURNIN_LINK_FLOOR_PCT", default=DEFAULT_FLOOR_PCT, low=0, high=100)
    if NO_RENDEZVOUS in link_faults(ctx.environ):
        time.sleep(min(settings.connect_s + 1, settings.server_bound_s))
        raise RunnerError(
            f"simulated fault {NO_RENDEZVOUS}: this {side.role} never took part "
            f"(peer {side.peer} was left waiting)"
        )
    fabric = ctx.platform().fabric()
    port = active_port(fabric, device=settings.device)
    limit = fabric.memlock_limit_bytes()
    print_port(ctx.report, port)
    ctx.report.metric("measurand", chosen or "bandwidth,latency")
    verdicts = [
        _session(
            ctx,
            test=test,
            side=side,
            settings=settings,
            measurand=measurand,
            port=port,
            limit=limit,
            floor_pct=floor_pct,
        )
        for measurand in measurands
    ]
    failed = [v for v in verdicts if isinstance(v, Failed)]
    return failed[0] if failed else Passed()


def _session(
    ctx: RunnerContext,
    *,
    test: WriteTest,
    side: rdv.PairSide,
    settings: PairSettings,
    measurand: str,
    port: RdmaPort,
    limit: int | None,
    floor_pct: float,
) -> Verdict:
    """One agreed session (bandwidth, or latency) and what this side concludes from it."""
    shrunk = False
    fitted_to = limit
    if side.role == rdv.SERVER:

        def propose(peer_limit: int | None) -> Plan:
            nonlocal shrunk, fitted_to
            fitted_to = smaller_limit(limit, peer_limit)
            plan, shrunk = _plan(ctx, test=test, measurand=measurand, limit=fitted_to)
            return plan

        session = serve(
            ctx,
            kind=test.kind,
            side=side,
            settings=settings,
            propose=propose,
            port=port,
            extra=test.extra,
        )
    else:
        session = join(
            ctx,
            kind=test.kind,
            side=side,
            settings=settings,
            limit=limit,
            port=port,
            more=lambda index, result: False,
            extra=test.extra,
        )
        wanted, _ = _plan(ctx, test=test, measurand=measurand, limit=None)
        shrunk = (session.plan.size, session.plan.queue_pairs) != (wanted.size, wanted.queue_pairs)
    return _conclude(
        ctx,
        session=session,
        port=port,
        limit=limit,
        fitted_to=fitted_to,
        shrunk=shrunk,
        side=side,
        floor_pct=floor_pct,
    )


def _conclude(
    ctx: RunnerContext,
    *,
    session: Session,
    port: RdmaPort,
    limit: int | None,
    fitted_to: int | None,
    shrunk: bool,
    side: rdv.PairSide,
    floor_pct: float,
) -> Verdict:
    report = ctx.report
    plan = session.plan
    if session.provenance == "sim":
        report.metric("provenance", "sim")
    if plan.tool == "ib_write_bw":
        print_registration(report, plan=plan, limit=limit, shrunk=shrunk, fitted_to=fitted_to)
    else:
        report.metric("latencyMessageBytes", plan.size)
    (only,) = session.rounds
    peer = f"{'client' if side.role == rdv.SERVER else 'server'} {side.peer}"
    if only.result.exit_code != 0:
        raise round_error(only.result, tool=plan.tool, limit=limit, peer=peer)
    text = only.result.stdout + "\n" + only.result.stderr
    if plan.tool == "ib_write_lat":
        lat = parse_latency(text)
        report.metric("latencyUs", lat.average_us)
        report.metric("p99LatencyUs", lat.p99_us)
        report.metric("minLatencyUs", lat.min_us)
        report.metric("maxLatencyUs", lat.max_us)
        return Passed()
    bw = parse_bandwidth(text)
    if bw.size != plan.size:
        raise RunnerError(
            f"ib_write_bw reported {bw.size}-byte messages, {plan.size} were asked for"
        )
    report.metric("bandwidthGbps", bw.average_gbps)
    report.metric("messageRateMpps", bw.message_rate_mpps)
    floor = link_floor(ctx.environ, report=report, port=port, floor_pct=floor_pct)
    if floor is not None and bw.average_gbps < floor:
        return Failed(
            f"bandwidthGbps {bw.average_gbps:g} is below the floor {floor:g} Gbit/s "
            f"({floor_pct:g}% of the expected rate) on {port.device}:{port.port}"
        )
    return Passed()
