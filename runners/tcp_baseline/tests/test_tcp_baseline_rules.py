"""tcp-baseline's own rules against a scripted peer: what it must never conclude."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap
import time
from typing import cast

from glimmer.contract import read_report
from runners.conformance import loopback_addresses
from runners.sdk.netinfo import tcp_info

#: A server that speaks the protocol but acknowledges one byte fewer than it received.
LYING_SERVER = textwrap.dedent(
    """
    import socket, sys
    address = sys.argv[1]
    control = socket.create_server((address, 18520)); data = socket.create_server((address, 18521))
    c, _ = control.accept(); c.recv(100); c.sendall(b"SESSION t 18521\\n")
    d, _ = data.accept(); total = 0
    while chunk := d.recv(1 << 16):
        total += len(chunk)
    total -= len(b"DATA t\\n")
    c.sendall(f"RECEIVED {total - 1} 1.0\\n".encode()); c.recv(100)
    """
)


def test_an_acknowledged_count_that_differs_from_what_was_sent_is_error_never_pass() -> None:
    server_ip, client_ip = loopback_addresses(2)
    server = subprocess.Popen([sys.executable, "-c", LYING_SERVER, server_ip])
    env = {
        "BURNIN_ROLE": "client",
        "BURNIN_PEER_HOST": server_ip,
        "BURNIN_PEER_NODE": "node-s",
        "BURNIN_TCP_BASELINE_SECONDS": "0.2",
        "BURNIN_TCP_BASELINE_CONNECT_SECONDS": "5",
        "BURNIN_LISTEN_ADDRESS": client_ip,
    }
    try:
        done = subprocess.run(
            [sys.executable, "-m", "runners.tcp_baseline"],
            env={**{k: v for k, v in os.environ.items() if not k.startswith("BURNIN_")}, **env},
            capture_output=True,
            timeout=60,
            check=False,
        )
    finally:
        server.kill()
        server.wait()
    report = read_report(done.stdout, kind="tcp-baseline", exit_code=done.returncode)
    assert done.returncode == 3, done.stdout
    assert "not verified" in report.message and server_ip in report.message
    assert "tcpThroughputGbps" not in report.metrics


def test_tcp_info_on_a_socket_without_it_is_none_never_zero() -> None:
    left, right = socket.socketpair()
    with left, right:
        assert tcp_info(left) is None


def test_tcp_info_of_a_real_connection_reads_the_kernel_counters() -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        client = socket.create_connection(server.getsockname())
        accepted, _ = server.accept()
        with client, accepted:
            client.sendall(b"x" * 100_000)
            accepted.recv(1 << 20)
            info = tcp_info(client)
    assert info is not None and info.rtt_us > 0 and info.total_retrans >= 0


class _ShortReply:
    """A socket whose kernel answers ``TCP_INFO`` with an old, shorter struct."""

    def getsockopt(self, level: int, option: int, size: int) -> bytes:
        return b"\x01" * 64


def test_tcp_info_shorter_than_the_fields_read_is_none() -> None:
    assert tcp_info(cast(socket.socket, _ShortReply())) is None


def _runner(env: dict[str, str]) -> subprocess.Popen[bytes]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("BURNIN_")}
    return subprocess.Popen(
        [sys.executable, "-m", "runners.tcp_baseline"],
        env={**base, "BURNIN_TCP_BASELINE_SECONDS": "0.2", "BURNIN_DURATION_SECONDS": "10", **env},
        stdout=subprocess.PIPE,
    )


def test_probes_and_strangers_on_the_readiness_port_never_become_the_session() -> None:
    server_ip, client_ip = loopback_addresses(2)
    server = _runner(
        {"BURNIN_ROLE": "server", "BURNIN_PEER_HOST": client_ip, "BURNIN_LISTEN_ADDRESS": server_ip}
    )
    try:
        for attempt in range(200):
            try:
                probe = socket.create_connection((server_ip, 18520), timeout=1)
                break
            except OSError:
                if attempt == 199:
                    raise
                time.sleep(0.05)
        probe.close()  # a tcpSocket readiness probe: connect, close
        with socket.create_connection((server_ip, 18520), timeout=1) as stranger:
            stranger.sendall(b"GET / HTTP/1.1\n")
            assert stranger.recv(100) == b""  # dropped, never given a session
        client = _runner(
            {
                "BURNIN_ROLE": "client",
                "BURNIN_PEER_HOST": server_ip,
                "BURNIN_LISTEN_ADDRESS": client_ip,
            }
        )
        client_out, _ = client.communicate(timeout=60)
        server_out, _ = server.communicate(timeout=60)
    finally:
        server.kill()
        server.wait()
    assert client.returncode == 0, client_out
    assert server.returncode == 0, server_out
