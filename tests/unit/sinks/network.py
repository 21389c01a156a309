"""The destination guard's seams, recorded: a resolver answering from a script and a
socket factory that records each dial and never opens a socket, so a test of the guard
can see what would have been connected to without sending anything anywhere."""

from __future__ import annotations

import socket
from dataclasses import dataclass, field, replace
from typing import Any

from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.connector import AddrInfoType

from glimmer.sinks.destinations import DestinationGuard


@dataclass
class Network:
    """The seams: names answer from ``answers`` (one list per lookup, the last repeats)
    and every dial is recorded and refused, so nothing ever leaves the process."""

    answers: dict[str, list[list[str]]] = field(default_factory=dict)
    lookups: list[str] = field(default_factory=list)
    dials: list[tuple[Any, ...]] = field(default_factory=list)

    def resolver(self) -> AbstractResolver:
        network = self

        class Recording(AbstractResolver):
            async def resolve(
                self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
            ) -> list[ResolveResult]:
                network.lookups.append(host)
                script = network.answers.get(host)
                if not script:
                    raise OSError(f"test: no answer for {host}")
                addresses = script.pop(0) if len(script) > 1 else script[0]
                return [
                    ResolveResult(hostname=host, host=a, port=port, family=socket.AF_INET6
                                  if ":" in a else socket.AF_INET, proto=0, flags=0)
                    for a in addresses
                ]  # fmt: skip

            async def close(self) -> None:
                return None

        return Recording()

    def socket_factory(self, addr_info: AddrInfoType) -> socket.socket:
        self.dials.append(tuple(addr_info[4]))
        raise ConnectionRefusedError(111, "test: no socket is ever opened")

    def guard(self, **fields: Any) -> DestinationGuard:
        base = DestinationGuard(**fields)
        return replace(base, resolver=self.resolver, socket_factory=self.socket_factory)
