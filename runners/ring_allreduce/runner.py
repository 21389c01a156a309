"""ring-allreduce: a ring all-reduce over TCP across a Group's ranks, verified exactly.

Group only (``BURNIN_RANK``/``BURNIN_NRANKS``/``BURNIN_ROOT_HOST``). Rendezvous at rank
0: it listens on ``BURNIN_RING_ALLREDUCE_PORT`` (default 18530, its readiness port);
every worker opens its own ring listener, registers ``rank host port`` with rank 0, and
rank 0 broadcasts the ring (and its vector length and iteration count, so every rank
runs the same collective). Each rank then connects to its successor, accepts its
predecessor, and runs the ring algorithm (reduce-scatter, then all-gather, n-1 steps
each) over 64-bit lanes whose content is deterministic per rank, and checks the result
against the exact sum: ``miscompares`` counts wrong lanes over the timed iterations.

Metrics (nccl-tests definitions): ``algBandwidthGBs`` = bytes / time per all-reduce,
``busBandwidthGBs`` = algbw * 2(n-1)/n, ``latencyUs`` = time per all-reduce. Every rank
reports its own; the verdict layer folds them (F7). A rank that never registers, a
peer lost mid-collective or a malformed message is exit 3 naming the rank; wrong
values are exit 1 (a measured corruption). Every wait is bounded by
``BURNIN_RING_ALLREDUCE_RENDEZVOUS_SECONDS`` (default 300, the Group's grace) or the
duration budget.
"""

from __future__ import annotations

import contextlib
import functools
import socket
import threading
import time
from dataclasses import dataclass

from runners.ring_allreduce.vectors import MAX_RANKS, Vectors, add, chunk_bounds, miscompares
from runners.sdk import rendezvous as rdv
from runners.sdk.entry import RunnerContext
from runners.sdk.link import (
    CORRUPT_DATA,
    NO_RENDEZVOUS,
    SLOW_LINK,
    SLOW_LINK_BYTES_PER_S,
    Pacer,
    link_faults,
    link_provenance,
)
from runners.sdk.outcome import Failed, Passed, RunnerError, Verdict

RUNNER = "ring-allreduce"
PROTOCOL = "ring-allreduce 1"
DEFAULT_PORT = 18530
DEFAULT_ELEMENTS = 1 << 21
DEFAULT_ITERATIONS = 10
DEFAULT_RENDEZVOUS_SECONDS = 300.0
DEFAULT_COLLECTIVE_SECONDS = 600.0
HANDSHAKE_TIMEOUT_S = 5.0
#: Extra wait for rank 0's ring (it may still be waiting for a slower rank to register).
BROADCAST_MARGIN_S = 15.0


@dataclass(frozen=True)
class Member:
    rank: int
    host: str
    port: int


@dataclass(frozen=True)
class Ring:
    elements: int
    iterations: int
    members: tuple[Member, ...]

    def encode(self) -> str:
        hosts = " ".join(f"{m.host} {m.port}" for m in self.members)
        return f"RING {self.elements} {self.iterations} {hosts}"

    @classmethod
    def decode(cls, line: str, *, nranks: int) -> Ring:
        words = line.split()
        if len(words) != 3 + 2 * nranks or words[0] != "RING":
            raise rdv.ProtocolError(f"rank 0 sent a malformed ring ({line[:120]!r})")
        if not all(w.isdecimal() for w in words[1:3] + words[4::2]):
            raise rdv.ProtocolError(f"rank 0 sent a malformed ring ({line[:120]!r})")
        members = tuple(
            Member(rank=i, host=words[3 + 2 * i], port=int(words[4 + 2 * i])) for i in range(nranks)
        )
        return cls(elements=int(words[1]), iterations=int(words[2]), members=members)


