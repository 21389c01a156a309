"""``glimmer run --sink-*`` / ``glimmer merge --sink-*`` (N1, N3): the deciding side
writes the envelope and delivers it; a side that decides nothing sends nothing; a
receiver that is down never changes the verdict or the exit status."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from glimmer.contract.envelope import decode, delivery_id
from tests.local.bare_sides import free_port, glimmer_run, profile


class _Receiver:
    def __init__(self) -> None:
        self.bodies: list[bytes] = []
        self.headers: list[dict[str, str]] = []
        received = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                received.bodies.append(self.rfile.read(length))
                received.headers.append(dict(self.headers.items()))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *_: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/verdicts"


@pytest.fixture
def receiver() -> Iterator[_Receiver]:
    rx = _Receiver()
    thread = threading.Thread(target=rx.server.serve_forever, daemon=True)
    thread.start()
    yield rx
    rx.server.shutdown()
    rx.server.server_close()


def _metric_profile(path: Path) -> Path:
    return profile(path, scope="Node", script="echo tcpRttUs=5; echo OK")


def test_N3_deciding_run_writes_and_delivers_its_envelope(
    tmp_path: Path, receiver: _Receiver
) -> None:
    token = tmp_path / "token"
    token.write_text("s3cret\n")
    out = tmp_path / "out"
    result = glimmer_run(
        str(_metric_profile(tmp_path / "p.yaml")),
        "--node",
        "n0",
        "--results-dir",
        str(out),
        "--sink-url",
        receiver.url,
        "--sink-token-file",
        str(token),
    )
    assert result.exit_code == 0, result.output
    written = (out / "envelopes" / "001-RunPhaseChanged.json").read_bytes()
    assert len(receiver.bodies) == 1
    sent = decode(receiver.bodies[0])
    assert sent == decode(written)
    assert sent.phase == "Passed"
    assert [r.nodes for r in sent.results] == [("n0",)]
    assert receiver.headers[0]["Authorization"] == "Bearer s3cret"
    assert receiver.headers[0]["Idempotency-Key"] == delivery_id(
        sent.run.uid, "RunPhaseChanged", "Passed"
    )


def test_N4_a_receiver_that_is_down_never_changes_the_verdict(tmp_path: Path) -> None:
    dead = f"http://127.0.0.1:{free_port()}/"
    out = tmp_path / "out"
    result = glimmer_run(
        str(_metric_profile(tmp_path / "p.yaml")),
        "--node",
        "n0",
        "--results-dir",
        str(out),
        "--sink-url",
        dead,
        "--sink-timeout",
        "3",
    )
    assert result.exit_code == 0, result.output
    assert "verdict NOT delivered" in result.output
    assert json.loads((out / "run.json").read_text())["phase"] == "Passed"
    assert (out / "envelopes" / "001-RunPhaseChanged.json").is_file()


def test_N3_a_pair_server_decides_nothing_and_sends_nothing(
    tmp_path: Path, receiver: _Receiver
) -> None:
    out = tmp_path / "server"
    result = glimmer_run(
        str(profile(tmp_path / "p.yaml", scope="Pair", script="echo OK")),
        "--role",
        "server",
        "--peer-node",
        "n1",
        "--node",
        "n0",
        "--results-dir",
        str(out),
        "--sink-url",
        receiver.url,
    )
    assert result.exit_code == 2, result.output
    assert receiver.bodies == []
    assert not (out / "envelopes").exists()


def test_N1_sink_options_without_a_url_are_a_usage_error(tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("x")
    result = glimmer_run(
        str(_metric_profile(tmp_path / "p.yaml")),
        "--results-dir",
        str(tmp_path / "out"),
        "--sink-token-file",
        str(token),
    )
    assert result.exit_code == 2
    assert "--sink-token-file need --sink-url" in result.output
    assert not (tmp_path / "out" / "run.json").exists()
