"""nccl: nccl-tests collectives on one node's GPUs (Node), or across a Pair or a Group.

Node scope runs ``<collective>_perf -g <all GPUs>`` in one process (needs >= 2 GPUs; one
GPU is a declared skip). Pair and Group run one MPI job over every node: rank 0 (the
Pair server, or Group rank 0) listens on ``BURNIN_NCCL_PORT`` (default 18540, its
readiness port), every other rank registers there with its exec port and GPU count,
and rank 0 runs ``mpirun`` with our rsh agent (``runners/nccl/launch.py``), so the MPI
daemons start without ssh. Only rank 0 reports the collective's metrics; the other
ranks report that they took part. A rank that never registers is exit 3 naming it.

The transport is checked, never assumed (``runners/nccl/parse.py``): across nodes the
run expects the RDMA fabric (``BURNIN_NCCL_EXPECT_TRANSPORT``: ``fabric`` by default,
or ``ib``, ``roce``, ``socket`` to qualify TCP on purpose, ``any``), and a TCP-socket
fallback when the fabric is expected is exit 3: a socket number for an RDMA test is a
measurement of a path nobody was qualifying. The runner never sets
``NCCL_IB_DISABLE`` or any other fallback, and refuses to run when one is set. NCCL's
``ibv_reg_mr ... Cannot allocate memory`` is exit 3 naming RLIMIT_MEMLOCK, its value
and the fix. Wrong elements (``#wrong``, out-of-bounds) are exit 1.

On an AMD node the same runner drives RCCL through rccl-tests (same binaries, table and
``NCCL_*`` variables; ``Containerfile.rocm``): the GPUs are opened through amdsmi and HIP
with the allocation read from ``amd.com/gpu``, and the tests see exactly those GPUs
through ``HIP_VISIBLE_DEVICES`` (HIP's variable; ``CUDA_VISIBLE_DEVICES`` is never set
there). The build must be the node's vendor's: a CUDA nccl-tests image on an AMD node,
or the ROCm one on an NVIDIA node, is exit 3 naming the image it needs, whether the
image declares its build (``BURNIN_NCCL_BUILD``) or the library's version line says it.
"""

from __future__ import annotations

import contextlib
import secrets
import socket
import sys
import threading
import time
from dataclasses import dataclass

from runners.nccl.launch import AGENT_MAP_ENV, encode_map, serve_exec
from runners.nccl.parse import (
    CUDA_BUILD,
    FABRIC_TRANSPORTS,
    MEMLOCK_FAILURE,
    ROCE,
    ROCM_BUILD,
    SOCKET,
    NcclOutputError,
    NcclReport,
    build_of,
    parse_report,
)
from runners.sdk import rendezvous as rdv
from runners.sdk.entry import RunnerContext
from runners.sdk.gpus import DeviceSlot, open_node_gpus, select_devices
from runners.sdk.link import NO_RENDEZVOUS, link_faults, link_provenance
from runners.sdk.memlock import memlock_error
from runners.sdk.outcome import DeclaredSkip, Failed, Passed, RunnerError, Verdict
from runners.sdk.protocols import AMD_VENDOR, NVIDIA_VENDOR, ToolResult

RUNNER = "nccl"
PROTOCOL = "nccl 1"
DEFAULT_PORT = 18540
DEFAULT_RENDEZVOUS_SECONDS = 300.0
DEFAULT_TOOL_SECONDS = 900.0
HANDSHAKE_TIMEOUT_S = 5.0
COLLECTIVES = (
    "all_reduce",
    "all_gather",
    "reduce_scatter",
    "broadcast",
    "reduce",
    "alltoall",
    "sendrecv",
)
EXPECTATIONS = ("fabric", "ib", "roce", "socket", "any")
#: Settings that make NCCL fall back from the fabric; a run that finds one refuses.
FALLBACK_SETTINGS = ("NCCL_IB_DISABLE", "NCCL_NET_DISABLE")
#: What the image says its collective tests were built against (``cuda`` or ``rocm``).
BUILD_ENV = "BURNIN_NCCL_BUILD"
#: The build each vendor's GPUs need.
BUILD_BY_VENDOR = {NVIDIA_VENDOR: CUDA_BUILD, AMD_VENDOR: ROCM_BUILD}
#: The image that carries each build (runners/catalog.py names them; images.py resolves).
IMAGE_BY_BUILD = {
    CUDA_BUILD: "ghcr.io/glimmer-ai/glimmer-runner-nccl (nccl-tests on NCCL)",
    ROCM_BUILD: "ghcr.io/glimmer-ai/glimmer-runner-nccl-rocm (rccl-tests on RCCL)",
}
#: HIP's device selection; the runner sets it on AMD and nothing else there.
HIP_DEVICES_ENV = "HIP_VISIBLE_DEVICES"


