"""The kubelet's ``/containerLogs`` endpoint, which the apiserver proxies ``pods/log`` to.

Serving logs here, rather than letting tests read files, means the operator reads runner
output through the same API call (``GET pods/{name}/log``) it makes in production, with
the apiserver's own validation (container state, tailLines, limitBytes) in the path.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import attrs
from aiohttp import web


@attrs.frozen
class LogSource:
    """Where a container's output is, and whether more may still come."""

    path: Path
    running: Callable[[], bool]


#: (namespace, pod, container, previous) -> the log, or None if no such container.
Lookup = Callable[[str, str, str, bool], LogSource | None]


def _tail(data: bytes, lines: int) -> bytes:
    if lines < 0:
        return data
    if lines == 0:
        return b""
    parts = data.splitlines(keepends=True)
    return b"".join(parts[-lines:])


def _int(query: str | None) -> int | None:
    return None if query in (None, "") else int(str(query))


def make_app(lookup: Lookup) -> web.Application:
    async def container_logs(request: web.Request) -> web.StreamResponse:
        info = request.match_info
        previous = request.query.get("previous") == "true"
        source = lookup(info["namespace"], info["pod"], info["container"], previous)
        if source is None:
            raise web.HTTPNotFound(text=f"container {info['container']!r} not found\n")
        try:
            tail_lines = _int(request.query.get("tailLines"))
            limit = _int(request.query.get("limitBytes"))
        except ValueError as error:
            raise web.HTTPBadRequest(text=f"{error}\n") from error
        data = source.path.read_bytes() if source.path.exists() else b""
        if tail_lines is not None:
            data = _tail(data, tail_lines)
        follow = request.query.get("follow") == "true"
        if not follow:
            return web.Response(
                body=data[:limit] if limit is not None else data, content_type="text/plain"
            )
        response = web.StreamResponse(headers={"Content-Type": "text/plain"})
        await response.prepare(request)
        sent = 0
        offset = source.path.stat().st_size if source.path.exists() else 0
        chunks = [data]
        while True:
            for pending in chunks:
                chunk = pending if limit is None else pending[: max(limit - sent, 0)]
                if chunk:
                    await response.write(chunk)
                    sent += len(chunk)
            if limit is not None and sent >= limit:
                break
            still_running = source.running()
            chunks = []
            if source.path.exists():
                with source.path.open("rb") as handle:
                    handle.seek(offset)
                    chunk = handle.read()
                    offset += len(chunk)
                    chunks.append(chunk)
            if not still_running and not any(chunks):
                break
            await asyncio.sleep(0.2)
        await response.write_eof()
        return response

    app = web.Application()
    app.router.add_get("/containerLogs/{namespace}/{pod}/{container}", container_logs)
    return app