def measure(ctx: RunnerContext) -> Verdict:
    me = rdv.group_rank(ctx.environ, runner=RUNNER)
    if me.nranks > MAX_RANKS:
        raise RunnerError(f"BURNIN_NRANKS={me.nranks} is above {MAX_RANKS}")
    env = ctx.env
    port = int(env.number("BURNIN_RING_ALLREDUCE_PORT", default=DEFAULT_PORT, low=1024, high=65535))
    rendezvous_s = env.number(
        "BURNIN_RING_ALLREDUCE_RENDEZVOUS_SECONDS",
        default=DEFAULT_RENDEZVOUS_SECONDS,
        low=0.5,
        high=3600,
    )
    faults = link_faults(ctx.environ)
    if NO_RENDEZVOUS in faults:
        time.sleep(rendezvous_s)  # as long as the others wait for it
        raise RunnerError(f"simulated fault {NO_RENDEZVOUS}: rank {me.rank} never took part")
    own_name = me.root_host if me.rank == 0 else rdv.sibling_name(me.root_host, f"rank-{me.rank}")
    address = rdv.listen_address(
        ctx.environ, own_name=own_name, peer_host=None if me.rank == 0 else me.root_host
    )
    deadline = rdv.Deadline(rendezvous_s)
    with rdv.listener(address, 0, backlog=4) as ring_server:
        ring_port = int(ring_server.getsockname()[1])
        if me.rank == 0:
            elements = int(
                env.number(
                    "BURNIN_RING_ALLREDUCE_ELEMENTS",
                    default=DEFAULT_ELEMENTS,
                    low=me.nranks,
                    high=1 << 27,
                )
            )
            iterations = int(
                env.number(
                    "BURNIN_RING_ALLREDUCE_ITERATIONS",
                    default=DEFAULT_ITERATIONS,
                    low=1,
                    high=10000,
                )
            )
            ring = _gather(
                me,
                address=address,
                port=port,
                deadline=deadline,
                first=Member(rank=0, host=address, port=ring_port),
                elements=elements,
                iterations=iterations,
            )
        else:
            ring = _register(me, address=address, port=port, ring_port=ring_port, deadline=deadline)
        budget = env.duration_budget_s or DEFAULT_COLLECTIVE_SECONDS
        return _collective(
            ctx, me=me, ring=ring, ring_server=ring_server, budget_s=budget, faults=faults
        )


# -- rendezvous ------------------------------------------------------------------------


def _gather(
    me: rdv.GroupRank,
    *,
    address: str,
    port: int,
    deadline: rdv.Deadline,
    first: Member,
    elements: int,
    iterations: int,
) -> Ring:
    """Rank 0: accept every worker's registration, then broadcast the ring."""
    members: dict[int, Member] = {0: first}
    controls: list[socket.socket] = []
    with rdv.listener(address, port) as server:
        try:
            while len(members) < me.nranks:
                conn = rdv.accept(server, deadline=deadline)
                if conn is None:
                    missing = sorted(set(range(me.nranks)) - set(members))
                    names = ", ".join(str(r) for r in missing)
                    for control in controls:
                        with contextlib.suppress(OSError):
                            rdv.send_line(control, f"ABORT {','.join(map(str, missing))}")
                    raise rdv.PeerUnreachableError(
                        f"rank(s) {names} of {me.nranks} never registered with rank 0 within "
                        f"{deadline.seconds:g}s"
                    )
                member = _registration(conn, me=me, members=members, deadline=deadline)
                if member is None:
                    conn.close()
                    continue
                members[member.rank] = member
                controls.append(conn)
            ring = Ring(
                elements=elements,
                iterations=iterations,
                members=tuple(members[r] for r in range(me.nranks)),
            )
            for control in controls:
                rdv.send_line(control, ring.encode())
            return ring
        finally:
            for control in controls:
                control.close()


