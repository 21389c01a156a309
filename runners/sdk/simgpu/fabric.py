"""The simulated RDMA fabric: NIC ports and counters, RLIMIT_MEMLOCK, and stand-ins for
``ib_write_bw``/``ib_write_lat`` (perftest) and ``all_reduce_perf`` & co (nccl-tests).

Why stand-ins that print the tools' own formats: the runners parse a simulated run with
the very parser that reads the real tools, so a simulated Pass proves the parsing and
the rules (memlock shrinking, transport check, floors), never a link. The figures are
nominal (the NIC profile's line rate times an efficiency), the faults shape them:

- ``degraded-link``: half the rate, on either end of the pair;
- ``flapping-link``: the port's error counters move on every read;
- ``nic-flap-under-load``: the port flaps only while it carries traffic: its counters
  move once per tool run on this node and never between runs (an idle read of them sees
  nothing), and the retraining costs the run a few per cent of its rate;
- ``memlock-8mib``: RLIMIT_MEMLOCK is 8 MiB and registration beyond it fails exactly as
  perftest and NCCL fail (``Couldn't create CQ``, ``ibv_reg_mr_iova2 ... Cannot allocate
  memory``);
- ``nccl-socket-fallback``: NCCL finds no usable RDMA device and uses TCP sockets;
- ``bad-nic``: this node's NIC is bad: every perftest link from it runs at half rate
  (under any floor), whoever the peer;
- ``bad-cable=<node>``: only the link between this node and ``<node>`` (the peer named
  by ``BURNIN_PEER_NODE``) runs at half rate; every other link of both nodes is healthy.
  The end that knows says so in the handshake, so both ends measure the same link.

Under an AMD profile the collective stand-in is rccl-tests on RCCL (the ROCm image's
build): ``RCCL version ...+hip``, ``Test HIP failure``, intra-node peers ``via P2P/IPC``
over xGMI at :data:`~runners.sdk.simgpu.amd_compute.SIM_XGMI_PEER_GBS` per peer, no NVLS,
and the GPUs it sees are those ``HIP_VISIBLE_DEVICES`` names (as HIP's are).

The perftest stand-in really connects: the server listens on its ``-p`` port (at
``BURNIN_LISTEN_ADDRESS`` from the tool's environment), the client connects to it and
the two exchange their parameters, so a peer that never comes is a real connection
failure. Pinned memory is modelled as perftest registers it: message size x queue
pairs x 2, plus :data:`PINNED_OVERHEAD_BYTES` for completion queues and rings.
"""

from __future__ import annotations

import contextlib
import os
import socket
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from runners.sdk.outcome import RunnerError
from runners.sdk.protocols import (
    AMD_VENDOR,
    DEGRADED_LINK_FAULT,
    FLAPPING_LINK_FAULT,
    MEMLOCK_8MIB_FAULT,
    NCCL_SOCKET_FALLBACK_FAULT,
    NIC_FLAP_UNDER_LOAD_FAULT,
    RdmaPort,
    ToolMissingError,
    ToolResult,
)
from runners.sdk.simgpu.amd_compute import SIM_XGMI_PEER_GBS
from runners.sdk.simgpu.nvml import pci_bus_id
from runners.sdk.simgpu.spec import BAD_NIC_FAULT
from runners.sdk.simgpu.state import SimState

MEMLOCK_8MIB = 8 * 1024 * 1024
PINNED_OVERHEAD_BYTES = 1024 * 1024
#: What a link that flaps under load keeps of its rate: each flap lasts milliseconds, so a
#: run's average hardly moves (the counters show it, the bandwidth does not).
FLAP_UNDER_LOAD_SCALE = 0.97
#: Message size at which a write reaches half its large-message efficiency.
_HALF_SIZE = 128.0
_HOST = "simnode"
_PID = 4242
NCCL_TESTS = {
    "all_reduce_perf": ("sum", -1),
    "all_gather_perf": ("none", -1),
    "reduce_scatter_perf": ("sum", -1),
    "broadcast_perf": ("none", 0),
    "reduce_perf": ("sum", 0),
    "alltoall_perf": ("none", -1),
    "sendrecv_perf": ("sum", -1),
}
_PERFTEST = ("ib_write_bw", "ib_write_lat")
#: The Pair rendezvous' peer node (runners/sdk/rendezvous.py): whom ``bad-cable`` names.
PEER_NODE_ENV = "BURNIN_PEER_NODE"
_RULE = "-" * 87
#: Share of the xGMI peer rate a ring collective's bus bandwidth reaches.
_XGMI_EFFICIENCY = 0.8


