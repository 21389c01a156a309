"""Starting nccl-tests' remote ranks without ssh: ``mpirun``'s rsh agent over our rendezvous.

Why: multi-node nccl-tests needs MPI (``make MPI=1``), and Open MPI starts its remote
daemons through an "rsh agent" (``--mca plm_rsh_agent``, ``<agent> <host> <command>``).
Pods have no sshd, so each worker runner serves an exec port and the agent
(:func:`agent_main`, ``python -m runners.nccl.agent``) asks the worker on ``<host>`` to run
the daemon's command, relaying its output and exit status. A worker runs only what
carries the session token rank 0 handed it over the connection the *worker* opened to
``BURNIN_ROOT_HOST``; a stranger on the port gets nothing.

Wire: ``EXEC <token> <command as one line>`` -> ``OUT <line>`` ... ``EXIT <code>``.
The agent finds each host's port and token in ``GLIMMER_NCCL_AGENT_MAP``
(``host=port:token,...``), set by rank 0 in mpirun's environment only.
"""

from __future__ import annotations

import contextlib
import hmac
import socket
import subprocess
import sys
import threading
from collections.abc import Mapping

AGENT_MAP_ENV = "GLIMMER_NCCL_AGENT_MAP"
_MAX_COMMAND = 64 * 1024


def encode_map(entries: Mapping[str, tuple[int, str]]) -> str:
    return ",".join(f"{host}={port}:{token}" for host, (port, token) in entries.items())


def decode_map(text: str) -> dict[str, tuple[int, str]]:
    entries: dict[str, tuple[int, str]] = {}
    for item in text.split(","):
        host, _, rest = item.partition("=")
        port, _, token = rest.partition(":")
        if host and port.isdecimal() and token:
            entries[host] = (int(port), token)
    return entries


def _read_line(stream: socket.socket) -> str | None:
    data = bytearray()
    while len(data) <= _MAX_COMMAND:
        chunk = stream.recv(1)
        if not chunk:
            return None
        if chunk == b"\n":
            return data.decode(errors="replace")
        data += chunk
    return None


def serve_exec(server: socket.socket, *, token: str, stop: threading.Event) -> None:
    """Run the daemon commands rank 0's agent sends (one at a time) until ``stop``."""
    server.settimeout(0.5)
    while not stop.is_set():
        try:
            conn, _ = server.accept()
        except TimeoutError:
            continue
        except OSError:
            return
        with conn:
            conn.settimeout(30)
            try:
                line = _read_line(conn) or ""
            except OSError:
                continue
            verb, _, rest = line.partition(" ")
            given, _, command = rest.partition(" ")
            if verb != "EXEC" or not hmac.compare_digest(given, token) or not command:
                continue
            conn.settimeout(None)
            _relay(conn, command)


def _relay(conn: socket.socket, command: str) -> None:
    try:
        process = subprocess.Popen(
            ["/bin/sh", "-c", command],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    except OSError as error:
        with contextlib.suppress(OSError):
            conn.sendall(f"OUT cannot start: {error}\nEXIT 127\n".encode())
        return
    assert process.stdout is not None
    with contextlib.suppress(OSError):
        for raw in process.stdout:
            conn.sendall(b"OUT " + raw.rstrip(b"\n") + b"\n")
    code = process.wait()
    with contextlib.suppress(OSError):
        conn.sendall(f"EXIT {code}\n".encode())


def agent_main(argv: list[str], environ: Mapping[str, str]) -> int:
    """``<agent> [options] <host> <command...>``: run ``command`` on ``host``'s worker."""
    words = list(argv)
    while words and words[0].startswith("-"):  # ssh-style options before the host
        words.pop(0)
    if len(words) < 2:
        print("nccl agent: usage: agent <host> <command>", file=sys.stderr)
        return 255
    host, command = words[0], " ".join(words[1:])
    entries = decode_map(environ.get(AGENT_MAP_ENV, ""))
    if host not in entries:
        print(f"nccl agent: no worker registered for host {host!r}", file=sys.stderr)
        return 255
    port, token = entries[host]
    try:
        conn = socket.create_connection((host, port), timeout=30)
    except OSError as error:
        print(f"nccl agent: cannot reach worker {host}:{port}: {error}", file=sys.stderr)
        return 255
    with conn:
        conn.sendall(f"EXEC {token} {command}\n".encode())
        conn.settimeout(None)
        while True:
            line = _read_line(conn)
            if line is None:
                print(f"nccl agent: worker {host} closed without an exit status", file=sys.stderr)
                return 255
            if line.startswith("OUT "):
                print(line[4:], flush=True)
            elif line.startswith("EXIT ") and line[5:].lstrip("-").isdecimal():
                return int(line[5:])