@dataclass(frozen=True)
class Settings:
    collective: str
    expect: str
    min_bytes: str
    max_bytes: str
    iterations: int
    warmup: int
    port: int
    rendezvous_s: float
    tool_s: float


def settings(ctx: RunnerContext, *, multi_node: bool) -> Settings:
    env = ctx.env
    collective = env.choice("BURNIN_VARIANT_COLLECTIVE", default="all_reduce", allowed=COLLECTIVES)
    expect = env.choice(
        "BURNIN_NCCL_EXPECT_TRANSPORT",
        default="fabric" if multi_node else "any",
        allowed=EXPECTATIONS,
    )
    sizes = []
    for name, default in (("BURNIN_NCCL_MIN_BYTES", "8"), ("BURNIN_NCCL_MAX_BYTES", "8G")):
        text = ctx.environ.get(name, "").strip() or default
        if not (text[:-1] if text[-1] in "KMG" else text).isdecimal():
            raise RunnerError(f"{name}={text!r} is not a size like 8, 64K, 128M, 8G")
        sizes.append(text)
    budget = env.duration_budget_s
    return Settings(
        collective=collective,
        expect=expect,
        min_bytes=sizes[0],
        max_bytes=sizes[1],
        iterations=int(env.number("BURNIN_NCCL_ITERATIONS", default=20, low=1, high=10000)),
        warmup=int(env.number("BURNIN_NCCL_WARMUP", default=5, low=0, high=1000)),
        port=int(env.number("BURNIN_NCCL_PORT", default=DEFAULT_PORT, low=1024, high=65535)),
        rendezvous_s=env.number(
            "BURNIN_NCCL_RENDEZVOUS_SECONDS",
            default=DEFAULT_RENDEZVOUS_SECONDS,
            low=0.5,
            high=3600,
        ),
        tool_s=budget if budget is not None else DEFAULT_TOOL_SECONDS,
    )


def _test_argv(config: Settings, *, gpus: int) -> list[str]:
    return [
        f"{config.collective}_perf",
        "-b",
        config.min_bytes,
        "-e",
        config.max_bytes,
        "-f",
        "2",
        "-g",
        str(gpus),
        "-c",
        "1",
        "-n",
        str(config.iterations),
        "-w",
        str(config.warmup),
    ]


def _tool_env(ctx: RunnerContext, config: Settings) -> dict[str, str]:
    """NCCL's own account of its transport, and a refusal of any fallback already set."""
    if config.expect != "socket":
        for name in FALLBACK_SETTINGS:
            value = ctx.environ.get(name, "").strip()
            if value and value != "0":
                raise RunnerError(
                    f"{name}={value} is set: NCCL would fall back from the fabric and measure "
                    "TCP sockets; unset it (or set BURNIN_NCCL_EXPECT_TRANSPORT=socket to "
                    "qualify TCP on purpose)"
                )
    return {"NCCL_DEBUG": "INFO", "NCCL_DEBUG_SUBSYS": "INIT,NET"}


def refuse_foreign_build(*, vendor: str, build: str, evidence: str) -> None:
    """Exit 3 when the collective tests were built for the other vendor's GPUs."""
    wanted = BUILD_BY_VENDOR[vendor]
    if build != wanted:
        raise RunnerError(
            f"this image's collective tests are the {build} build ({evidence}) but this "
            f"node's GPUs are {vendor}: they need the {wanted} build, "
            f"{IMAGE_BY_BUILD[wanted]} (imagesByVendor; docs/vendors/amd.md)"
        )


def _declared_build(ctx: RunnerContext, *, vendor: str) -> None:
    text = ctx.environ.get(BUILD_ENV, "").strip().lower()
    if not text:
        return
    if text not in IMAGE_BY_BUILD:
        raise RunnerError(f"{BUILD_ENV}={text!r} names no build (known: cuda, rocm)")
    refuse_foreign_build(vendor=vendor, build=text, evidence=f"{BUILD_ENV}={text}")


