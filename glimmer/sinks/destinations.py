"""Where a webhook may be sent from the manager: the destination guard.

A BurnInSink's URL is chosen by whoever may create BurnInSinks in a served namespace,
but the POST leaves from the manager's pod, whose network position is not theirs: it
reaches the node's cloud metadata service, the apiserver's Service address and every
Service and pod in the cluster. So before any byte is sent the guard refuses
destinations of these kinds, unless the operator's allowlist permits them:

- loopback, link-local (the metadata service lives there: ``169.254.169.254``, and the
  cloud metadata addresses outside it, ``100.100.100.200`` and ``fd00:ec2::254``),
  multicast, unspecified (``0.0.0.0/8``, ``::``) and reserved (``240.0.0.0/4``, the
  broadcast address, IPv6 reserved space) addresses;
- cluster-internal ones: the Service and Pod CIDRs the operator names
  (``--cluster-cidr``) and the apiserver's own addresses and host names.

Private ranges (RFC 1918, ULA) are not refused as such: real receivers live there.
What is cluster-internal is what the operator says it is.

Decision: the most specific entry wins. Every refused range and every allowlist CIDR
that contains the address is compared by prefix length; the longer decides and a tie
goes to the allowlist. So ``--sink-allow 10.0.0.0/8`` opens a corporate network
without opening the Service CIDR ``10.96.0.0/12`` inside it or the apiserver's
``10.96.0.1``; naming that CIDR or address itself opens it. An allowlisted host name
(``hooks.internal``, or ``*.monitoring.svc.cluster.local`` for any name under it) is
trusted whatever it resolves to: the operator vouches for that name's DNS.

Where it is enforced, so that the address checked is the address connected to:

- :class:`GuardedResolver` wraps aiohttp's resolver: every name lookup of a delivery
  (there is no DNS cache, so every connection resolves again: DNS rebinding) is
  checked, and one refused address refuses the whole answer;
- :meth:`Dial.open_socket` is the connector's socket factory: every address actually
  dialled is checked again just before its socket exists. aiohttp skips the resolver
  for IP literals, so this is what guards ``https://169.254.169.254/`` and
  ``https://[::ffff:a9fe:a9fe]/``;
- :func:`numeric_host` catches the legacy IPv4 spellings (``2130706433``, ``0x7f.1``,
  ``0177.0.0.1``, ``127.1``) that ``getaddrinfo`` would quietly turn into an address.

IPv6 addresses that embed an IPv4 one are judged by it: IPv4-mapped ``::ffff:a.b.c.d``
and NAT64 ``64:ff9b::/96`` as that IPv4 address alone (that is what they reach),
IPv4-compatible, 6to4 and Teredo ones as both. Redirects are never followed
(:mod:`glimmer.sinks.webhook`), so no answer can move a delivery somewhere unchecked.

A refusal names the host and the kind of destination, never a resolved address or a
configured range: the sink's author may read ``lastError``, and what a name resolves
to inside the cluster is not theirs to learn from it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import ipaddress
import re
import socket
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Final
from urllib.parse import urlsplit

from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.connector import AddrInfoType
from aiohttp.resolver import DefaultResolver

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

METADATA: Final = "the cloud metadata service"
APISERVER: Final = "the Kubernetes apiserver"
CLUSTER: Final = "a cluster-internal address (--cluster-cidr)"
LOOPBACK: Final = "a loopback address"
LINK_LOCAL: Final = "a link-local address"
MULTICAST: Final = "a multicast address"
UNSPECIFIED: Final = "an unspecified address"
RESERVED: Final = "a reserved address"
UNREADABLE: Final = "an address the manager cannot classify"

#: Refused unless allowlisted, most specific first where two overlap.
_BUILT_IN: Final[tuple[tuple[IPNetwork, str], ...]] = tuple(
    (ipaddress.ip_network(cidr), why)
    for cidr, why in (
        ("169.254.169.254/32", METADATA),  # AWS, GCP, Azure, OCI, OpenStack
        ("100.100.100.200/32", METADATA),  # Alibaba Cloud
        ("fd00:ec2::254/128", METADATA),  # AWS, over IPv6
        ("127.0.0.0/8", LOOPBACK),
        ("::1/128", LOOPBACK),
        ("169.254.0.0/16", LINK_LOCAL),
        ("fe80::/10", LINK_LOCAL),
        ("224.0.0.0/4", MULTICAST),
        ("ff00::/8", MULTICAST),
        # "This network": Linux dials 0.0.0.0 as the local host.
        ("0.0.0.0/8", UNSPECIFIED),
        ("::/128", UNSPECIFIED),
        ("240.0.0.0/4", RESERVED),  # 255.255.255.255 (broadcast) included
    )
)

_NAT64: Final = ipaddress.IPv6Network("64:ff9b::/96")
_HOST_LABEL: Final = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")
_NUMERIC_HOST: Final = re.compile(r"[0-9a-fA-FxX.]+")


class DestinationRefusedError(OSError):
    """The guard refused an address (an OSError, so aiohttp treats it as a failed
    connection and never sends; :class:`Dial` keeps the reason)."""


def _judged(address: IPAddress) -> list[IPAddress]:
    """The addresses a connection to ``address`` may really reach, embedded IPv4 first.

    An IPv4-mapped address (``::ffff:a.b.c.d``) is an IPv4 connection, and a NAT64 one
    (``64:ff9b::a.b.c.d``, what DNS64 answers for an IPv4-only receiver) reaches only its
    IPv4 address, so each is judged as that alone. IPv4-compatible, 6to4 and Teredo
    addresses are judged as both."""
    if isinstance(address, ipaddress.IPv4Address):
        return [address]
    if address.ipv4_mapped is not None:
        return [address.ipv4_mapped]
    value = int(address)
    if address in _NAT64:
        return [ipaddress.IPv4Address(value & 0xFFFFFFFF)]
    found: list[IPAddress] = []
    if value >> 32 == 0 and value > 1:  # ::a.b.c.d, IPv4-compatible (deprecated)
        found.append(ipaddress.IPv4Address(value))
    if address.sixtofour is not None:
        found.append(address.sixtofour)
    if address.teredo is not None:
        found.extend(address.teredo)
    return [*found, address]


def _flag_refusal(address: IPAddress) -> str | None:
    """What :mod:`ipaddress` itself says, for space no table entry names (IPv6 reserved
    ranges); such a refusal yields only to an allowlist entry for the address itself."""
    for flag, why in (
        (address.is_loopback, LOOPBACK),
        (address.is_link_local, LINK_LOCAL),
        (address.is_multicast, MULTICAST),
        (address.is_unspecified, UNSPECIFIED),
        (address.is_reserved, RESERVED),
    ):
        if flag:
            return why
    return None


def normalise_host(host: str) -> str:
    return host.strip().rstrip(".").lower()


def parse_address(text: str) -> IPAddress | None:
    """``text`` as an IP address, strictly (a zone id is kept); None when it is not one."""
    try:
        return ipaddress.ip_address(text.strip().strip("[]"))
    except ValueError:
        return None


def numeric_host(host: str) -> ipaddress.IPv4Address | None:
    """The IPv4 address a legacy numeric spelling (``2130706433``, ``0x7f.1``,
    ``0177.0.0.1``, ``127.1``) denotes, as ``inet_aton`` and so ``getaddrinfo`` read
    it; None for a name or a canonical address."""
    text = host.rstrip(".") if host.endswith(".") else host
    if not _NUMERIC_HOST.fullmatch(text) or not any(c.isdigit() for c in text):
        return None
    try:
        packed = socket.inet_aton(text)
    except OSError:
        return None
    address = ipaddress.IPv4Address(packed)
    return None if str(address) == host else address


def _plain_socket(addr_info: AddrInfoType) -> socket.socket:
    family, type_, proto, _, _ = addr_info
    return socket.socket(family=family, type=type_, proto=proto)


@dataclass(frozen=True, kw_only=True)
class DestinationGuard:
    """Which webhook destinations the manager refuses; see the module docstring.

    The default refuses the built-in kinds only (no cluster CIDRs, no apiserver
    addresses, nothing allowed); ``glimmer manager`` builds its guard from
    ``--sink-allow``, ``--cluster-cidr`` and the apiserver it talks to
    (:func:`manager_guard`). :data:`UNGUARDED` sends anywhere (a bare host, where the
    person choosing the URL is the one running the command)."""

    #: False: no destination is refused (:data:`UNGUARDED`).
    enabled: bool = True
    #: ``--sink-allow`` CIDRs (a bare address is its /32 or /128).
    allow: tuple[IPNetwork, ...] = ()
    #: ``--sink-allow`` host names, lower case; ``*.example.com`` is any name under it.
    allow_hosts: tuple[str, ...] = ()
    #: ``--cluster-cidr``: the Service and Pod CIDRs (and any other range to refuse).
    cluster: tuple[IPNetwork, ...] = ()
    #: The apiserver's own addresses (its URL's host resolved, in-cluster
    #: ``$KUBERNETES_SERVICE_HOST``).
    apiserver: tuple[IPAddress, ...] = ()
    #: The apiserver's host names, refused by name too.
    apiserver_hosts: tuple[str, ...] = ()
    #: Seam: the resolver names go through before the check (aiohttp's default).
    resolver: Callable[[], AbstractResolver] = DefaultResolver
    #: Seam: creates the socket for an address that passed the check.
    socket_factory: Callable[[AddrInfoType], socket.socket] = _plain_socket

    @classmethod
    def from_flags(
        cls, *, allow: Iterable[str] = (), cluster_cidrs: Iterable[str] = ()
    ) -> DestinationGuard:
        """A guard from ``--sink-allow`` and ``--cluster-cidr`` values (ValueError for an
        entry that is not what it should be); ``from_flags(allow=["127.0.0.1"])`` is a
        test's receiver on loopback."""
        networks, hosts = parse_allow(allow)
        return cls(allow=networks, allow_hosts=hosts, cluster=parse_cluster_cidrs(cluster_cidrs))

    def host_allowed(self, host: str) -> bool:
        name = normalise_host(host)
        for entry in self.allow_hosts:
            if entry.startswith("*."):
                if name.endswith(entry[1:]):
                    return True
            elif name == entry:
                return True
        return False

    def host_refusal(self, host: str) -> str | None:
        """Why ``host`` (a name) is refused by name alone, else None."""
        if not self.enabled or self.host_allowed(host):
            return None
        return APISERVER if normalise_host(host) in self.apiserver_hosts else None

    def refusal(self, address: IPAddress, *, host: str) -> str | None:
        """Why the manager must not connect to ``address`` for the URL host ``host``
        (a kind of destination, fixed text), else None."""
        if not self.enabled or self.host_allowed(host):
            return None
        bare = ipaddress.ip_address(address.compressed.split("%", 1)[0])
        for candidate in _judged(bare):
            why = self._refusal_of(candidate)
            if why is not None:
                return why
        return None

    def _refusal_of(self, address: IPAddress) -> str | None:
        full = address.max_prefixlen
        refused: list[tuple[int, str]] = [(full, APISERVER) for a in self.apiserver if a == address]
        refused += [(net.prefixlen, why) for net, why in _BUILT_IN if address in net]
        refused += [(net.prefixlen, CLUSTER) for net in self.cluster if address in net]
        if not refused:
            flagged = _flag_refusal(address)
            if flagged is None:
                return None
            refused = [(full, flagged)]
        prefix, why = max(refused, key=lambda r: r[0])  # the first of the longest
        allowed = max((net.prefixlen for net in self.allow if address in net), default=-1)
        return None if allowed >= prefix else why

    def dial(self, host: str) -> Dial:
        """The per-delivery check for a URL whose host is ``host``."""
        return Dial(guard=self, host=host)