class _UsageError(Exception):
    """perftest would print its usage and exit 1."""


@dataclass
class _Perftest:
    tool: str
    device: str = "mlx5_0"
    port: int = 18515
    size: int = 65536
    qps: int = 1
    iterations: int = 5000
    gbits: bool = False
    cuda: int | None = None
    host: str | None = None


def _perftest_args(argv: Sequence[str]) -> _Perftest:
    args = _Perftest(tool=argv[0])
    words = list(argv[1:])
    while words:
        word = words.pop(0)
        if word in ("-d", "-i", "-p", "-s", "-q", "-n", "-x"):
            if not words:
                raise _UsageError(f"option requires an argument -- '{word[1:]}'")
            value = words.pop(0)
            try:
                if word == "-d":
                    args.device = value
                elif word == "-p":
                    args.port = int(value)
                elif word == "-s":
                    args.size = int(value)
                elif word == "-q":
                    args.qps = int(value)
                elif word == "-n":
                    args.iterations = int(value)
            except ValueError:
                raise _UsageError(f"invalid value {value!r} for {word}") from None
        elif word == "--report_gbits":
            args.gbits = True
        elif word.startswith("--use_cuda="):
            args.cuda = int(word.partition("=")[2])
        elif word in ("-F", "--report-both"):
            continue
        elif word.startswith("-"):
            raise _UsageError(f"unrecognized option '{word}'")
        else:
            args.host = word
    return args


