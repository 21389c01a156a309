"""tcp-baseline: throughput, retransmits and round-trip time of real TCP traffic.

Pair only (``BURNIN_ROLE``). The server listens on a control port (its readiness port,
default 18520, ``BURNIN_TCP_BASELINE_PORT``) and a data port (control + 1); the client
connects with bounded retry, is given a session token on the control connection,
sends for ``BURNIN_TCP_BASELINE_SECONDS`` (default 10) on the data connection, then
half-closes it. The server counts every byte until the half-close and acknowledges the
count on the control connection; the client verifies it. Round-trip time and
retransmits are the kernel's (``TCP_INFO``, see ``runners.sdk.netinfo``), ``n/a`` when
the kernel does not say.

Exit codes: a peer that never answers, a session that stops, or an acknowledged count
that differs from what was sent is exit 3 naming the peer (the link was not measured);
the runner never fails a slow link itself (thresholds on ``tcpThroughputGbps`` do).
Every wait is bounded: the client's connect by ``BURNIN_TCP_BASELINE_CONNECT_SECONDS``
(default 120), the server's whole life by ``BURNIN_DURATION_SECONDS`` + 60 s.
"""

from __future__ import annotations

import secrets
import socket
import time
from dataclasses import dataclass

from runners.sdk import rendezvous as rdv
from runners.sdk.entry import RunnerContext
from runners.sdk.link import (
    NO_RENDEZVOUS,
    SLOW_LINK,
    SLOW_LINK_BYTES_PER_S,
    Pacer,
    link_faults,
    link_provenance,
)
from runners.sdk.netinfo import default_route_interface, interface_of, tcp_info
from runners.sdk.outcome import Passed, RunnerError, Verdict
from runners.sdk.report import Report

RUNNER = "tcp-baseline"
PROTOCOL = "tcp-baseline 1"
DEFAULT_PORT = 18520
DEFAULT_SECONDS = 10.0
DEFAULT_CONNECT_SECONDS = 120.0
#: How much longer than its budget the server may live (the pod deadline is +120 s).
SERVER_MARGIN_S = 60.0
#: How long the client waits for the server's acknowledgement after its half-close.
ACK_TIMEOUT_S = 30.0
HANDSHAKE_TIMEOUT_S = 5.0
CHUNK = 256 * 1024


@dataclass(frozen=True)
class Settings:
    seconds: float
    port: int
    connect_s: float
    server_bound_s: float


def settings(ctx: RunnerContext) -> Settings:
    env = ctx.env
    seconds = env.window_s(
        default=env.number(
            "BURNIN_TCP_BASELINE_SECONDS", default=DEFAULT_SECONDS, low=0.1, high=3600
        ),
        cap=3600,
    )
    port = int(env.number("BURNIN_TCP_BASELINE_PORT", default=DEFAULT_PORT, low=1024, high=65534))
    connect_s = env.number(
        "BURNIN_TCP_BASELINE_CONNECT_SECONDS", default=DEFAULT_CONNECT_SECONDS, low=0.5, high=3600
    )
    budget = env.duration_budget_s
    bound = (budget if budget is not None else connect_s + seconds) + SERVER_MARGIN_S
    return Settings(seconds=seconds, port=port, connect_s=connect_s, server_bound_s=bound)


def _evidence(report: Report, *, local: str) -> None:
    for name, value in (
        ("tcpTestInterface", interface_of(local)),
        ("tcpMgmtInterface", default_route_interface()),
    ):
        if value:
            report.metric(name, value)
        else:
            report.unmeasurable(name)


def _gbps(byte_count: int, seconds: float) -> float:
    return byte_count * 8 / seconds / 1e9


def measure(ctx: RunnerContext) -> Verdict:
    side = rdv.pair_side(ctx.environ, runner=RUNNER)
    config = settings(ctx)
    faults = link_faults(ctx.environ)
    if NO_RENDEZVOUS in faults:
        # As long as the other side would wait for it, then unjudged.
        time.sleep(min(config.connect_s + config.seconds, config.server_bound_s))
        raise RunnerError(
            f"simulated fault {NO_RENDEZVOUS}: this {side.role} never took part "
            f"(peer {side.peer} was left waiting)"
        )
    pacer = Pacer(SLOW_LINK_BYTES_PER_S if SLOW_LINK in faults else None)
    if side.role == rdv.SERVER:
        return _serve(ctx, side=side, config=config, pacer=pacer)
    return _send(ctx, side=side, config=config, pacer=pacer)


# -- server ----------------------------------------------------------------------------


def _await(
    server: socket.socket, *, deadline: rdv.Deadline, expect: str, side: rdv.PairSide
) -> socket.socket:
    """The first connection whose first line is ``expect``; probes and strangers are dropped."""
    while True:
        conn = rdv.accept(server, deadline=deadline)
        if conn is None:
            raise rdv.PeerUnreachableError(
                f"client {side.peer} never started a session within {deadline.seconds:g}s"
            )
        line = rdv.recv_line(conn, timeout=min(HANDSHAKE_TIMEOUT_S, deadline.remaining()))
        if line == expect:
            return conn
        conn.close()