#: Sends anywhere: ``glimmer run`` on a bare host, whose user chooses the URL.
UNGUARDED: Final = DestinationGuard(enabled=False)


@dataclass
class Dial:
    """One delivery's checks; ``refused`` is the first reason, for the error message."""

    guard: DestinationGuard
    host: str
    refused: str = ""

    def refuse(self, why: str) -> DestinationRefusedError:
        self.refused = self.refused or why
        return DestinationRefusedError(why)

    def check(self, text: str) -> None:
        """Raise :class:`DestinationRefusedError` unless ``text`` is an address the
        guard lets this delivery connect to (one it cannot read is refused)."""
        if not self.guard.enabled:
            return
        address = parse_address(text)
        if address is None:
            raise self.refuse(UNREADABLE)
        why = self.guard.refusal(address, host=self.host)
        if why is not None:
            raise self.refuse(why)

    def open_socket(self, addr_info: AddrInfoType) -> socket.socket:
        """The connector's socket factory: the address dialled, checked last."""
        self.check(str(addr_info[4][0]))
        return self.guard.socket_factory(addr_info)

    def resolver(self) -> GuardedResolver:
        return GuardedResolver(self, self.guard.resolver())


class GuardedResolver(AbstractResolver):
    """aiohttp's resolver, refusing an answer with any refused address in it."""

    def __init__(self, dial: Dial, inner: AbstractResolver) -> None:
        self._dial = dial
        self._inner = inner

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        why = self._dial.guard.host_refusal(host)
        if why is not None:
            raise self._dial.refuse(why)
        answer = await self._inner.resolve(host, port, family)
        for entry in answer:
            self._dial.check(str(entry["host"]))
        return answer

    async def close(self) -> None:
        await self._inner.close()


