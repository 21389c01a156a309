"""What the kernel says about a TCP connection and the interfaces it used (Linux).

Why read the kernel: round-trip time and retransmits are the TCP stack's own counters
(``TCP_INFO``), not something a user-space timer can measure honestly. Anything the
kernel does not give is ``None`` and the runner prints ``n/a``, never ``0``.

``struct tcp_info`` (include/uapi/linux/tcp.h) is stable and append-only; the fields
read are at fixed byte offsets: ``tcpi_rtt`` (u32, microseconds) at 68, ``tcpi_rttvar``
at 72, ``tcpi_total_retrans`` (u32, segments retransmitted over the connection's life)
at 100. A reply shorter than 104 bytes (an old or non-Linux kernel) yields ``None``.
"""

from __future__ import annotations

import contextlib
import fcntl
import ipaddress
import socket
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Final

_TCP_INFO_BYTES: Final = 104
_RTT_OFFSET: Final = 68
_RTTVAR_OFFSET: Final = 72
_TOTAL_RETRANS_OFFSET: Final = 100
_SIOCGIFADDR: Final = 0x8915


@dataclass(frozen=True)
class TcpInfo:
    rtt_us: int
    rttvar_us: int
    total_retrans: int


def tcp_info(sock: socket.socket) -> TcpInfo | None:
    """The kernel's counters for ``sock``, or None when it does not say."""
    option = getattr(socket, "TCP_INFO", None)
    if option is None:
        return None
    try:
        raw = sock.getsockopt(socket.IPPROTO_TCP, option, _TCP_INFO_BYTES)
    except OSError:
        return None
    if len(raw) < _TCP_INFO_BYTES:
        return None
    (rtt,) = struct.unpack_from("=I", raw, _RTT_OFFSET)
    (rttvar,) = struct.unpack_from("=I", raw, _RTTVAR_OFFSET)
    (retrans,) = struct.unpack_from("=I", raw, _TOTAL_RETRANS_OFFSET)
    return TcpInfo(rtt_us=rtt, rttvar_us=rttvar, total_retrans=retrans)


def _ipv4_of(name: str) -> str | None:
    request = struct.pack("256s", name.encode()[:15])
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            reply = fcntl.ioctl(probe.fileno(), _SIOCGIFADDR, request)
        except OSError:
            return None
    return socket.inet_ntoa(reply[20:24])


def _interfaces() -> list[str]:
    with contextlib.suppress(OSError):
        return [name for _, name in socket.if_nameindex()]
    return []


def interface_of(address: str) -> str | None:
    """The interface holding ``address`` (the loopback one for any 127/8 or ::1)."""
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return None
    names = _interfaces()
    if parsed.is_loopback:
        return next((n for n in names if _ipv4_of(n) == "127.0.0.1"), None)
    if parsed.version != 4:
        return None
    return next((n for n in names if _ipv4_of(n) == address), None)


def default_route_interface(routes: Path = Path("/proc/net/route")) -> str | None:
    """The interface of the IPv4 default route (the management network, usually)."""
    try:
        lines = routes.read_text().splitlines()[1:]
    except OSError:
        return None
    for line in lines:
        fields = line.split()
        if len(fields) > 2 and fields[1] == "00000000":
            return fields[0]
    return None


def stays_on_host(local: str, peer: str) -> bool:
    """Whether traffic between ``local`` and ``peer`` never leaves this host: a loopback
    peer, or the peer is this host's own address."""
    try:
        peer_ip = ipaddress.ip_address(peer)
    except ValueError:
        return False
    return peer_ip.is_loopback or peer == local