def _registration(
    conn: socket.socket, *, me: rdv.GroupRank, members: dict[int, Member], deadline: rdv.Deadline
) -> Member | None:
    """A worker's ``HELLO``, or None for a probe, a stranger or a duplicate."""
    line = rdv.recv_line(conn, timeout=min(HANDSHAKE_TIMEOUT_S, deadline.remaining()))
    words = (line or "").split()
    if len(words) != 7 or " ".join(words[:3]) != f"HELLO {PROTOCOL}":
        return None
    rank_text, nranks_text, host, port_text = words[3:]
    if not (rank_text.isdecimal() and nranks_text.isdecimal() and port_text.isdecimal()):
        return None
    rank = int(rank_text)
    if int(nranks_text) != me.nranks or not 0 < rank < me.nranks or rank in members:
        with contextlib.suppress(OSError):
            rdv.send_line(conn, f"REFUSED rank {rank} of {nranks_text} (duplicate or out of range)")
        return None
    return Member(rank=rank, host=host, port=int(port_text))


def _register(
    me: rdv.GroupRank, *, address: str, port: int, ring_port: int, deadline: rdv.Deadline
) -> Ring:
    """A worker: register with rank 0 and wait for the ring it broadcasts."""
    with rdv.connect(me.root_host, port, deadline=deadline, peer=f"rank 0 {me.root}") as control:
        host = address if address != rdv.ALL_ADDRESSES else str(control.getsockname()[0])
        rdv.send_line(control, f"HELLO {PROTOCOL} {me.rank} {me.nranks} {host} {ring_port}")
        line = rdv.recv_line(control, timeout=deadline.remaining() + BROADCAST_MARGIN_S)
    if line is None:
        raise rdv.PeerUnreachableError(f"rank 0 {me.root} never broadcast the ring")
    if line.startswith("ABORT "):
        raise rdv.PeerUnreachableError(
            f"rank 0 gave up the rendezvous: rank(s) {line[6:].strip()[:200]} never registered"
        )
    if line.startswith("REFUSED "):
        raise rdv.ProtocolError(f"rank 0 refused rank {me.rank}: {line[:200]}")
    return Ring.decode(line, nranks=me.nranks)


def _link(
    me: rdv.GroupRank, *, ring: Ring, ring_server: socket.socket, deadline: rdv.Deadline
) -> tuple[socket.socket, socket.socket]:
    """Connect to the successor, accept the predecessor (``PEER <rank>`` first)."""
    nxt = ring.members[(me.rank + 1) % me.nranks]
    prev = (me.rank - 1) % me.nranks
    out = rdv.connect(nxt.host, nxt.port, deadline=deadline, peer=f"rank {nxt.rank}")
    rdv.send_line(out, f"PEER {me.rank}")
    while True:
        conn = rdv.accept(ring_server, deadline=deadline)
        if conn is None:
            out.close()
            raise rdv.PeerUnreachableError(
                f"rank {prev} never joined the ring within {deadline.seconds:g}s"
            )
        if (
            rdv.recv_line(conn, timeout=min(HANDSHAKE_TIMEOUT_S, deadline.remaining()))
            == f"PEER {prev}"
        ):
            return out, conn
        conn.close()


# -- the collective ----------------------------------------------------------------------


class _Sender:
    """Sends one chunk on a thread while the caller receives (full duplex, no deadlock)."""

    def __init__(self, sock: socket.socket, data: bytes, *, pacer: Pacer, peer: str) -> None:
        self.error: str | None = None
        self._thread = threading.Thread(
            target=self._run, args=(sock, data, pacer, peer), daemon=True
        )
        self._thread.start()

    def _run(self, sock: socket.socket, data: bytes, pacer: Pacer, peer: str) -> None:
        view = memoryview(data)
        step = 64 * 1024 if pacer.rate is not None else len(view) or 1
        try:
            for start in range(0, len(view), step):
                piece = view[start : start + step]
                sock.sendall(piece)
                pacer.moved(len(piece))
        except OSError as error:
            self.error = f"lost {peer}: {error.strerror or error}"

    def join(self, *, deadline: rdv.Deadline) -> None:
        self._thread.join(timeout=deadline.remaining())
        if self._thread.is_alive():
            raise rdv.PeerUnreachableError("a send to the next rank did not finish in time")
        if self.error is not None:
            raise rdv.PeerUnreachableError(self.error)


