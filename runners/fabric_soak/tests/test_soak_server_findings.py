"""The client decides a Pair (F2), so what only the server sees must reach the client.

A flapping port is often visible only in the counters at one end. A server still
printing its verdict when the client exits is recorded "did not report" by the
operator, so if the client judged only its own end, the flap would be lost to a race
(a Pass over a bad link). The server's delta travels in the session's ``SUMMARY``.
"""

from __future__ import annotations

import pytest

from runners.catalog import RUNNERS
from runners.conformance import DEFAULT_TIMEOUT_S, execute_together, loopback_addresses, pair_env
from runners.fabric_soak.runner import link_delta
from runners.sdk.platform import SIM_ENV
from runners.sdk.rdma_pair import decode_summary, encode_summary
from runners.sdk.rendezvous import ProtocolError


def test_link_delta_sums_both_ends_and_never_vouches_for_an_unread_end() -> None:
    assert link_delta(0, 0) == 0
    assert link_delta(2, 3) == 5
    assert link_delta(None, 4) == 4  # a measured movement stands
    assert link_delta(4, None) == 4
    assert link_delta(0, None) is None  # a quiet end says nothing about the other
    assert link_delta(None, 0) is None
    assert link_delta(None, None) is None


def test_F2_a_flap_seen_only_at_the_server_fails_the_clients_own_verdict() -> None:
    spec = RUNNERS["fabric-soak"]
    server_ip, client_ip = loopback_addresses(2)
    envs = [
        {
            **spec.test_env,
            **pair_env("server", own=server_ip, peer=client_ip, peer_node="node-c"),
            SIM_ENV: "h200:flapping-link",
        },
        {
            **spec.test_env,
            **pair_env("client", own=client_ip, peer=server_ip, peer_node="node-s"),
            SIM_ENV: "h200",
        },
    ]
    server, client = execute_together(
        spec.command, kind=spec.kind, envs=envs, timeout_s=DEFAULT_TIMEOUT_S
    )
    assert server.exit_code == 1, server.stdout[-600:]
    assert client.exit_code == 1, client.stdout[-600:]
    assert int(client.report.metrics["linkErrorEvents"]) > 0
    assert int(client.report.metrics["peerLinkErrorEvents"]) > 0
    assert "linkErrorEvents" in client.report.message and "node-s" in client.report.message


def test_a_session_that_ends_without_the_servers_summary_is_an_error_never_a_clean_link() -> None:
    line = encode_summary({"linkErrorEvents": "3"})
    assert decode_summary(line, peer="server s") == {"linkErrorEvents": "3"}
    for said in (None, "", "DONE 0 0 END", "SUMMARY linkErrorEvents"):
        with pytest.raises(ProtocolError, match="without its summary"):
            decode_summary(said, peer="server s")