# --- the manager's guard -------------------------------------------------------------


def _entries(values: Iterable[str]) -> list[str]:
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def _network(text: str) -> IPNetwork | None:
    try:
        return ipaddress.ip_network(text, strict=False)
    except ValueError:
        return None


def parse_cluster_cidrs(values: Iterable[str]) -> tuple[IPNetwork, ...]:
    """``--cluster-cidr`` values (comma-separated, repeatable; empty items ignored)."""
    out: list[IPNetwork] = []
    for entry in _entries(values):
        network = _network(entry)
        if network is None:
            raise ValueError(f"{entry!r} is not a CIDR (e.g. 10.96.0.0/12, fd00:10:96::/108)")
        out.append(network)
    return tuple(out)


def _host_name(entry: str) -> str | None:
    name = normalise_host(entry)
    labels = name[2:].split(".") if name.startswith("*.") else name.split(".")
    if len(name) > 253 or not all(_HOST_LABEL.fullmatch(label) for label in labels):
        return None
    if labels[-1].isdigit() or numeric_host(name) is not None:
        return None  # a numeric last label is an address spelling, never a name
    return name


def parse_allow(values: Iterable[str]) -> tuple[tuple[IPNetwork, ...], tuple[str, ...]]:
    """``--sink-allow`` values: CIDRs, addresses and host names (``*.suffix`` for every
    name under it), comma-separated, repeatable; empty items ignored."""
    networks: list[IPNetwork] = []
    hosts: list[str] = []
    for entry in _entries(values):
        network = _network(entry)
        if network is not None:
            networks.append(network)
            continue
        name = _host_name(entry)
        if name is None:
            raise ValueError(
                f"{entry!r} is neither a CIDR, an IP address nor a host name "
                "(e.g. 10.20.0.0/16, 10.20.0.5, hooks.internal, *.svc.cluster.local)"
            )
        hosts.append(name)
    return tuple(networks), tuple(hosts)