def _serve(ctx: RunnerContext, *, side: rdv.PairSide, config: Settings, pacer: Pacer) -> Verdict:
    report = ctx.report
    deadline = rdv.Deadline(config.server_bound_s)
    address = rdv.listen_address(
        ctx.environ, own_name=rdv.sibling_name(side.peer_host, rdv.SERVER), peer_host=side.peer_host
    )
    with (
        rdv.listener(address, config.port) as control_server,
        rdv.listener(address, config.port + 1) as data_server,
    ):
        report.note(
            f"tcp-baseline server listening on {address}:{config.port} (data {config.port + 1})"
        )
        control = _await(
            control_server, deadline=deadline, expect=f"HELLO {PROTOCOL} client", side=side
        )
        with control:
            token = secrets.token_hex(16)
            rdv.send_line(control, f"SESSION {token} {config.port + 1}")
            data = _await(data_server, deadline=deadline, expect=f"DATA {token}", side=side)
            with data:
                local, peer = data.getsockname()[0], data.getpeername()[0]
                received, seconds = _drain(data, deadline=deadline, pacer=pacer, side=side)
            rdv.send_line(control, f"RECEIVED {received} {seconds:.6f}")
            # The client's goodbye (or its close) ends the session; bounded either way.
            rdv.recv_line(control, timeout=min(ACK_TIMEOUT_S, deadline.remaining()))
    report.metric("provenance", link_provenance(ctx.environ, local=local, peer=peer))
    report.metric("tcpBytesReceived", received)
    report.metric("elapsedS", seconds)
    if received and seconds > 0:
        report.metric("tcpThroughputGbps", _gbps(received, seconds))
    else:
        raise RunnerError(f"client {side.peer} sent no data")
    _evidence(report, local=local)
    return Passed()


def _drain(
    data: socket.socket, *, deadline: rdv.Deadline, pacer: Pacer, side: rdv.PairSide
) -> tuple[int, float]:
    buffer = bytearray(CHUNK)
    received = 0
    start = time.monotonic()
    while True:
        data.settimeout(max(deadline.remaining(), 0.01))
        try:
            count = data.recv_into(buffer)
        except TimeoutError:
            raise rdv.PeerUnreachableError(
                f"client {side.peer} stopped sending mid-session"
            ) from None
        except OSError as error:
            raise rdv.PeerUnreachableError(
                f"lost client {side.peer}: {error.strerror or error}"
            ) from None
        if count == 0:
            return received, time.monotonic() - start
        received += count
        pacer.moved(count)


# -- client ----------------------------------------------------------------------------


def _send(ctx: RunnerContext, *, side: rdv.PairSide, config: Settings, pacer: Pacer) -> Verdict:
    report = ctx.report
    connect = rdv.Deadline(config.connect_s)
    control = rdv.connect(side.peer_host, config.port, deadline=connect, peer=f"server {side.peer}")
    with control:
        rdv.send_line(control, f"HELLO {PROTOCOL} client")
        reply = rdv.recv_line(control, timeout=HANDSHAKE_TIMEOUT_S) or ""
        words = reply.split()
        if len(words) != 3 or words[0] != "SESSION" or not words[2].isdecimal():
            raise rdv.ProtocolError(
                f"server {side.peer} did not open a session (said {reply[:80]!r})"
            )
        data_port = int(words[2])
        data = rdv.connect(
            side.peer_host,
            data_port,
            deadline=rdv.Deadline(HANDSHAKE_TIMEOUT_S),
            peer=f"server {side.peer}",
        )
        with data:
            rdv.send_line(data, f"DATA {words[1]}")
            local, peer = data.getsockname()[0], data.getpeername()[0]
            report.metric("provenance", link_provenance(ctx.environ, local=local, peer=peer))
            start = time.monotonic()
            sent = _blast(data, seconds=config.seconds, pacer=pacer, side=side)
            data.shutdown(socket.SHUT_WR)
            info = tcp_info(data)
            ack = rdv.recv_line(control, timeout=ACK_TIMEOUT_S) or ""
            elapsed = time.monotonic() - start
        ack_words = ack.split()
        if len(ack_words) != 3 or ack_words[0] != "RECEIVED" or not ack_words[1].isdecimal():
            raise rdv.PeerUnreachableError(
                f"server {side.peer} never acknowledged the {sent} bytes sent (said {ack[:80]!r})"
            )
        acknowledged = int(ack_words[1])
        rdv.send_line(control, "BYE")
    report.metric("tcpBytesSent", sent)
    if acknowledged != sent:
        raise RunnerError(
            f"server {side.peer} acknowledged {acknowledged} of {sent} bytes: "
            "the transfer is not verified"
        )
    report.metric("tcpThroughputGbps", _gbps(sent, elapsed))
    if info is not None:
        report.metric("tcpRetransmits", info.total_retrans)
    else:
        report.unmeasurable("tcpRetransmits")
    if info is not None and info.rtt_us > 0:
        report.metric("tcpRttUs", info.rtt_us)
    else:
        report.unmeasurable("tcpRttUs")
    report.metric("elapsedS", elapsed)
    _evidence(report, local=local)
    return Passed()


def _blast(data: socket.socket, *, seconds: float, pacer: Pacer, side: rdv.PairSide) -> int:
    payload = memoryview(bytes(range(256)) * (CHUNK // 256))
    sent = 0
    end = time.monotonic() + seconds
    data.settimeout(max(seconds, 1.0) + ACK_TIMEOUT_S)
    while time.monotonic() < end:
        try:
            data.sendall(payload)
        except OSError as error:
            raise rdv.PeerUnreachableError(
                f"lost server {side.peer}: {error.strerror or error}"
            ) from None
        sent += len(payload)
        pacer.moved(len(payload))
    return sent