class SimFabric:
    def __init__(self, state: SimState) -> None:
        self._state = state
        self._counter_reads = 0
        #: Tool runs that carried traffic over this node's port (nic-flap-under-load).
        self._traffic_runs = 0

    def rdma_ports(self) -> list[RdmaPort]:
        nic = self._state.spec.nic
        return [
            RdmaPort(
                device=nic.device,
                port=1,
                link_layer=nic.link_layer,
                state="ACTIVE",
                rate_gbps=nic.rate_gbps,
            )
        ]

    def error_counters(self, port: RdmaPort) -> dict[str, int] | None:
        self._counter_reads += 1
        moved = 0
        if self._state.spec.has(FLAPPING_LINK_FAULT):
            moved = self._counter_reads - 1
        elif self._state.spec.has(NIC_FLAP_UNDER_LOAD_FAULT):
            moved = self._traffic_runs
        return {
            "symbol_error": 37 * moved,
            "link_error_recovery": moved,
            "link_downed": moved,
            "port_rcv_errors": 4 * moved,
            "local_link_integrity_errors": 0,
            "excessive_buffer_overrun_errors": 0,
        }

    def memlock_limit_bytes(self) -> int | None:
        return MEMLOCK_8MIB if self._state.spec.has(MEMLOCK_8MIB_FAULT) else None

    def run_tool(
        self, argv: Sequence[str], *, env: Mapping[str, str], timeout_s: float
    ) -> ToolResult:
        if not argv:
            raise ToolMissingError("no tool named")
        name = argv[0]
        if name in _PERFTEST:
            return self._perftest(argv, env=env, timeout_s=timeout_s)
        if name in NCCL_TESTS:
            return self._nccl(argv, ranks_per_process=None, nodes=1, env=env)
        if name == "mpirun":
            return self._mpirun(argv)
        raise ToolMissingError(f"{name}: not installed (simulated fabric knows no such tool)")

    # -- perftest ------------------------------------------------------------------------

    def _pinned_fits(self, args: _Perftest) -> bool:
        limit = self.memlock_limit_bytes()
        qps = args.qps if args.tool == "ib_write_bw" else 1
        return limit is None or args.size * qps * 2 + PINNED_OVERHEAD_BYTES <= limit

    def _perftest(
        self, argv: Sequence[str], *, env: Mapping[str, str], timeout_s: float
    ) -> ToolResult:
        try:
            args = _perftest_args(argv)
        except _UsageError as usage:
            return ToolResult(1, "", f"{argv[0]}: {usage}\n")
        if args.cuda is not None:
            self._state.require_driver("Couldn't init CUDA: cuInit failed (CUDA driver not found)")
        if not self._pinned_fits(args):
            err = "Couldn't create CQ\nFailed to create CQs\nCouldn't create IB resources\n"
            return ToolResult(1, "", err)
        degraded = self._link_degraded()
        if args.host is None:
            peer_degraded = self._serve(args, env=env, timeout_s=timeout_s, degraded=degraded)
        else:
            peer_degraded = self._connect(args, timeout_s=timeout_s, degraded=degraded)
        if isinstance(peer_degraded, ToolResult):
            return peer_degraded
        slow = degraded or peer_degraded
        self._traffic_runs += 1
        return ToolResult(0, self._perftest_report(args, slow=slow), "")

    def _link_degraded(self) -> bool:
        """This end's share of the link's faults: ``degraded-link`` and ``bad-nic`` on
        every link, ``bad-cable=<peer>`` only towards that peer."""
        spec = self._state.spec
        if spec.has(DEGRADED_LINK_FAULT) or spec.has(BAD_NIC_FAULT):
            return True
        peer = os.environ.get(PEER_NODE_ENV, "").strip().lower()
        return bool(peer) and peer in spec.bad_cables

    def _handshake(self, args: _Perftest, degraded: bool) -> str:
        return f"PERFTEST {args.tool} {args.size} {args.qps} {args.iterations} {int(degraded)}"

    def _serve(
        self, args: _Perftest, *, env: Mapping[str, str], timeout_s: float, degraded: bool
    ) -> bool | ToolResult:
        address = env.get("BURNIN_LISTEN_ADDRESS", "").strip() or "0.0.0.0"
        try:
            server = socket.create_server((address, args.port), reuse_port=False)
        except OSError as error:
            return ToolResult(1, "", f"Couldn't bind port {args.port}: {error.strerror}\n")
        with server:
            server.settimeout(max(timeout_s, 0.1))
            try:
                conn, _ = server.accept()
            except TimeoutError:
                raise RunnerError(
                    f"{args.tool} did not finish in {timeout_s:.0f} s (no client connected)"
                ) from None
            with conn:
                conn.settimeout(10)
                line = _recv_line(conn)
                mine = self._handshake(args, degraded)
                words = (line or "").split()
                if words[:5] != mine.split()[:5]:
                    with contextlib.suppress(OSError):
                        conn.sendall(b"MISMATCH\n")
                    return ToolResult(
                        1, "", " Failed to exchange data between server and clients\n"
                    )
                conn.sendall(f"OK {int(degraded)}\n".encode())
                return words[5:6] == ["1"]

    def _connect(self, args: _Perftest, *, timeout_s: float, degraded: bool) -> bool | ToolResult:
        assert args.host is not None
        failure = ToolResult(
            1,
            "",
            f"Couldn't connect to {args.host}:{args.port}\n"
            " Unable to open file descriptor for socket connection"
            " Unable to init the socket connection\n",
        )
        try:
            conn = socket.create_connection((args.host, args.port), timeout=min(timeout_s, 5))
        except OSError:
            return failure
        with conn:
            conn.settimeout(10)
            try:
                conn.sendall((self._handshake(args, degraded) + "\n").encode())
                reply = (_recv_line(conn) or "").split()
            except OSError:
                return failure
        if not reply or reply[0] != "OK":
            return ToolResult(1, "", " Failed to exchange data between server and clients\n")
        return reply[1:2] == ["1"]

    def _perftest_report(self, args: _Perftest, *, slow: bool) -> str:
        nic = self._state.spec.nic
        link = "IB" if nic.link_layer == "InfiniBand" else "Ethernet"
        title = "RDMA_Write BW Test" if args.tool == "ib_write_bw" else "RDMA_Write Latency Test"
        lines = [
            _RULE,
            f"                    {title}",
            f" Dual-port       : OFF\t\tDevice         : {args.device}",
            f" Number of qps   : {args.qps}\t\tTransport type : IB",
            " Connection type : RC\t\tUsing SRQ      : OFF",
            " TX depth        : 128",
            " CQ Moderation   : 100",
            " Mtu             : 4096[B]",
            f" Link type       : {link}",
            " Max inline data : 0[B]",
            " rdma_cm QPs\t : OFF",
            " Data ex. method : Ethernet",
        ]
        if args.cuda is not None:
            lines.insert(3, f" Using CUDA device {args.cuda}: {pci_bus_id(args.cuda)}")
        lines += [
            _RULE,
            " local address: LID 0x05 QPN 0x0128 PSN 0x8a9c6e RKey 0x1fff00 VAddr 0x007f2a5c000000",
            " remote address: LID 0x04 QPN 0x0127 PSN 0x4d5b2a RKey 0x1fff00 VAddr "
            "0x007f8e3c000000",
            _RULE,
        ]
        if args.tool == "ib_write_bw":
            flapping = self._state.spec.has(FLAPPING_LINK_FAULT)
            efficiency = nic.write_efficiency * args.size / (args.size + _HALF_SIZE)
            flap_scale = (
                FLAP_UNDER_LOAD_SCALE if self._state.spec.has(NIC_FLAP_UNDER_LOAD_FAULT) else 1
            )
            average = (
                nic.rate_gbps
                * efficiency
                * (0.5 if slow else 1.0)
                * (0.99 if flapping else 1)
                * flap_scale
            )
            peak = average * 1.0004
            if args.gbits:
                unit, shown_avg, shown_peak = "Gb/sec", average, peak
            else:
                unit = "MB/sec"
                shown_avg, shown_peak = average * 1e9 / 8 / 2**20, peak * 1e9 / 8 / 2**20
            rate = average * 1e9 / 8 / args.size / 1e6
            lines.append(
                f" #bytes     #iterations    BW peak[{unit}]    BW average[{unit}]   MsgRate[Mpps]"
            )
            lines.append(
                f" {args.size:<10d} {args.iterations:<10d}       {shown_peak:.2f}"
                f"             {shown_avg:.2f}\t\t   {rate:.6f}"
            )
        else:
            base = nic.write_latency_us * (1 + args.size / 65536) * (1.3 if slow else 1.0)
            lines.append(
                " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    "
                "t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] "
            )
            lines.append(
                f" {args.size:<7d}{args.iterations:<10d}     {base * 0.96:.2f}           "
                f"{base * 3.8:.2f}         {base * 0.99:.2f}              {base:.2f}"
                f"             0.05            {base * 1.15:.2f}"
                f"                    {base * 3.5:.2f}   "
            )
        lines.append(_RULE)
        return "\n".join(lines) + "\n"

    # -- nccl-tests ------------------------------------------------------------------------

    def _mpirun(self, argv: Sequence[str]) -> ToolResult:
        words = list(argv[1:])
        processes, hosts = 1, 1
        test_at = next((i for i, w in enumerate(words) if w.rsplit("/", 1)[-1] in NCCL_TESTS), None)
        if test_at is None:
            return ToolResult(1, "", "mpirun: no nccl-tests binary on the command line\n")
        launcher, test = words[:test_at], words[test_at:]
        for index, word in enumerate(launcher[:-1]):
            if word == "-np":
                processes = int(launcher[index + 1])
            elif word in ("--host", "-H"):
                hosts = len(launcher[index + 1].split(","))
        test[0] = test[0].rsplit("/", 1)[-1]
        return self._nccl(test, ranks_per_process=processes, nodes=hosts, env={})

    def _nccl(
        self,
        argv: Sequence[str],
        *,
        ranks_per_process: int | None,
        nodes: int,
        env: Mapping[str, str],
    ) -> ToolResult:
        spec = self._state.spec
        amd = spec.profile.vendor == AMD_VENDOR
        api = "HIP" if amd else "CUDA"
        flags = dict(zip(argv[1::2], argv[2::2], strict=False))
        try:
            gpus = int(flags.get("-g", "1"))
            low, high = _size(flags.get("-b", "8")), _size(flags.get("-e", "128M"))
            factor = int(flags.get("-f", "2"))
            check = int(flags.get("-c", "1"))
        except ValueError as error:
            return ToolResult(1, "", f"{argv[0]}: invalid argument: {error}\n")
        if spec.has("no-driver"):
            why = (
                "no ROCm-capable device is detected"
                if amd
                else "CUDA driver version is insufficient"
            )
            return ToolResult(1, "", f"{_HOST}: Test {api} failure common.cu:892 '{why}'\n")
        processes = ranks_per_process or 1
        ranks = processes * gpus
        if ranks_per_process is None and gpus > self._visible(env, amd=amd):
            return ToolResult(
                1, "", f"{_HOST}: Test {api} failure common.cu:963 'invalid device ordinal'\n"
            )
        network = nodes > 1
        out = [
            f"# nThread 1 nGpus {gpus} minBytes {low} maxBytes {high} step: {factor}(factor) "
            f"warmup iters: 5 iters: 20 agg iters: 1 validation: {check} graph: 0",
            "#",
            "# Using devices",
        ]
        for rank in range(ranks):
            local = rank % max(gpus if not network else spec.count, 1)
            out.append(
                f"#  Rank {rank:2d} Group  0 Pid {_PID + rank // gpus:6d} on "
                f"{_HOST}-{rank // max(ranks // nodes, 1)} "
                f"device {local:2d} [0x{0x18 + local * 0x10:02x}] {spec.profile.name}"
            )
        tag = f"{_HOST}:{_PID}:{_PID + 8} [0]"
        if amd:
            out.append(f"{tag} NCCL INFO RCCL version 2.21.5+hip6.4 HEAD:3a6a2b0")
        else:
            out.append(f"{tag} NCCL INFO NCCL version 2.21.5+cuda12.4")
        nic = spec.nic
        if network and spec.has(NCCL_SOCKET_FALLBACK_FAULT):
            out.append(f"{tag} NCCL INFO NET/Plugin: No plugin found (libnccl-net.so)")
            out.append(f"{tag} NCCL INFO Failed to open libibverbs.so[.1]")
            out.append(f"{tag} NCCL INFO NET/Socket : Using [0]eth0:10.0.0.11<0>")
            out.append(f"{tag} NCCL INFO Using network Socket")
        elif network:
            out.append(
                f"{tag} NCCL INFO NET/IB : Using [0]{nic.device}:1/{nic.transport} ; "
                "OOB eth0:10.0.0.11<0>"
            )
            out.append(f"{tag} NCCL INFO Using network IB")
        out.append(
            f"{tag} NCCL INFO comm 0x55d0c0 rank 0 nRanks {ranks} nNodes {nodes} "
            f"localRanks {ranks // nodes} localRank 0 MNNVL 0"
        )
        if network and not spec.has(NCCL_SOCKET_FALLBACK_FAULT) and spec.has(MEMLOCK_8MIB_FAULT):
            out.append(
                f"{tag} transport/net_ib.cc:611 NCCL WARN Call to ibv_reg_mr_iova2 failed with "
                "error Cannot allocate memory"
            )
            out.append(f"{tag} NCCL INFO transport/net_ib.cc:1210 -> 2")
            out.append(
                f"{_HOST}: Test NCCL failure common.cu:1005 'unhandled system error (run with "
                "NCCL_DEBUG=INFO for details) / '"
            )
            out.append(f" .. {_HOST} pid {_PID}: Test failure common.cu:891")
            return ToolResult(1, "\n".join(out) + "\n", "")
        if network:
            via = "NET/Socket/0" if spec.has(NCCL_SOCKET_FALLBACK_FAULT) else "NET/IB/0/GDRDMA"
        else:
            via = "P2P/IPC" if amd else "P2P/CUMEM"
        out.append(f"{tag} NCCL INFO Channel 00/0 : 0[0] -> 1[1] via {via}")
        nvls = not amd and spec.profile.compute_capability >= (9, 0)
        if not network and nvls and gpus >= 4:
            out.append(f"{tag} NCCL INFO NVLS multicast support is available on dev 0")
        out.append(f"{tag} NCCL INFO Connected all rings")
        out += _table(
            argv[0],
            peak=self.peak_bus_gbs(network=network, ranks=ranks),
            corrupt=spec.has("nan-compute"),
            ranks=ranks,
            sizes=(low, high, factor),
            network=network,
        )
        return ToolResult(0, "\n".join(out) + "\n", "")

    def _visible(self, env: Mapping[str, str], *, amd: bool) -> int:
        """The GPUs the tests see: on AMD those ``HIP_VISIBLE_DEVICES`` names, if set."""
        count = self._state.spec.count
        text = env.get("HIP_VISIBLE_DEVICES") if amd else None
        if text is None:
            return count
        return len({w for w in text.split(",") if w.strip().isdecimal() and int(w) < count})

    def peak_bus_gbs(self, *, network: bool, ranks: int = 2) -> float:
        """The nominal bus bandwidth the simulated collective reaches at large messages
        (on AMD inside a node: every peer's xGMI link, ``ranks - 1`` of them)."""
        spec = self._state.spec
        if network:
            fallback = spec.has(NCCL_SOCKET_FALLBACK_FAULT)
            peak = 2.6 if fallback else spec.nic.rate_gbps / 8 * 0.94
        elif spec.profile.vendor == AMD_VENDOR:
            peak = SIM_XGMI_PEER_GBS * max(ranks - 1, 1) * _XGMI_EFFICIENCY
        elif spec.profile.compute_capability >= (10, 0):
            peak = 780.0
        elif spec.profile.compute_capability >= (9, 0):
            peak = 470.0
        else:
            peak = 11.0
        if network and spec.has(DEGRADED_LINK_FAULT):
            peak *= 0.5
        if network and spec.has(NIC_FLAP_UNDER_LOAD_FAULT):
            peak *= FLAP_UNDER_LOAD_SCALE
        if not network and spec.has("low-bandwidth"):
            peak *= 0.3
        return peak


