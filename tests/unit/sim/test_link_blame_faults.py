"""The simulated fabric's link-blame faults (docs/link-blame.md): ``bad-nic`` spoils every
link of its node, ``bad-cable=<node>`` only the one to that node; both travel in the
perftest handshake, so the two ends of a link measure the same thing."""

from __future__ import annotations

import pytest

from runners.sdk.outcome import RunnerError
from runners.sdk.simgpu.fabric import PEER_NODE_ENV, SimFabric
from runners.sdk.simgpu.spec import BAD_NIC_FAULT, parse_spec
from runners.sdk.simgpu.state import SimState


def fabric(text: str) -> SimFabric:
    return SimFabric(SimState(spec=parse_spec(text)))


def test_bad_nic_spoils_every_link_of_its_node(monkeypatch: pytest.MonkeyPatch) -> None:
    assert parse_spec("h200x8:bad-nic").has(BAD_NIC_FAULT)
    for peer in ("node-b", "node-c", ""):
        monkeypatch.setenv(PEER_NODE_ENV, peer)
        assert fabric("h200x8:bad-nic")._link_degraded()
        assert not fabric("h200x8")._link_degraded()


def test_bad_cable_spoils_only_the_link_to_the_named_node(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    spec = parse_spec("h200x8:bad-cable=node-b")
    assert spec.bad_cables == {"node-b"} and not spec.has(BAD_NIC_FAULT)
    monkeypatch.setenv(PEER_NODE_ENV, "node-b")
    assert fabric("h200x8:bad-cable=node-b")._link_degraded()
    monkeypatch.setenv(PEER_NODE_ENV, "node-c")
    assert not fabric("h200x8:bad-cable=node-b")._link_degraded()
    monkeypatch.delenv(PEER_NODE_ENV)
    assert not fabric("h200x8:bad-cable=node-b")._link_degraded()


def test_a_misspelt_blame_fault_is_refused() -> None:
    for text in ("h200x8:bad-cable", "h200x8:bad-cable=", "h200x8:bad-nics"):
        with pytest.raises(RunnerError):
            parse_spec(text)