async def _resolve_all(host: str) -> list[IPAddress]:
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    found = (parse_address(str(info[4][0])) for info in infos)
    return [a for a in found if a is not None]


async def manager_guard(
    *,
    allow: Sequence[str] = (),
    cluster_cidrs: Sequence[str] = (),
    apiserver_url: str = "",
    service_host: str = "",
    resolve: Callable[[str], Awaitable[list[IPAddress]]] | None = None,
) -> tuple[DestinationGuard, list[str]]:
    """``glimmer manager``'s guard: the flags, plus the apiserver it talks to
    (``apiserver_url``'s host, resolved now, and in a pod ``$KUBERNETES_SERVICE_HOST``).

    Returns the guard and warnings (a host that did not resolve is still refused by
    name). Raises ValueError for a flag value that is not what it should be."""
    flags = DestinationGuard.from_flags(allow=allow, cluster_cidrs=cluster_cidrs)
    addresses: list[IPAddress] = []
    names: list[str] = []
    warnings: list[str] = []
    for host in (urlsplit(apiserver_url).hostname or "", service_host.strip()):
        if not host:
            continue
        literal = parse_address(host)
        if literal is not None:
            addresses.append(literal)
            continue
        names.append(normalise_host(host))
        try:
            found = await (resolve(host) if resolve is not None else _resolve_all(host))
        except OSError as err:
            warnings.append(f"the apiserver host {host!r} did not resolve ({err}); "
                            "it is refused by name only")  # fmt: skip
            continue
        addresses.extend(found)
    guard = dataclasses.replace(
        flags,
        apiserver=tuple(dict.fromkeys(addresses)),
        apiserver_hosts=tuple(dict.fromkeys(names)),
    )
    return guard, warnings
