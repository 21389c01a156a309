"""Bare-host delivery (N1-N3): the envelope file, and the POST through the webhook code."""

from __future__ import annotations

import socket
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from glimmer.contract.envelope import decode
from glimmer.sinks import DeliveryError, deliver_run_document, send_envelope, verify
from glimmer.sinks.build import envelope_from_run_document
from tests.unit.sinks.receiver import Receiver

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
DOCUMENT: dict[str, Any] = {
    "run": {"namespace": "local", "name": "host-1", "profile": "acc"},
    "phase": "Failed",
    "results": [{"name": "t", "kind": "custom", "phase": "Failed", "nodes": ["host-1"]}],
}


def test_N3_the_terminal_envelope_is_written_whether_or_not_a_sink_is_set(tmp_path: Path) -> None:
    outcome = deliver_run_document(DOCUMENT, results_dir=tmp_path, now=NOW)
    assert outcome.delivered is None
    assert outcome.path == tmp_path / "envelopes" / "001-RunPhaseChanged.json"
    env = decode(outcome.path.read_bytes())
    assert (env.reason, env.phase, env.run.namespace) == ("RunPhaseChanged", "Failed", "local")
    assert env.summary.failed == 1
    assert [p.name for p in (tmp_path / "envelopes").iterdir()] == ["001-RunPhaseChanged.json"]


def test_N3_an_unreachable_sink_is_reported_never_raised(tmp_path: Path) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    outcome = deliver_run_document(
        DOCUMENT, results_dir=tmp_path, now=NOW, sink_url=f"https://127.0.0.1:{port}/",
        sink_timeout=3,
    )  # fmt: skip
    assert outcome.delivered is False and "127.0.0.1" in outcome.error
    assert outcome.path.exists()


async def test_N1_sink_flags_post_with_token_file_ca_and_signature(tmp_path: Path) -> None:
    receiver = Receiver()
    await receiver.start()
    try:
        token, ca, key = tmp_path / "token", tmp_path / "ca.pem", tmp_path / "key"
        token.write_text("bare-token\n")
        ca.write_text(receiver.ca_pem)
        key.write_text("k")
        env = envelope_from_run_document(DOCUMENT, sent_at=NOW)
        receiver.script.extend([502])  # retried once, a second later
        naps: list[float] = []

        async def nap(seconds: float) -> None:
            naps.append(seconds)

        await send_envelope(
            env, url=receiver.url, token_file=token, ca_file=ca, signing_key_file=key,
            sleep=nap, wall=lambda: 1_796_126_400,
        )  # fmt: skip
        [refused, got] = receiver.received
        assert refused.status == 502 and got.status == 200 and naps == [1.0]
        assert got.headers["Authorization"] == "Bearer bare-token"
        assert got.headers["Idempotency-Key"] == env.delivery_id
        assert verify(got.body, got.headers["X-Glimmer-Signature"], key=b"k", now=1_796_126_400)
        receiver.script.extend([401])
        with pytest.raises(DeliveryError) as caught:
            await send_envelope(env, url=receiver.url, token_file=token, ca_file=ca, sleep=nap)
        assert caught.value.permanent and "HTTP 401" in str(caught.value)
        # Without the CA the system store does not trust the test receiver.
        with pytest.raises(DeliveryError, match="Certificate"):
            await send_envelope(env, url=receiver.url, attempts=1)
        await send_envelope(env, url=receiver.url, insecure_skip_verify=True)
    finally:
        await receiver.stop()