def _corrupt(chunk: bytes) -> bytes:
    if not chunk:
        return chunk
    damaged = bytearray(chunk)
    damaged[0] ^= 0x01
    return bytes(damaged)


def _allreduce(
    me: rdv.GroupRank,
    *,
    data: bytes,
    bounds: list[tuple[int, int]],
    out: socket.socket,
    inp: socket.socket,
    deadline: rdv.Deadline,
    pacer: Pacer,
    corrupt: bool,
) -> bytes:
    n, r = me.nranks, me.rank
    chunks = [data[a:b] for a, b in bounds]
    nxt, prev = f"rank {(r + 1) % n}", f"rank {(r - 1) % n}"

    def exchange(send_index: int, recv_index: int) -> bytes:
        payload = chunks[send_index]
        sender = _Sender(out, _corrupt(payload) if corrupt else payload, pacer=pacer, peer=nxt)
        size = bounds[recv_index][1] - bounds[recv_index][0]
        received = rdv.recv_exact(inp, size, deadline=deadline, peer=prev)
        sender.join(deadline=deadline)
        return received

    for step in range(n - 1):  # reduce-scatter
        recv_index = (r - step - 1) % n
        chunks[recv_index] = add(chunks[recv_index], exchange((r - step) % n, recv_index))
    for step in range(n - 1):  # all-gather
        recv_index = (r - step) % n
        chunks[recv_index] = exchange((r + 1 - step) % n, recv_index)
    return b"".join(chunks)


def _collective(
    ctx: RunnerContext,
    *,
    me: rdv.GroupRank,
    ring: Ring,
    ring_server: socket.socket,
    budget_s: float,
    faults: frozenset[str],
) -> Verdict:
    report = ctx.report
    deadline = rdv.Deadline(budget_s)
    vectors = Vectors(ring.elements)
    data, want = vectors.content(me.rank), vectors.expected(me.nranks)
    bounds = chunk_bounds(ring.elements, me.nranks)
    pacer = Pacer(SLOW_LINK_BYTES_PER_S if SLOW_LINK in faults else None)
    out, inp = _link(me, ring=ring, ring_server=ring_server, deadline=deadline)
    with out, inp:
        out.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        local, peer = str(out.getsockname()[0]), str(out.getpeername()[0])
        report.metric("provenance", link_provenance(ctx.environ, local=local, peer=peer))
        reduce_once = functools.partial(
            _allreduce,
            me,
            data=data,
            bounds=bounds,
            out=out,
            inp=inp,
            deadline=deadline,
            pacer=pacer,
            corrupt=CORRUPT_DATA in faults,
        )
        reduce_once()  # warm-up, not timed
        wrong = 0
        start = time.monotonic()
        for _ in range(ring.iterations):
            wrong += miscompares(reduce_once(), want)
        elapsed = time.monotonic() - start
    per_op = elapsed / ring.iterations
    algbw = vectors.size / per_op / 1e9
    report.metric("ringRanks", me.nranks)
    report.metric("allreduceBytes", vectors.size)
    report.metric("iterationsCompleted", ring.iterations)
    report.metric("algBandwidthGBs", algbw)
    report.metric("busBandwidthGBs", algbw * 2 * (me.nranks - 1) / me.nranks)
    report.metric("latencyUs", per_op * 1e6)
    report.metric("miscompares", wrong)
    report.metric("elapsedS", elapsed)
    if wrong:
        return Failed(
            f"rank {me.rank}: {wrong} of {ring.elements * ring.iterations} reduced elements "
            "differ from the exact sum"
        )
    return Passed()
