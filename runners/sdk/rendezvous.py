"""Finding the other side of a Pair or the ranks of a Group, with every wait bounded.

Why one module: a multi-node runner that misreads its role, waits forever on a peer
that never came, or reads "connection refused" as a slow link turns a machinery
problem into a hardware verdict. Here the rendezvous variables (api §10: ``BURNIN_ROLE``,
``BURNIN_PEER_HOST``, ``BURNIN_PEER_NODE``; ``BURNIN_RANK``, ``BURNIN_NRANKS``,
``BURNIN_ROOT_HOST``, ``BURNIN_ROOT_NODE``) are validated strictly (a wrong scope or a
malformed value is exit 3 before anything is touched, A16), every connect retries only
until a :class:`Deadline`, and a peer that never answers is a :class:`PeerUnreachableError`
(exit 3) that names it — never a Fail.

Which address a listener binds: ``BURNIN_LISTEN_ADDRESS`` when set, else the address
the side's own Service name resolves to (the Pair server's name is its peer's with the
first label ``server``; rank *i*'s is ``rank-<i>`` under the root's Service), else every
address. In a cluster pod all three reach the pod; on the simulated kubelet, whose pods
share one network namespace, the own name resolves to the pod's own loopback address,
so two pods never collide on a port.
"""

from __future__ import annotations

import contextlib
import ipaddress
import re
import socket
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from runners.sdk.outcome import RunnerError

ROLE: Final = "BURNIN_ROLE"
PEER_HOST: Final = "BURNIN_PEER_HOST"
PEER_NODE: Final = "BURNIN_PEER_NODE"
RANK: Final = "BURNIN_RANK"
NRANKS: Final = "BURNIN_NRANKS"
ROOT_HOST: Final = "BURNIN_ROOT_HOST"
ROOT_NODE: Final = "BURNIN_ROOT_NODE"
#: Runner-side override of the listening address (bare hosts, tests).
LISTEN_ADDRESS: Final = "BURNIN_LISTEN_ADDRESS"
SERVER: Final = "server"
CLIENT: Final = "client"
ALL_ADDRESSES: Final = "0.0.0.0"

#: A host name (RFC 1123 labels) or an IPv4/IPv6 literal; nothing else is a peer.
_HOST = re.compile(
    r"(?=.{1,253}\Z)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?\Z"
)
_MAX_LINE: Final = 4096


class PeerUnreachableError(RunnerError):
    """The peer never answered within the deadline: unjudged (exit 3), never a Fail."""


class ProtocolError(RunnerError):
    """The other side spoke, but not this runner's protocol."""


@dataclass(frozen=True)
class PairSide:
    role: str
    peer_host: str
    peer_node: str

    @property
    def peer(self) -> str:
        """The peer as a message names it: ``host (node)``."""
        return f"{self.peer_host} (node {self.peer_node})" if self.peer_node else self.peer_host


@dataclass(frozen=True)
class GroupRank:
    rank: int
    nranks: int
    root_host: str
    root_node: str

    @property
    def root(self) -> str:
        return f"{self.root_host} (node {self.root_node})" if self.root_node else self.root_host


def _text(environ: Mapping[str, str], name: str) -> str:
    return environ.get(name, "").strip()


def _host(environ: Mapping[str, str], name: str) -> str:
    value = _text(environ, name)
    if not value:
        raise RunnerError(f"{name} is not set: this runner needs its rendezvous variables")
    try:
        ipaddress.ip_address(value)
    except ValueError:
        if not _HOST.match(value):
            raise RunnerError(f"{name}={value!r} is not a host name or address") from None
    return value


def _count(environ: Mapping[str, str], name: str) -> int:
    value = _text(environ, name)
    if not value.isdecimal() or not value.isascii():
        raise RunnerError(f"{name}={value!r} is not a non-negative integer")
    return int(value)


def pair_side(environ: Mapping[str, str], *, runner: str) -> PairSide:
    """This side of a Pair; a Group's variables or a bad role are refused (exit 3)."""
    group = [name for name in (RANK, NRANKS, ROOT_HOST) if _text(environ, name)]
    if group:
        raise RunnerError(f"{runner} runs only at Pair scope, but {group[0]} is set (Group scope)")
    role = _text(environ, ROLE)
    if role not in (SERVER, CLIENT):
        raise RunnerError(
            f"{ROLE}={role!r} must be {SERVER!r} or {CLIENT!r} ({runner} is Pair-only)"
        )
    peer_node = _text(environ, PEER_NODE)
    if peer_node and not _HOST.match(peer_node):
        raise RunnerError(f"{PEER_NODE}={peer_node!r} is not a node name")
    return PairSide(role=role, peer_host=_host(environ, PEER_HOST), peer_node=peer_node)


def group_rank(environ: Mapping[str, str], *, runner: str, min_ranks: int = 2) -> GroupRank:
    """This rank of a Group; a Pair's role or inconsistent numbers are refused (exit 3)."""
    if _text(environ, ROLE):
        raise RunnerError(f"{runner} runs only at Group scope, but {ROLE} is set (Pair scope)")
    rank, nranks = _count(environ, RANK), _count(environ, NRANKS)
    if nranks < min_ranks:
        raise RunnerError(f"{NRANKS}={nranks}: {runner} needs at least {min_ranks} ranks")
    if rank >= nranks:
        raise RunnerError(f"{RANK}={rank} is outside 0..{nranks - 1}")
    root_node = _text(environ, ROOT_NODE)
    if root_node and not _HOST.match(root_node):
        raise RunnerError(f"{ROOT_NODE}={root_node!r} is not a node name")
    return GroupRank(
        rank=rank, nranks=nranks, root_host=_host(environ, ROOT_HOST), root_node=root_node
    )


