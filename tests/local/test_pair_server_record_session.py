"""A bare-host Pair client folds only its own session's server record, and a server that
did not report never lets the link read silicon (N3, F2, I14 at link scope).

``glimmer run --role client`` without ``--server-record`` decides on its own report, as
in-cluster when the server does not report, but it cannot vouch for the peer: the link's
provenance is ``unknown`` and the run certifies neither node. With ``--server-record`` the
record must be of the client's session, and its attempt must have run beside the
client's; anything else is refused naming the file (the attempt is Error, exit 3)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from glimmer.local.records import SERVER_RECORD_PATH
from tests.local.bare_sides import SESSION, glimmer_run, profile, run_json

SERVER = "echo provenance=silicon; echo serverSide=1; echo SERVER_OK"
CLIENT = "echo provenance=silicon; echo bw=12; echo CLIENT_OK"
OTHER = "other-session-0002"


def _suite(tmp_path: Path) -> Path:
    return profile(
        tmp_path / "pair.yaml",
        scope="Pair",
        script=f'if [ "$BURNIN_ROLE" = server ]; then {SERVER}; else {CLIENT}; fi',
    )


def _server(tmp_path: Path, suite: Path, *, session: str | None = SESSION) -> Path:
    done = glimmer_run(
        str(suite), "--role", "server", "--node", "a", "--peer-node", "b",
        "--results-dir", str(tmp_path / "s"), session=session,
    )  # fmt: skip
    assert done.exit_code == 2, done.output
    return tmp_path / "s" / SERVER_RECORD_PATH


def _client(
    tmp_path: Path, suite: Path, *, record: Path | None, session: str | None = SESSION
) -> tuple[dict[str, Any], dict[str, Any], int, str]:
    args = [str(suite), "--role", "client", "--node", "b", "--peer", "127.0.0.1"]
    args += ["--peer-node", "a", "--results-dir", str(tmp_path / "c")]
    if record is not None:
        args += ["--server-record", str(record)]
    done = glimmer_run(*args, session=session)
    doc = run_json(tmp_path / "c")
    (result,) = doc["results"]
    return doc, dict(result), done.exit_code, done.output


def test_a_client_without_the_servers_record_never_certifies_the_peer(tmp_path: Path) -> None:
    doc, result, code, _ = _client(tmp_path, _suite(tmp_path), record=None, session=None)
    assert result["phase"] == "Passed" and code == 0  # the client decides (F3)
    assert "server a did not report" in result["message"]
    assert result["provenance"] == "unknown", result
    assert doc["certifiesSilicon"] is False


def test_a_server_record_of_this_session_is_folded_and_certifies(tmp_path: Path) -> None:
    suite = _suite(tmp_path)
    record = _server(tmp_path, suite)
    doc, result, code, _ = _client(tmp_path, suite, record=record)
    assert result["phase"] == "Passed" and code == 0, result
    assert "server a Pass (exit 0): SERVER_OK" in result["message"]
    assert result["provenance"] == "silicon"
    assert doc["certifiesSilicon"] is True


def test_a_server_record_of_another_session_is_refused_naming_the_file(tmp_path: Path) -> None:
    suite = _suite(tmp_path)
    record = _server(tmp_path, suite, session=OTHER)
    doc, result, code, _ = _client(tmp_path, suite, record=record)
    assert result["phase"] == "Error" and code == 3, result
    assert str(record) in result["message"] and OTHER in result["message"]
    assert doc["certifiesSilicon"] is False


def test_a_server_record_from_an_earlier_run_of_the_session_is_refused(tmp_path: Path) -> None:
    suite = _suite(tmp_path)
    record = _server(tmp_path, suite)
    body = json.loads(record.read_text())
    for attempt in body["tests"][0]["attempts"]:
        for key in ("startedAt", "finishedAt"):
            when = datetime.strptime(attempt[key], "%Y-%m-%dT%H:%M:%SZ") - timedelta(hours=2)
            attempt[key] = when.strftime("%Y-%m-%dT%H:%M:%SZ")
    record.write_text(json.dumps(body))
    _, result, code, _ = _client(tmp_path, suite, record=record)
    assert result["phase"] == "Error" and code == 3, result
    assert str(record) in result["message"] and "not one session's attempt" in result["message"]


def test_a_client_folding_a_server_record_needs_the_session(tmp_path: Path) -> None:
    suite = _suite(tmp_path)
    record = _server(tmp_path, suite)
    args = [str(suite), "--role", "client", "--node", "b", "--peer", "127.0.0.1"]
    args += ["--peer-node", "a", "--results-dir", str(tmp_path / "c")]
    done = glimmer_run(*args, "--server-record", str(record), session=None)
    assert done.exit_code == 2, done.output
    assert "GLIMMER_SESSION" in done.output
    assert not (tmp_path / "c" / "run.json").exists()


def test_a_server_given_no_session_creates_and_prints_one(tmp_path: Path) -> None:
    suite = _suite(tmp_path)
    done = glimmer_run(
        str(suite), "--role", "server", "--node", "a", "--peer-node", "b",
        "--results-dir", str(tmp_path / "s"), session=None,
    )  # fmt: skip
    assert done.exit_code == 2, done.output
    session = json.loads((tmp_path / "s" / SERVER_RECORD_PATH).read_text())["session"]
    assert f"GLIMMER_SESSION={session}" in done.output


def test_a_server_recorded_under_sim_makes_the_link_sim(tmp_path: Path) -> None:
    suite = _suite(tmp_path)
    done = glimmer_run(
        str(suite), "--role", "server", "--node", "a", "--peer-node", "b", "--sim", "h200",
        "--results-dir", str(tmp_path / "s"),
    )  # fmt: skip
    assert done.exit_code == 2, done.output
    doc, result, code, _ = _client(tmp_path, suite, record=tmp_path / "s" / SERVER_RECORD_PATH)
    assert result["phase"] == "Passed" and code == 0, result
    assert "server a Pass" in result["message"]  # folded in, and sim whatever it declared
    assert result["provenance"] == "sim" and doc["certifiesSilicon"] is False
