"""The Pair session of the perftest runners (ib-write-bw, gpudirect-rdma, fabric-soak).

Why a session around perftest: ``ib_write_bw`` has a server and a client that must use
the same message size and queue pairs, and each side's pinned memory is limited by its
own RLIMIT_MEMLOCK. So the two runners agree first, over a control connection on the
readiness port (default 18510, where the Pair server's readiness probe points):

``HELLO rdma-pair 1 <kind> <client memlock|unlimited>`` (client) ->
``PLAN <tool> <size> <qps> <iterations>`` or ``REFUSE <why>`` (server, which fits the
registration to the smaller of the two limits), then per round ``GO <r>`` (the server's
tool is started and listens on the perftest port, default 18515) ->
``DONE <r> <exit> MORE|END`` (the client ran its tool) ... and, for a runner whose
server has findings of its own (fabric-soak: its port's error counters), the server's
``SUMMARY <key>=<value> ...`` after ``END``, which the client folds into its verdict.
Why the summary: the client's verdict decides the Pair (F2); a server still printing
when the client exits is recorded "did not report", so a fault only the server can see
(the counters of its own port) would be lost to a race instead of failing the link.

Every wait is bounded; a peer that never comes is a :class:`PeerUnreachableError`
naming it (exit 3), never a slow link. The client retries its tool only while perftest
says it could not reach the server's port (the server's tool may still be binding).
"""

from __future__ import annotations

import contextlib
import functools
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from runners.sdk import rendezvous as rdv
from runners.sdk.entry import RunnerContext
from runners.sdk.link import link_provenance
from runners.sdk.outcome import RunnerError
from runners.sdk.perftest import connect_failed
from runners.sdk.protocols import Fabric, RdmaPort, ToolResult

PROTOCOL = "rdma-pair 2"
DEFAULT_READINESS_PORT = 18510
DEFAULT_PERFTEST_PORT = 18515
DEFAULT_CONNECT_SECONDS = 120.0
DEFAULT_TOOL_SECONDS = 120.0
SERVER_MARGIN_S = 60.0
HANDSHAKE_TIMEOUT_S = 10.0
CLIENT_TOOL_ATTEMPTS = 10


@dataclass(frozen=True)
class PairSettings:
    readiness_port: int
    perftest_port: int
    connect_s: float
    server_bound_s: float
    tool_timeout_s: float
    device: str | None


def pair_settings(ctx: RunnerContext, *, prefix: str) -> PairSettings:
    env = ctx.env
    readiness = int(
        env.number(f"BURNIN_{prefix}_PORT", default=DEFAULT_READINESS_PORT, low=1024, high=65535)
    )
    perftest = int(
        env.number(
            f"BURNIN_{prefix}_PERFTEST_PORT", default=DEFAULT_PERFTEST_PORT, low=1024, high=65535
        )
    )
    if perftest == readiness:
        raise RunnerError(f"BURNIN_{prefix}_PERFTEST_PORT must differ from the readiness port")
    connect_s = env.number(
        f"BURNIN_{prefix}_CONNECT_SECONDS", default=DEFAULT_CONNECT_SECONDS, low=0.5, high=3600
    )
    tool_s = env.number(
        f"BURNIN_{prefix}_TOOL_SECONDS", default=DEFAULT_TOOL_SECONDS, low=1, high=3600
    )
    budget = env.duration_budget_s
    bound = (budget if budget is not None else connect_s + tool_s) + SERVER_MARGIN_S
    device = ctx.environ.get("BURNIN_RDMA_DEVICE", "").strip() or None
    return PairSettings(
        readiness_port=readiness,
        perftest_port=perftest,
        connect_s=connect_s,
        server_bound_s=bound,
        tool_timeout_s=tool_s,
        device=device,
    )


def active_port(fabric: Fabric, *, device: str | None) -> RdmaPort:
    """The RDMA port to measure: ``BURNIN_RDMA_DEVICE``'s, else the first ACTIVE one."""
    ports = fabric.rdma_ports()
    if device is not None:
        ports = [p for p in ports if p.device == device]
        if not ports:
            raise RunnerError(f"BURNIN_RDMA_DEVICE={device}: no such RDMA device on this node")
    for port in ports:
        if port.state == "ACTIVE":
            return port
    if not ports:
        raise RunnerError("no RDMA device on this node (/sys/class/infiniband is empty)")
    states = ", ".join(f"{p.device}:{p.port} {p.state}" for p in ports)
    raise RunnerError(f"no ACTIVE RDMA port ({states}): the link is down, nothing to measure")