def open_devices(ctx: RunnerContext) -> tuple[str, list[DeviceSlot], int]:
    """The node's vendor, the GPUs to measure and how many; the image's build checked
    first. AMD opens amdsmi and HIP together (their counts must agree, allocation from
    ``amd.com/gpu``); NVIDIA reads NVML only (the CUDA image has no PyTorch)."""
    platform = ctx.platform()
    vendor = platform.vendor()
    _declared_build(ctx, vendor=vendor)
    if vendor == AMD_VENDOR:
        gpus = open_node_gpus(platform=platform, env=ctx.env)
        return vendor, gpus.slots, gpus.visible
    slots, visible = select_devices(nvml=platform.nvml(), allocated=ctx.env.allocated_gpus)
    return vendor, slots, visible


def device_env(*, vendor: str, slots: list[DeviceSlot]) -> dict[str, str]:
    """The tests' device selection: ``HIP_VISIBLE_DEVICES`` on AMD (never
    ``CUDA_VISIBLE_DEVICES`` there); on NVIDIA the container runtime's selection stands."""
    if vendor == AMD_VENDOR:
        return {HIP_DEVICES_ENV: ",".join(str(slot.index) for slot in slots)}
    return {}


def measure(ctx: RunnerContext) -> Verdict:
    environ = ctx.environ
    if environ.get(rdv.RANK, "").strip() or environ.get(rdv.NRANKS, "").strip():
        me = rdv.group_rank(environ, runner=RUNNER)
        return _multi_node(
            ctx,
            rank=me.rank,
            nranks=me.nranks,
            root=me.root_host,
            root_name=me.root,
            own_label=f"rank-{me.rank}",
        )
    if environ.get(rdv.ROLE, "").strip():
        side = rdv.pair_side(environ, runner=RUNNER)
        if side.role == rdv.SERVER:
            return _multi_node(
                ctx, rank=0, nranks=2, root=None, root_name="", own_label="", peer=side.peer_host
            )
        return _multi_node(
            ctx,
            rank=1,
            nranks=2,
            root=side.peer_host,
            root_name=f"server {side.peer}",
            own_label=rdv.CLIENT,
        )
    return _node(ctx)


def _node(ctx: RunnerContext) -> Verdict:
    config = settings(ctx, multi_node=False)
    vendor, slots, visible = open_devices(ctx)
    ctx.report.metric("devicesVisible", visible)
    if visible < 2:
        raise DeclaredSkip(f"one GPU ({slots[0].name}): no intra-node collective to measure")
    env = {**_tool_env(ctx, config), **device_env(vendor=vendor, slots=slots)}
    result = (
        ctx.platform()
        .fabric()
        .run_tool(_test_argv(config, gpus=visible), env=env, timeout_s=config.tool_s)
    )
    return _conclude(ctx, config=config, result=result, multi_node=False)


# -- Pair and Group --------------------------------------------------------------------


@dataclass(frozen=True)
class Worker:
    rank: int
    host: str
    gpus: int
    exec_port: int
    control: socket.socket


def _multi_node(
    ctx: RunnerContext,
    *,
    rank: int,
    nranks: int,
    root: str | None,
    root_name: str,
    own_label: str,
    peer: str | None = None,
) -> Verdict:
    config = settings(ctx, multi_node=True)
    if NO_RENDEZVOUS in link_faults(ctx.environ):
        time.sleep(config.rendezvous_s)
        raise RunnerError(f"simulated fault {NO_RENDEZVOUS}: rank {rank} never took part")
    vendor, slots, gpus = open_devices(ctx)
    # Rank 0's local ranks see its measured GPUs; other hosts' ranks inherit their pods'.
    tool_env = {**_tool_env(ctx, config), **device_env(vendor=vendor, slots=slots)}
    if rank == 0:
        own = (
            rdv.sibling_name(peer, rdv.SERVER)
            if peer is not None
            else ctx.environ.get(rdv.ROOT_HOST, "").strip()
        )
        address = rdv.listen_address(ctx.environ, own_name=own, peer_host=peer)
        return _root(
            ctx, config=config, nranks=nranks, address=address, gpus=gpus, tool_env=tool_env
        )
    assert root is not None
    own = rdv.sibling_name(root, own_label)
    address = rdv.listen_address(ctx.environ, own_name=own, peer_host=root)
    return _worker(
        ctx,
        config=config,
        rank=rank,
        nranks=nranks,
        root=root,
        root_name=root_name,
        address=address,
        gpus=gpus,
    )


