"""F2 on a bare host: a side that did not reach its own end (cut at its deadline,
interrupted, never started) declared nothing that may be folded into the link."""

from __future__ import annotations

from pathlib import Path

import pytest

from glimmer.contract import read_report
from glimmer.local.links import PairClient, PairFlags
from glimmer.local.records import SERVER, SideAttempt, SideRecord, SideTest, write_record
from glimmer.plan import PlannedTest
from glimmer.verdict import Termination

TEST = PlannedTest(name="link", required=True, spec={"kind": "custom", "scope": "Pair"})
SESSION = "side-end-session"


def _attempt(output: bytes, exit_code: int, termination: Termination) -> SideAttempt:
    return SideAttempt(
        attempt=1,
        report=read_report(output, kind="custom", exit_code=exit_code),
        termination=termination,
        started_at="2030-01-01T00:00:00Z",
        finished_at="2030-01-01T00:00:05Z",
    )


@pytest.mark.parametrize(
    "termination",
    [
        Termination(exit_code=0, reason="DeadlineExceeded", deadline_exceeded=True),
        Termination(exit_code=0, reason="Interrupted", interrupted=True),
        Termination(exit_code=-1, reason="StartError", detail="no such file"),
    ],
    ids=["deadline", "interrupted", "never-started"],
)
def test_F2_a_server_that_did_not_reach_its_end_did_not_report(
    tmp_path: Path, termination: Termination
) -> None:
    record = SideRecord(
        role=SERVER, node="a", peer_host="b", peer_node="b", profile="p", sim=None,
        retry_on_error_limit=0, complete=True, session=SESSION,
        tests=[SideTest(test=TEST, attempts=[_attempt(b"LINK_FAIL: x\n", 1, termination)])],
    )  # fmt: skip
    path = write_record(record, tmp_path / "server-record.json")
    client = PairClient(
        node="b",
        flags=PairFlags(
            role="client", peer_host="h", peer_node="a", server_record=path, session=SESSION
        ),
        profile="p",
    )
    own = _attempt(b"x=1\nLINK_PASS\n", 0, Termination(exit_code=0, reason="Completed"))
    combined = client.fold(test=TEST, attempt=own)
    assert str(combined.outcome) == "Pass"  # the server's Fail was never a finished verdict
    assert "did not report" in combined.message


def test_F2_a_finished_server_fail_is_folded_in(tmp_path: Path) -> None:
    done = Termination(exit_code=1, reason="Error")
    record = SideRecord(
        role=SERVER, node="a", peer_host="b", peer_node="b", profile="p", sim=None,
        retry_on_error_limit=0, complete=True, session=SESSION,
        tests=[SideTest(test=TEST, attempts=[_attempt(b"LINK_FAIL: x\n", 1, done)])],
    )  # fmt: skip
    path = write_record(record, tmp_path / "server-record.json")
    client = PairClient(
        node="b",
        flags=PairFlags(
            role="client", peer_host="h", peer_node="a", server_record=path, session=SESSION
        ),
        profile="p",
    )
    own = _attempt(b"x=1\nLINK_PASS\n", 0, Termination(exit_code=0, reason="Completed"))
    assert str(client.fold(test=TEST, attempt=own).outcome) == "Fail"