@dataclass(frozen=True)
class Plan:
    tool: str
    size: int
    queue_pairs: int
    iterations: int

    def encode(self) -> str:
        return f"PLAN {self.tool} {self.size} {self.queue_pairs} {self.iterations}"

    @classmethod
    def decode(cls, line: str, *, peer: str) -> Plan:
        words = line.split()
        if (
            len(words) == 5
            and words[0] == "PLAN"
            and words[1] in ("ib_write_bw", "ib_write_lat")
            and all(w.isdecimal() for w in words[2:])
        ):
            return cls(words[1], int(words[2]), int(words[3]), int(words[4]))
        raise rdv.ProtocolError(f"server {peer} sent no usable plan (said {line[:120]!r})")


def tool_argv(
    plan: Plan, *, port: RdmaPort, perftest_port: int, host: str | None, extra: tuple[str, ...]
) -> list[str]:
    """perftest's command line: device and port, the agreed size/QPs/iterations, Gb/s."""
    argv = [plan.tool, "-d", port.device, "-i", str(port.port), "-p", str(perftest_port)]
    argv += ["-s", str(plan.size), "-n", str(plan.iterations), "-F"]
    if plan.tool == "ib_write_bw":
        argv += ["-q", str(plan.queue_pairs), "--report_gbits"]
    argv += list(extra)
    if host is not None:
        argv.append(host)
    return argv


@dataclass(frozen=True)
class Round:
    index: int
    result: ToolResult


@dataclass(frozen=True)
class Session:
    plan: Plan
    rounds: list[Round]
    provenance: str
    #: The server's ``SUMMARY`` fields (client side, when asked for), else empty.
    peer_summary: dict[str, str] = field(default_factory=dict)


def encode_summary(fields: dict[str, str]) -> str:
    """``SUMMARY k=v ...``: keys and values without whitespace or ``=`` in keys."""
    for key, value in fields.items():
        if not key or any(c.isspace() or c == "=" for c in key) or any(c.isspace() for c in value):
            raise ValueError(f"summary field {key!r}={value!r} is not one word")
    return " ".join(["SUMMARY", *(f"{k}={v}" for k, v in fields.items())])


def decode_summary(line: str | None, *, peer: str) -> dict[str, str]:
    words = (line or "").split()
    if not words or words[0] != "SUMMARY" or not all("=" in w[1:] for w in words[1:]):
        raise rdv.ProtocolError(
            f"{peer} ended the session without its summary (said {(line or '')[:80]!r})"
        )
    return dict(w.split("=", 1) for w in words[1:])


class _ToolThread:
    def __init__(self, fn: Callable[[], ToolResult]) -> None:
        self.result: ToolResult | None = None
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(fn,), daemon=True)
        self._thread.start()

    def _run(self, fn: Callable[[], ToolResult]) -> None:
        try:
            self.result = fn()
        except BaseException as error:  # re-raised in the runner's thread by join()
            self.error = error

    def join(self, timeout: float) -> ToolResult:
        self._thread.join(timeout=timeout)
        if self._thread.is_alive():
            raise RunnerError(f"the server's perftest did not finish within {timeout:.0f} s")
        if self.error is not None:
            raise self.error
        assert self.result is not None
        return self.result


def serve(
    ctx: RunnerContext,
    *,
    kind: str,
    side: rdv.PairSide,
    settings: PairSettings,
    propose: Callable[[int | None], Plan],
    port: RdmaPort,
    extra: tuple[str, ...] = (),
    summary: Callable[[], dict[str, str]] | None = None,
) -> Session:
    """The server side: agree the plan, then run one server tool per round the client
    asks; with ``summary``, send its fields once the last round's tool has ended."""
    fabric = ctx.platform().fabric()
    deadline = rdv.Deadline(settings.server_bound_s)
    address = rdv.listen_address(
        ctx.environ, own_name=rdv.sibling_name(side.peer_host, rdv.SERVER), peer_host=side.peer_host
    )
    with rdv.listener(address, settings.readiness_port) as server:
        ctx.report.note(
            f"{kind} server listening on {address}:{settings.readiness_port} "
            f"(perftest {settings.perftest_port})"
        )
        control, peer_limit = _await_client(server, deadline=deadline, side=side, kind=kind)
        with control:
            local, peer = str(control.getsockname()[0]), str(control.getpeername()[0])
            try:
                plan = propose(peer_limit)
            except RunnerError as refusal:
                with contextlib.suppress(OSError):
                    rdv.send_line(control, f"REFUSE {str(refusal)[:1000]}")
                raise
            rdv.send_line(control, plan.encode())
            rounds: list[Round] = []
            index = 0
            while True:
                argv = tool_argv(
                    plan, port=port, perftest_port=settings.perftest_port, host=None, extra=extra
                )
                tool = _ToolThread(
                    functools.partial(
                        fabric.run_tool,
                        argv,
                        env={"BURNIN_LISTEN_ADDRESS": address},
                        timeout_s=settings.tool_timeout_s,
                    )
                )
                rdv.send_line(control, f"GO {index}")
                line = rdv.recv_line(
                    control, timeout=min(settings.tool_timeout_s * 2, deadline.remaining())
                )
                words = (line or "").split()
                if len(words) != 4 or words[:2] != ["DONE", str(index)]:
                    raise rdv.PeerUnreachableError(
                        f"client {side.peer} stopped during round {index} "
                        f"(said {(line or '')[:80]!r})"
                    )
                rounds.append(Round(index, tool.join(settings.tool_timeout_s + 5)))
                if words[3] != "MORE":
                    break
                index += 1
            if summary is not None:
                rdv.send_line(control, encode_summary(summary()))
    return Session(
        plan=plan, rounds=rounds, provenance=link_provenance(ctx.environ, local=local, peer=peer)
    )