def _root(
    ctx: RunnerContext,
    *,
    config: Settings,
    nranks: int,
    address: str,
    gpus: int,
    tool_env: dict[str, str],
) -> Verdict:
    deadline = rdv.Deadline(config.rendezvous_s)
    workers: dict[int, Worker] = {}
    tokens: dict[int, str] = {}
    with rdv.listener(address, config.port) as server:
        ctx.report.note(f"nccl rank 0 listening on {address}:{config.port}")
        try:
            while len(workers) < nranks - 1:
                conn = rdv.accept(server, deadline=deadline)
                if conn is None:
                    missing = sorted(set(range(1, nranks)) - set(workers))
                    raise rdv.PeerUnreachableError(
                        f"rank(s) {', '.join(map(str, missing))} of {nranks} never registered "
                        f"with rank 0 within {deadline.seconds:g}s"
                    )
                worker = _registration(conn, nranks=nranks, known=workers, deadline=deadline)
                if worker is None:
                    conn.close()
                    continue
                tokens[worker.rank] = secrets.token_hex(16)
                rdv.send_line(conn, f"WELCOME {tokens[worker.rank]}")
                workers[worker.rank] = worker
            local = str(next(iter(workers.values())).control.getsockname()[0])
            peer = next(iter(workers.values())).host
            hosts = [(address if address != rdv.ALL_ADDRESSES else local, gpus)]
            hosts += [(workers[r].host, workers[r].gpus) for r in sorted(workers)]
            agent_map = encode_map(
                {workers[r].host: (workers[r].exec_port, tokens[r]) for r in workers}
            )
            argv = [
                "mpirun",
                "-np",
                str(sum(g for _, g in hosts)),
                "--host",
                ",".join(f"{h}:{g}" for h, g in hosts),
                "--mca",
                "plm_rsh_agent",
                f"{sys.executable} -m runners.nccl.agent",
                "-x",
                "NCCL_DEBUG",
                "-x",
                "NCCL_DEBUG_SUBSYS",
                *_test_argv(config, gpus=1),
            ]
            result = (
                ctx.platform()
                .fabric()
                .run_tool(argv, env={**tool_env, AGENT_MAP_ENV: agent_map}, timeout_s=config.tool_s)
            )
        finally:
            for worker in workers.values():
                with contextlib.suppress(OSError):
                    rdv.send_line(worker.control, "DONE")
                worker.control.close()
    ctx.report.metric("provenance", link_provenance(ctx.environ, local=local, peer=peer))
    return _conclude(ctx, config=config, result=result, multi_node=True)


def _registration(
    conn: socket.socket, *, nranks: int, known: dict[int, Worker], deadline: rdv.Deadline
) -> Worker | None:
    line = rdv.recv_line(conn, timeout=min(HANDSHAKE_TIMEOUT_S, deadline.remaining())) or ""
    words = line.split()
    if len(words) != 8 or " ".join(words[:3]) != f"HELLO {PROTOCOL}":
        return None
    rank_text, nranks_text, host, gpus_text, port_text = words[3:]
    if not all(w.isdecimal() for w in (rank_text, nranks_text, gpus_text, port_text)):
        return None
    rank = int(rank_text)
    if int(nranks_text) != nranks or not 0 < rank < nranks or rank in known:
        with contextlib.suppress(OSError):
            rdv.send_line(conn, f"REFUSED rank {rank} of {nranks_text}")
        return None
    return Worker(rank=rank, host=host, gpus=int(gpus_text), exec_port=int(port_text), control=conn)


def _worker(
    ctx: RunnerContext,
    *,
    config: Settings,
    rank: int,
    nranks: int,
    root: str,
    root_name: str,
    address: str,
    gpus: int,
) -> Verdict:
    deadline = rdv.Deadline(config.rendezvous_s)
    with rdv.listener(address, 0, backlog=4) as exec_server:
        exec_port = int(exec_server.getsockname()[1])
        control = rdv.connect(root, config.port, deadline=deadline, peer=f"rank 0 {root_name}")
        with control:
            host = address if address != rdv.ALL_ADDRESSES else str(control.getsockname()[0])
            local, peer = str(control.getsockname()[0]), str(control.getpeername()[0])
            rdv.send_line(control, f"HELLO {PROTOCOL} {rank} {nranks} {host} {gpus} {exec_port}")
            reply = rdv.recv_line(control, timeout=deadline.remaining() + HANDSHAKE_TIMEOUT_S) or ""
            if not reply.startswith("WELCOME "):
                raise rdv.ProtocolError(
                    f"rank 0 {root_name} did not admit rank {rank} ({reply[:120]!r})"
                )
            stop = threading.Event()
            service = threading.Thread(
                target=serve_exec,
                args=(exec_server,),
                kwargs={"token": reply.split()[1], "stop": stop},
                daemon=True,
            )
            service.start()
            try:
                done = rdv.recv_line(control, timeout=config.tool_s + config.rendezvous_s)
            finally:
                stop.set()
                service.join(timeout=5)
    if done != "DONE":
        raise rdv.PeerUnreachableError(f"rank 0 {root_name} never finished the collective")
    ctx.report.metric("provenance", link_provenance(ctx.environ, local=local, peer=peer))
    ctx.report.note(f"rank {rank} took part; rank 0 reports the collective")
    return Passed()