def _recv_line(conn: socket.socket) -> str | None:
    data = bytearray()
    while len(data) < 512:
        chunk = conn.recv(1)
        if not chunk:
            return None
        if chunk == b"\n":
            return data.decode(errors="replace")
        data += chunk
    return None


def _size(text: str) -> int:
    units = {"K": 2**10, "M": 2**20, "G": 2**30}
    if text and text[-1].upper() in units:
        return int(text[:-1]) * units[text[-1].upper()]
    return int(text)


_BUS_FACTOR: dict[str, Callable[[int], float]] = {
    "all_reduce_perf": lambda n: 2 * (n - 1) / n,
    "all_gather_perf": lambda n: (n - 1) / n,
    "reduce_scatter_perf": lambda n: (n - 1) / n,
    "alltoall_perf": lambda n: (n - 1) / n,
    "broadcast_perf": lambda n: 1.0,
    "reduce_perf": lambda n: 1.0,
    "sendrecv_perf": lambda n: 1.0,
}


def _table(
    test: str,
    *,
    peak: float,
    corrupt: bool,
    ranks: int,
    sizes: tuple[int, int, int],
    network: bool,
) -> list[str]:
    """The nccl-tests table: one row per size, out-of-place then in-place, and the footer."""
    redop, root = NCCL_TESTS[test]
    low, high, factor = sizes
    bus = _BUS_FACTOR[test](ranks)
    base_us = 12.0 if network else 9.0
    lines = [
        "#",
        "#                                                              out-of-place"
        "                       in-place          ",
        "#       size         count      type   redop    root     time   algbw   busbw"
        " #wrong     time   algbw   busbw #wrong",
        "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)"
        "            (us)  (GB/s)  (GB/s)       ",
    ]
    total = 0.0
    rows = 0
    size = low
    while size <= high:
        count = max(size // 4, 1)
        seconds = base_us / 1e6 + (size * bus) / (peak * 1e9) if bus else base_us / 1e6
        algbw = size / seconds / 1e9
        busbw = algbw * bus
        wrong = count // 1024 if corrupt and size >= 1 << 20 else 0
        cells = []
        for scale in (1.0, 0.995):
            cells.append(
                f"{seconds * 1e6 / scale:8.2f}  {algbw * scale:6.2f}  "
                f"{busbw * scale:6.2f}  {wrong:5d}"
            )
        lines.append(
            f"{size:12d}  {count:12d}     float  {redop:>6s}  {root:6d}  " + "  ".join(cells)
        )
        total += busbw
        rows += 1
        size *= max(factor, 2)
    lines += [
        f"# Out of bounds values : {int(corrupt)} {'FAILED' if corrupt else 'OK'}",
        f"# Avg bus bandwidth    : {total / max(rows, 1):.4f} ",
        "#",
    ]
    return lines