def _await_client(
    server: socket.socket, *, deadline: rdv.Deadline, side: rdv.PairSide, kind: str
) -> tuple[socket.socket, int | None]:
    """The first connection that opens with this runner's greeting, and its memlock limit."""
    while True:
        conn = rdv.accept(server, deadline=deadline)
        if conn is None:
            raise rdv.PeerUnreachableError(
                f"client {side.peer} never connected within {deadline.seconds:g}s"
            )
        line = rdv.recv_line(conn, timeout=min(HANDSHAKE_TIMEOUT_S, deadline.remaining())) or ""
        words = line.split()
        if len(words) == 5 and " ".join(words[:3]) == f"HELLO {PROTOCOL}" and words[3] == kind:
            if words[4] == "unlimited":
                return conn, None
            if words[4].isdecimal():
                return conn, int(words[4])
        conn.close()  # a readiness probe or a stranger


def join(
    ctx: RunnerContext,
    *,
    kind: str,
    side: rdv.PairSide,
    settings: PairSettings,
    limit: int | None,
    port: RdmaPort,
    more: Callable[[int, ToolResult], bool],
    extra: tuple[str, ...] = (),
    summary: bool = False,
) -> Session:
    """The client side: send our limit, take the plan, run the client tool per round;
    with ``summary``, wait (bounded) for the server's fields: none is exit 3."""
    fabric = ctx.platform().fabric()
    peer_name = f"server {side.peer}"
    deadline = rdv.Deadline(settings.connect_s)
    hello = f"HELLO {PROTOCOL} {kind} {'unlimited' if limit is None else limit}"
    while True:
        control = rdv.connect(
            side.peer_host, settings.readiness_port, deadline=deadline, peer=peer_name
        )
        rdv.send_line(control, hello)
        reply = rdv.recv_line(control, timeout=HANDSHAKE_TIMEOUT_S) or ""
        if reply or deadline.expired():
            break
        # Closed without a word: the listener of the server's previous session was going
        # away; the next session's listener is coming. Bounded by the connect deadline.
        control.close()
        time.sleep(0.1)
    with control:
        local, peer = str(control.getsockname()[0]), str(control.getpeername()[0])
        if reply.startswith("REFUSE "):
            raise RunnerError(f"{peer_name} refused the session: {reply[7:]}")
        plan = Plan.decode(reply, peer=peer_name)
        rounds: list[Round] = []
        index = 0
        while True:
            go = rdv.recv_line(control, timeout=settings.tool_timeout_s) or ""
            if go != f"GO {index}":
                raise rdv.PeerUnreachableError(
                    f"{peer_name} never started round {index} (said {go[:80]!r})"
                )
            argv = tool_argv(
                plan,
                port=port,
                perftest_port=settings.perftest_port,
                host=side.peer_host,
                extra=extra,
            )
            result = _client_tool(fabric, argv, settings=settings)
            again = more(index, result)
            rdv.send_line(control, f"DONE {index} {result.exit_code} {'MORE' if again else 'END'}")
            rounds.append(Round(index, result))
            if not again:
                break
            index += 1
        fields: dict[str, str] = {}
        if summary:
            # The server first waits for its last tool (bounded by the tool timeout).
            timeout = settings.tool_timeout_s + 5 + HANDSHAKE_TIMEOUT_S
            fields = decode_summary(rdv.recv_line(control, timeout=timeout), peer=peer_name)
    return Session(
        plan=plan,
        rounds=rounds,
        provenance=link_provenance(ctx.environ, local=local, peer=peer),
        peer_summary=fields,
    )


def _client_tool(fabric: Fabric, argv: list[str], *, settings: PairSettings) -> ToolResult:
    for attempt in range(CLIENT_TOOL_ATTEMPTS):
        result = fabric.run_tool(argv, env={}, timeout_s=settings.tool_timeout_s)
        if result.exit_code == 0 or not connect_failed(result.stdout + result.stderr):
            return result
        time.sleep(0.1 * (attempt + 1))
    return result