class Deadline:
    """A point in monotonic time every wait of one phase is bounded by."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._end = time.monotonic() + seconds

    def remaining(self) -> float:
        return max(self._end - time.monotonic(), 0.0)

    def expired(self) -> bool:
        return self.remaining() <= 0.0


def resolve(host: str) -> str | None:
    """The first IPv4/IPv6 address ``host`` resolves to, or None."""
    try:
        infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return None
    return str(infos[0][4][0]) if infos else None


def sibling_name(host: str, label: str) -> str | None:
    """``host`` with its first label replaced (``client.svc.ns.svc`` -> ``server.svc...``);
    None for an address or a single-label name, which have no siblings."""
    try:
        ipaddress.ip_address(host)
    except ValueError:
        first, dot, rest = host.partition(".")
        return f"{label}.{rest}" if dot and first and rest else None
    return None


def _is_loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


def listen_address(
    environ: Mapping[str, str], *, own_name: str | None, peer_host: str | None
) -> str:
    """Where this side listens (see the module docstring)."""
    override = _text(environ, LISTEN_ADDRESS)
    if override:
        try:
            return str(ipaddress.ip_address(override))
        except ValueError:
            raise RunnerError(f"{LISTEN_ADDRESS}={override!r} is not an IP address") from None
    own = resolve(own_name) if own_name else None
    if own is None:
        return ALL_ADDRESSES
    peer = resolve(peer_host) if peer_host else None
    # A loopback own address with a peer elsewhere (a hostNetwork pod whose name maps to
    # 127.0.1.1) could never be reached: listen everywhere instead.
    if _is_loopback(own) and peer is not None and not _is_loopback(peer):
        return ALL_ADDRESSES
    return own


def listener(address: str, port: int, *, backlog: int = 16) -> socket.socket:
    """A listening TCP socket; a port already taken is exit 3 naming it."""
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((address, port))
        sock.listen(backlog)
    except OSError as error:
        sock.close()
        raise RunnerError(f"cannot listen on {address}:{port}: {error.strerror or error}") from None
    return sock


def connect(host: str, port: int, *, deadline: Deadline, peer: str) -> socket.socket:
    """Connect to ``host:port``, retrying refusals and unresolved names until ``deadline``.

    Names are re-resolved on every try: a Service record may appear a moment after the
    pod that looks it up started.
    """
    delay, last = 0.05, "no attempt"
    while True:
        address = resolve(host)
        if address is None:
            last = f"{host} does not resolve"
        else:
            try:
                sock = socket.create_connection(
                    (address, port), timeout=max(deadline.remaining(), 0.1)
                )
            except OSError as error:
                last = f"{address}:{port}: {error.strerror or error}"
            else:
                sock.settimeout(None)
                return sock
        if deadline.expired():
            raise PeerUnreachableError(
                f"peer {peer} never accepted a connection on port {port} within "
                f"{deadline.seconds:g}s ({last})"
            )
        time.sleep(min(delay, deadline.remaining()))
        delay = min(delay * 2, 1.0)


def accept(server: socket.socket, *, deadline: Deadline) -> socket.socket | None:
    """The next connection, or None once ``deadline`` passed."""
    remaining = deadline.remaining()
    if remaining <= 0:
        return None
    server.settimeout(remaining)
    try:
        conn, _ = server.accept()
    except TimeoutError:
        return None
    conn.settimeout(None)
    return conn


def send_line(sock: socket.socket, text: str) -> None:
    sock.sendall(text.encode() + b"\n")


def recv_line(sock: socket.socket, *, timeout: float) -> str | None:
    """One ``\\n``-terminated line of at most 4 KiB; None on EOF, timeout or garbage."""
    sock.settimeout(max(timeout, 0.01))
    data = bytearray()
    try:
        while len(data) <= _MAX_LINE:
            chunk = sock.recv(1)
            if not chunk:
                return None
            if chunk == b"\n":
                return data.decode("ascii")
            data += chunk
    except (OSError, UnicodeDecodeError):
        return None
    finally:
        with contextlib.suppress(OSError):
            sock.settimeout(None)
    return None


def recv_exact(sock: socket.socket, size: int, *, deadline: Deadline, peer: str) -> bytes:
    """Exactly ``size`` bytes, or exit 3 naming ``peer`` (closed early or overdue)."""
    buffer = bytearray(size)
    view = memoryview(buffer)
    got = 0
    while got < size:
        sock.settimeout(max(deadline.remaining(), 0.01))
        try:
            count = sock.recv_into(view[got:], size - got)
        except TimeoutError:
            raise PeerUnreachableError(f"{peer} stopped sending ({got} of {size} bytes)") from None
        except OSError as error:
            raise PeerUnreachableError(f"lost {peer}: {error.strerror or error}") from None
        if count == 0:
            raise PeerUnreachableError(f"{peer} closed the connection ({got} of {size} bytes)")
        got += count
    sock.settimeout(None)
    return bytes(buffer)
