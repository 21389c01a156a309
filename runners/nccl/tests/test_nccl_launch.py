"""mpirun's rsh agent and the worker's exec service: only the session token runs a command."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest

from runners.nccl.launch import AGENT_MAP_ENV, agent_main, encode_map, serve_exec


@pytest.fixture
def worker() -> Iterator[int]:
    server = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()
    thread = threading.Thread(
        target=serve_exec, args=(server,), kwargs={"token": "s3cret", "stop": stop}, daemon=True
    )
    thread.start()
    try:
        yield int(server.getsockname()[1])
    finally:
        stop.set()
        thread.join(timeout=5)
        server.close()


def test_the_agent_runs_the_daemon_command_on_the_worker_and_relays_its_exit(
    worker: int, capsys: pytest.CaptureFixture[str]
) -> None:
    env = {AGENT_MAP_ENV: encode_map({"127.0.0.1": (worker, "s3cret")})}
    assert (
        agent_main(["-x", "127.0.0.1", "echo", "orted-up", "-mca", "ess;", "exit", "7"], env) == 7
    )
    assert "orted-up -mca ess" in capsys.readouterr().out


def test_a_wrong_token_runs_nothing(worker: int, capsys: pytest.CaptureFixture[str]) -> None:
    env = {AGENT_MAP_ENV: encode_map({"127.0.0.1": (worker, "guess")})}
    assert agent_main(["127.0.0.1", "echo", "ran"], env) == 255
    assert "ran" not in capsys.readouterr().out


def test_an_unregistered_host_is_refused_by_the_agent() -> None:
    assert agent_main(["10.0.0.9", "orted"], {AGENT_MAP_ENV: ""}) == 255
