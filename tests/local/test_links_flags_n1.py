"""N1: the side flags are validated before anything is read or run.

Flag combinations that cannot mean anything are usage errors (exit 2) naming the flag
and the fix; a profile with no test of the scope the flags run is refused as "not run"
(exit 3) naming the tests and the flags that would run them. Nothing is written in
either case. (A mixed profile runs: see ``test_mixed_scopes_n5.py``.)
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.local.bare_sides import glimmer_run, profile


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["--role", "server", "--rank", "0"], "--role and --rank cannot be used together"),
        (["--role", "client", "--peer-node", "x"], "--role client needs --peer HOST"),
        (["--role", "server"], "--role server needs --peer-node NODE"),
        (["--role", "server", "--peer-node", "me"], "a link needs two different nodes"),
        (["--role", "server", "--peer-node", "x", "--server-record", "f"], "read by the client"),
        (["--peer", "h"], "go with --role"),
        (["--nranks", "3"], "need --rank R"),
        (["--rank", "0", "--root", "h"], "--rank needs --nranks N"),
        (["--rank", "3", "--nranks", "3", "--root", "h"], "outside 0..2"),
        (["--rank", "1", "--nranks", "3"], "--rank needs --root HOST"),
        (["--role", "client", "--peer", "h", "--nranks", "2"], "go with --rank"),
    ],
    ids=[
        "role+rank",
        "client-no-peer",
        "server-no-peer-node",
        "self-peer",
        "server-record-on-server",
        "peer-without-role",
        "nranks-without-rank",
        "rank-no-nranks",
        "rank-out-of-range",
        "rank-no-root",
        "group-flag-with-role",
    ],
)
def test_N1_side_flags_are_usage_errors_naming_the_flag(
    tmp_path: Path, args: list[str], named: str
) -> None:
    suite = profile(tmp_path / "p.yaml", scope="Pair", script="exit 0")
    out = tmp_path / "r"
    result = glimmer_run(str(suite), "--node", "me", "--results-dir", str(out), *args)
    assert result.exit_code == 2, result.output
    assert named in result.output
    assert not out.exists()


@pytest.mark.parametrize(
    ("scope", "args", "advice"),
    [
        ("Pair", [], "--role server|client --peer HOST --peer-node NODE"),
        ("Group", [], "--rank R --nranks N --root HOST"),
        ("Node", ["--role", "server", "--peer-node", "x"], "without --role/--rank"),
        ("Group", ["--role", "server", "--peer-node", "x"], "--rank R --nranks N"),
        ("Pair", ["--rank", "0", "--nranks", "2", "--root", "h"], "--role server|client"),
        ("Node", ["--rank", "1", "--nranks", "2", "--root", "h"], "without --role/--rank"),
    ],
    ids=["pair-plain", "group-plain", "node-role", "group-role", "pair-rank", "node-rank"],
)
def test_N1_a_test_of_another_scope_is_refused_with_the_flags_that_run_it(
    tmp_path: Path, scope: str, args: list[str], advice: str
) -> None:
    suite = profile(tmp_path / "p.yaml", scope=scope, script="exit 0")
    out = tmp_path / "r"
    result = glimmer_run(str(suite), "--node", "me", "--results-dir", str(out), *args)
    assert result.exit_code == 3, result.output
    assert "refused" in result.output and f"({scope})" in result.output
    assert advice in result.output
    assert not out.exists()


def test_N2_rendezvous_env_reaches_the_runner_and_reserved_names_are_ignored(
    tmp_path: Path,
) -> None:
    script = 'echo "role=$BURNIN_ROLE"; echo "peer=$BURNIN_PEER_HOST@$BURNIN_PEER_NODE"'
    suite = profile(
        tmp_path / "p.yaml",
        scope="Pair",
        script=f"{script}; echo OK",
        env={"BURNIN_ROLE": "client"},  # reserved: ignored on a bare host (N2)
    )
    result = glimmer_run(
        str(suite), "--role", "server", "--node", "a", "--peer", "10.0.0.9",
        "--peer-node", "b", "--results-dir", str(tmp_path / "r"),
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    log = next((tmp_path / "r" / "raw").iterdir()).read_text()
    assert "role=server" in log and "peer=10.0.0.9@b" in log
