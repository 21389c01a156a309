"""N1-N3 Pair on bare hosts: the server records, the client decides (F2, F3 through the one
combination and the one judgement)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from glimmer.contract import read_report
from glimmer.local.records import SERVER_RECORD_PATH, read_record
from glimmer.plan.gates import threshold_from_wire
from glimmer.verdict import SideReport, combine_pair, judge_attempt
from tests.local.bare_sides import SESSION, free_port, glimmer_run, profile, run_json

GLIMMER = [sys.executable, "-c", "from glimmer.cli import main; main()"]
GATE = {"metric": "tcpThroughputGbps", "comparison": "GreaterThanOrEqual", "value": "0.001"}


def _tcp_profile(path: Path, *, port: int) -> Path:
    return profile(
        path,
        scope="Pair",
        command=[sys.executable, "-m", "runners.tcp_baseline"],
        env={"BURNIN_TCP_BASELINE_PORT": str(port), "BURNIN_TCP_BASELINE_SECONDS": "0.5"},
        thresholds=[GATE],
    )


def test_N3_loopback_server_and_client_reach_the_combined_verdict(tmp_path: Path) -> None:
    """Real processes, real TCP bytes: the client's run.json is exactly what combining
    the server's record with the client's own report and judging it predicts."""
    suite = _tcp_profile(tmp_path / "pair.yaml", port=free_port())
    server_dir, client_dir = tmp_path / "server", tmp_path / "client"
    env = {**os.environ, "PYTHONPATH": str(Path.cwd()), "GLIMMER_SESSION": SESSION}
    server = subprocess.Popen(
        [
            *GLIMMER,
            "run",
            str(suite),
            "--role",
            "server",
            "--node",
            "node-a",
            "--peer",
            "127.0.0.1",
            "--peer-node",
            "node-b",
            "--results-dir",
            str(server_dir),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    client = subprocess.run(
        [
            *GLIMMER,
            "run",
            str(suite),
            "--role",
            "client",
            "--node",
            "node-b",
            "--peer",
            "127.0.0.1",
            "--peer-node",
            "node-a",
            "--results-dir",
            str(client_dir),
            "--server-record",
            str(server_dir / SERVER_RECORD_PATH),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    server_out, _ = server.communicate(timeout=120)
    assert server.returncode == 2, server_out  # nothing judged on the server side
    assert not (server_dir / "run.json").exists()
    assert client.returncode == 0, client.stdout + client.stderr

    record = read_record(server_dir / SERVER_RECORD_PATH)
    assert record.complete and record.role == "server"
    (server_side,) = record.tests
    (server_attempt,) = server_side.attempts
    doc = run_json(client_dir)
    (result,) = doc["results"]
    own = read_report(
        (client_dir / result["rawLogs"][0]).read_bytes(),
        kind="custom",
        exit_code=result["attempts"][0]["exitCode"],
    )
    predicted = judge_attempt(
        combine_pair(
            server=SideReport(label="server", node="node-a", report=server_attempt.report),
            client=SideReport(label="client", node="node-b", report=own),
        ),
        kind="custom",
        thresholds=[threshold_from_wire(GATE)],
    )
    assert result["phase"] == str(predicted.phase) == "Passed"
    assert result["message"] == predicted.message
    assert result["metrics"] == predicted.metrics
    assert float(result["metrics"]["tcpThroughputGbps"]) > 0  # bytes really crossed
    assert result["nodes"] == ["node-a", "node-b"]  # F9 order: server, client
    assert result["attempts"][0]["node"] == "node-a"  # recorded on the server's node
    assert "server node-a Pass" in result["message"] and "client node-b Pass" in result["message"]


def _server_then_client(
    tmp_path: Path, *, server_script: str, client_script: str, record: bool = True
) -> tuple[dict[str, object], int]:
    """Custom commands, the server run to its end first, then the client."""
    # One test on both ends (the record's digest must match); the runner branches on
    # the role it was given.
    both = profile(
        tmp_path / "pair.yaml",
        scope="Pair",
        script=(f'if [ "$BURNIN_ROLE" = server ]; then {server_script}; else {client_script}; fi'),
    )
    s = glimmer_run(
        str(both), "--role", "server", "--node", "a", "--peer-node", "b",
        "--results-dir", str(tmp_path / "s"),
    )  # fmt: skip
    assert s.exit_code == 2, s.output
    args = [str(both), "--role", "client", "--node", "b", "--peer", "127.0.0.1"]
    args += ["--peer-node", "a", "--results-dir", str(tmp_path / "c")]
    if record:
        args += ["--server-record", str(tmp_path / "s" / SERVER_RECORD_PATH)]
    c = glimmer_run(*args)
    (result,) = run_json(tmp_path / "c")["results"]
    return result, c.exit_code


def test_F3_server_fail_outranks_client_pass_on_a_bare_host(tmp_path: Path) -> None:
    result, code = _server_then_client(
        tmp_path, server_script="echo LINK_FAIL: server saw corruption; exit 1",
        client_script="echo x=1; echo LINK_PASS",
    )  # fmt: skip
    assert result["phase"] == "Failed" and code == 1
    assert "server a Fail (exit 1): LINK_FAIL: server saw corruption" in str(result["message"])


def test_N3_without_server_record_the_server_did_not_report(tmp_path: Path) -> None:
    result, code = _server_then_client(
        tmp_path, server_script="echo LINK_FAIL: bad; exit 1",
        client_script="echo x=1; echo LINK_PASS", record=False,
    )  # fmt: skip
    # F2/F3: only the client reported, so its verdict decides (as in-cluster when the
    # client settles first), and the message says the server did not report.
    assert result["phase"] == "Passed" and code == 0
    assert "did not report" in str(result["message"])


def test_F3_client_crash_is_error_never_fail_on_a_bare_host(tmp_path: Path) -> None:
    result, code = _server_then_client(
        tmp_path, server_script="echo LINK_PASS", client_script="echo dying; exit 7"
    )
    assert result["phase"] == "Error" and code == 3


def _client_with_record(tmp_path: Path, record_text: str) -> dict[str, object]:
    suite = profile(tmp_path / "pair.yaml", scope="Pair", script="echo x=1; echo OK")
    record = tmp_path / "record.json"
    record.write_text(record_text)
    c = glimmer_run(
        str(suite), "--role", "client", "--node", "b", "--peer", "127.0.0.1",
        "--peer-node", "a", "--results-dir", str(tmp_path / "c"), "--server-record", str(record),
    )  # fmt: skip
    assert c.exit_code == 3, c.output
    (result,) = run_json(tmp_path / "c")["results"]
    assert result["phase"] == "Error"
    return dict(result)


def _real_server_record(tmp_path: Path, *, script: str = "echo x=1; echo OK") -> dict[str, Any]:
    tmp_path.mkdir()
    suite = profile(tmp_path / "pair.yaml", scope="Pair", script=script)
    s = glimmer_run(
        str(suite), "--role", "server", "--node", "a", "--peer-node", "b",
        "--results-dir", str(tmp_path / "s"),
    )  # fmt: skip
    assert s.exit_code == 2, s.output
    loaded: dict[str, Any] = json.loads((tmp_path / "s" / SERVER_RECORD_PATH).read_text())
    return loaded


def test_N3_a_malformed_server_record_is_error_not_did_not_report(tmp_path: Path) -> None:
    result = _client_with_record(tmp_path, '{"kind": "BurnInSideRecord", "kind": 1}')
    assert "server record unusable" in str(result["message"])
    assert "duplicate JSON key" in str(result["message"])


def test_N3_a_forged_pass_beside_exit_1_is_refused(tmp_path: Path) -> None:
    body = _real_server_record(tmp_path / "first")
    report = body["tests"][0]["attempts"][0]["report"]
    report["exitCode"] = 1  # the outcome still says Pass
    result = _client_with_record(tmp_path, json.dumps(body))
    assert "does not follow from exit 1" in str(result["message"])


def test_N3_a_foreign_server_record_is_refused(tmp_path: Path) -> None:
    body = _real_server_record(tmp_path / "first")
    body["node"] = "someone-else"
    result = _client_with_record(tmp_path, json.dumps(body))
    assert "foreign record" in str(result["message"]) and "someone-else" in str(result["message"])


def test_N3_an_edited_server_record_fails_its_own_digest(tmp_path: Path) -> None:
    body = _real_server_record(tmp_path / "first")
    body["tests"][0]["spec"]["runner"]["command"] = ["sh", "-c", "echo edited"]
    result = _client_with_record(tmp_path, json.dumps(body))
    assert "does not match the test it came with" in str(result["message"])


def test_N3_a_server_record_of_another_test_version_is_refused(tmp_path: Path) -> None:
    """Same test name, another spec on the server: a consistent record, but not of the
    client's test, so it is never folded in."""
    body = _real_server_record(tmp_path / "first", script="echo y=2; echo OTHER")
    result = _client_with_record(tmp_path, json.dumps(body))
    assert "holds another version of test 'inline-0-custom'" in str(result["message"])