# -- the result ------------------------------------------------------------------------


def _check_transport(report: NcclReport, *, config: Settings) -> None:
    transport = report.transport
    expect = config.expect
    if expect == "any":
        return
    if transport is None:
        raise RunnerError("NCCL did not say which transport it used (no NCCL_DEBUG=INFO lines)")
    if expect == "socket":
        if transport != SOCKET:
            raise RunnerError(f"expected TCP sockets, NCCL used {transport}")
        return
    if transport == SOCKET:
        raise RunnerError(
            "NCCL fell back to TCP sockets ('Using network Socket'): the RDMA fabric this "
            "test expects was never measured; check the RDMA devices and plugin in the pod"
        )
    wanted = {"fabric": FABRIC_TRANSPORTS, "ib": {"IB"}, "roce": {ROCE}}[expect]
    if transport not in wanted:
        raise RunnerError(f"expected {expect} transport, NCCL used {transport}")


def _observed_build(text: str, *, vendor: str) -> None:
    """The library's own word on its build must be the node's vendor's; on AMD it must be
    there at all (RCCL prints ``RCCL version`` under ``NCCL_DEBUG=INFO``): a table nobody
    can tie to rccl-tests is not read as RCCL's."""
    try:
        found = build_of(text)
    except NcclOutputError as error:
        raise RunnerError(f"cannot tell which build ran: {error}") from None
    if found is not None:
        refuse_foreign_build(vendor=vendor, build=found[0], evidence=found[1])
    elif vendor == AMD_VENDOR:
        raise RunnerError(
            "rccl-tests printed no 'RCCL version' line (NCCL_DEBUG=INFO): cannot tell that "
            "RCCL ran on this AMD node"
        )


def _conclude(
    ctx: RunnerContext, *, config: Settings, result: ToolResult, multi_node: bool
) -> Verdict:
    report = ctx.report
    text = result.stdout + "\n" + result.stderr
    _observed_build(text, vendor=ctx.platform().vendor())
    if MEMLOCK_FAILURE.search(text):
        limit = ctx.platform().fabric().memlock_limit_bytes()
        raise memlock_error(what="NCCL (ibv_reg_mr ... Cannot allocate memory)", limit=limit)
    try:
        parsed = parse_report(text)
    except NcclOutputError as error:
        tail = [line.strip() for line in text.splitlines() if line.strip()][-1:] or ["(no output)"]
        raise RunnerError(
            f"nccl-tests exited {result.exit_code}: {error}; last line: {tail[0][:300]}"
        ) from None
    if result.exit_code != 0:
        raise RunnerError(f"nccl-tests exited {result.exit_code} after printing a table")
    report.metric("ncclCollective", config.collective)
    if parsed.transport is not None:
        report.metric("ncclTransport", parsed.transport)
    else:
        report.unmeasurable("ncclTransport")
    _check_transport(parsed, config=config)
    wrong = parsed.miscompares
    if wrong is None:
        raise RunnerError("nccl-tests ran without validation (#wrong N/A): nothing was checked")
    if parsed.ranks is not None:
        report.metric("ranks", parsed.ranks)
    report.metric("busBandwidthGBs", parsed.bus_bandwidth_gbs)
    report.metric("algBandwidthGBs", parsed.peak_alg_bandwidth_gbs)
    report.metric("latencyUs", parsed.latency_us)
    report.metric("miscompares", wrong)
    if parsed.average_busbw_gbs is not None:
        report.metric("avgBusBandwidthGBs", parsed.average_busbw_gbs)
    if wrong:
        return Failed(f"{wrong} wrong elements in the {config.collective} results")
    return Passed()
