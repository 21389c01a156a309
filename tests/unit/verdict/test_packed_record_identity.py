"""A packed record's shard entry is evidence, never a second opinion on the record.

Expanding a packed result reads the full entry from its shard. Everything the verdict
certifies from must agree between the two - the unit, the phase, and also provenance
and suspect - or the result reads Error (unjudged), as weak as the weaker side. Without
it, a shard entry that says ``silicon`` under a status that says ``sim`` would turn a
simulated pass into a silicon one on expansion.
"""

from __future__ import annotations

from typing import Any

import pytest

from glimmer.api import status_layout

SHARD = "0123456789abcdef"


def full_result(*, provenance: str = "sim", suspect: bool = True) -> dict[str, Any]:
    result: dict[str, Any] = {
        "name": "gpu-burn",
        "kind": "gpu-burn",
        "scope": "Node",
        "phase": "Passed",
        "nodes": ["gpu-node-07"],
        "metrics": {"miscompares": "0"},
        "message": "GPU_BURN_PASS",
        "provenance": provenance,
    }
    if suspect:
        result["suspect"] = True
    return result


def expanded(status_side: dict[str, Any], shard_side: dict[str, Any]) -> dict[str, Any]:
    """Pack ``status_side`` as a status write does, then expand it against a shard
    whose entry 0 is ``shard_side``."""
    record = status_layout.compact_result(status_side, shard=SHARD, index=0)
    [unpacked] = status_layout.unpack_records(status_layout.pack_records([record]))
    return status_layout.expand_result(unpacked, {SHARD: [shard_side]})


def test_packed_record_whose_shard_says_silicon_under_a_sim_status_expands_to_error() -> None:
    got = expanded(
        full_result(provenance="sim", suspect=True),
        full_result(provenance="silicon", suspect=True),
    )
    assert got["phase"] == "Error"
    assert "provenance disagrees" in got["message"]
    assert got["provenance"] == "sim"  # never the stronger side


def test_packed_record_whose_shard_says_sim_under_a_silicon_status_expands_to_error() -> None:
    got = expanded(
        full_result(provenance="silicon", suspect=False),
        full_result(provenance="sim", suspect=False),
    )
    assert got["phase"] == "Error"
    assert "provenance disagrees" in got["message"]
    assert got["provenance"] == "sim"  # the weaker side, whichever side it is on


@pytest.mark.parametrize(("status_suspect", "shard_suspect"), [(True, False), (False, True)])
def test_packed_record_whose_suspect_disagrees_with_its_shard_expands_to_error(
    status_suspect: bool, shard_suspect: bool
) -> None:
    got = expanded(full_result(suspect=status_suspect), full_result(suspect=shard_suspect))
    assert got["phase"] == "Error"
    assert "suspect disagrees" in got["message"]
    assert got.get("suspect") is True  # suspect if either side says so


def test_packed_record_whose_shard_agrees_expands_to_the_shard_entry() -> None:
    for provenance, suspect in (("sim", True), ("silicon", False), ("unknown", False)):
        entry = full_result(provenance=provenance, suspect=suspect)
        assert expanded(entry, entry) == entry
