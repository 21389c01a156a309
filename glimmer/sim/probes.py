"""Readiness probes (exec, tcpSocket, httpGet) with the kubelet's thresholds.

Readiness is what gates an operator's "is the peer up" logic (Group-scope rendezvous),
so it is driven by the real check against the real process, not assumed from "started".
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from typing import Any

import aiohttp

JSON = dict[str, Any]


def _port(value: object, container: JSON) -> int:
    if isinstance(value, int):
        return value
    for port in container.get("ports") or []:
        if port.get("name") == value:
            return int(port["containerPort"])
    return int(str(value))


async def probe_once(probe: JSON, *, pod_ip: str, container: JSON, env: Mapping[str, str]) -> bool:
    """One attempt; any error, timeout or unsupported handler is a failure."""
    timeout = float(probe.get("timeoutSeconds", 1))
    try:
        async with asyncio.timeout(timeout):
            if "exec" in probe:
                process = await asyncio.create_subprocess_exec(
                    *probe["exec"]["command"],
                    env=dict(env),
                    stdin=asyncio.subprocess.DEVNULL,
                    stdout=asyncio.subprocess.DEVNULL,
                    stderr=asyncio.subprocess.DEVNULL,
                )
                try:
                    return await process.wait() == 0
                finally:
                    if process.returncode is None:
                        with contextlib.suppress(ProcessLookupError):
                            process.kill()
                        await process.wait()
            if "tcpSocket" in probe:
                handler = probe["tcpSocket"]
                host = handler.get("host") or pod_ip
                _, writer = await asyncio.open_connection(host, _port(handler["port"], container))
                writer.close()
                with contextlib.suppress(OSError):
                    await writer.wait_closed()
                return True
            if "httpGet" in probe:
                handler = probe["httpGet"]
                host = handler.get("host") or pod_ip
                scheme = str(handler.get("scheme", "HTTP")).lower()
                port = _port(handler["port"], container)
                url = f"{scheme}://{host}:{port}{handler.get('path', '/')}"
                async with (
                    aiohttp.ClientSession() as session,
                    session.get(url, ssl=False) as response,
                ):
                    return 200 <= response.status < 400
    except (OSError, TimeoutError, aiohttp.ClientError, ValueError, KeyError):
        return False
    return False
