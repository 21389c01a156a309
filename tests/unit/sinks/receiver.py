"""A real HTTPS webhook receiver on loopback, with a CA made for the test (trustme).

It records every request (headers and exact body bytes) and answers from a script of
statuses (200 once the script is used up); ``stop()``/``start()`` take it down and bring
it back on the same port, so "receiver down, then up" is a refused connection, not a
503.
"""

from __future__ import annotations

import socket
import ssl
from collections import deque
from dataclasses import dataclass, field

import trustme
from aiohttp import web


@dataclass(frozen=True)
class Received:
    headers: dict[str, str]
    body: bytes
    status: int


@dataclass
class Receiver:
    ca: trustme.CA = field(default_factory=trustme.CA)
    script: deque[int] = field(default_factory=deque)
    received: list[Received] = field(default_factory=list)
    port: int = 0
    reply: bytes = b"refused by the test receiver"
    _runner: web.AppRunner | None = None

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}/hook"

    @property
    def ca_pem(self) -> str:
        return self.ca.cert_pem.bytes().decode()

    def accepted(self) -> list[Received]:
        return [r for r in self.received if 200 <= r.status < 300]

    async def _handle(self, request: web.Request) -> web.Response:
        body = await request.read()
        status = self.script.popleft() if self.script else 200
        self.received.append(Received(dict(request.headers), body, status))
        return web.Response(status=status, body=b"" if status < 300 else self.reply)

    async def start(self) -> None:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.ca.issue_cert("127.0.0.1", "localhost").configure_cert(context)
        app = web.Application()
        app.router.add_post("/hook", self._handle)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", self.port))  # the same port again after a stop()
        self.port = sock.getsockname()[1]
        await web.SockSite(self._runner, sock, ssl_context=context).start()

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
