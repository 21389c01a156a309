"""N3: one Pair or Group test, two dispatchers, one verdict.

The same deterministic runner goes (a) through the operator against a real apiserver and
simulated kubelets and (b) through ``glimmer run`` on this host: a server and a client
on loopback (``--server-record``), or three ``--rank`` runs and ``glimmer merge``. Both
must reach the same phase, metrics, unmeasurable names, violations and message (the bare
runs are given the simulated nodes' names, so the messages compare byte for byte).

The runner synchronises over TCP rather than by sleeping: the server (rank 0) accepts its
peers, prints its lines and closes; each peer waits for that close. On a bare host a
Pair client then holds on until the server's record exists; in the cluster it does not,
and the operator's grace for the server's report (SERVER_REPORT_GRACE_SECONDS) folds the
server's verdict in. Either way it is folded in rather than "did not report". Every
bare side is given one session (GLIMMER_SESSION), as a launcher script would."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from glimmer.local.records import SERVER_RECORD_PATH, rank_record_path
from glimmer.testing import wait_for_verdict
from tests.integration.run.conftest import Operator, apply_profile, create_run
from tests.integration.run.test_links_cluster import assert_nothing_left, link_nodes
from tests.local.bare_sides import SESSION, free_port, glimmer_merge, profile, run_json

pytestmark = [pytest.mark.controlplane, pytest.mark.timeout(300)]

GLIMMER = [sys.executable, "-c", "from glimmer.cli import main; main()"]
IMAGE = "example.com/custom:1"
#: The fields a verdict is made of; both dispatchers must agree on every one.
VERDICT_FIELDS = ("phase", "message", "metrics", "unmeasurable", "violations", "nodes")

#: The runner: XCHECK_PLAN maps a side ("server", "client", "rank0", ...; "*" for the
#: rest) to the lines it prints and how it ends (an exit code, or "SEGV").
SIDE = r"""
import json, os, signal, socket, sys, time
env = os.environ
role = env.get("BURNIN_ROLE") or "rank" + env.get("BURNIN_RANK", "?")
plan = json.loads(env["XCHECK_PLAN"])
mine = plan.get(role) or plan["*"]
port = int(env["XCHECK_PORT"])
hub = role in ("server", "rank0")
if hub:
    peers = 1 if role == "server" else int(env["BURNIN_NRANKS"]) - 1
    listener = socket.create_server(("", port), reuse_port=False)
    listener.settimeout(90)
    conns = []
    for _ in range(peers):
        conn, _ = listener.accept()
        conn.settimeout(90)
        conn.recv(1)
        conns.append(conn)
else:
    host = env.get("BURNIN_PEER_HOST") or env["BURNIN_ROOT_HOST"]
    deadline = time.monotonic() + 90
    while True:
        try:
            conn = socket.create_connection((host, port), timeout=5)
            break
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
    conn.sendall(b"x")
    conn.settimeout(90)
    conn.recv(1)
    if role == "client":
        wait = env.get("XCHECK_AWAIT_FILE")
        if wait:
            until = time.monotonic() + 90
            while not os.path.exists(wait) and time.monotonic() < until:
                time.sleep(0.1)
for line in mine["lines"]:
    print(line, flush=True)
if hub:
    for conn in conns:
        conn.close()
if mine["end"] == "SEGV":
    os.kill(os.getpid(), signal.SIGSEGV)
sys.exit(mine["end"])
"""


def side(*lines: str, end: int | str = 0) -> dict[str, Any]:
    return {"lines": list(lines), "end": end}


PAIR_GATE = [{"metric": "tcpThroughputGbps", "comparison": "GreaterThanOrEqual", "value": "5"}]
GROUP_GATE = [{"metric": "bw", "comparison": "GreaterThanOrEqual", "value": "10"}]
SERVER_OK = side("serverSide=1", "LINK_OK: listener served")
CLIENT_OK = side("tcpThroughputGbps=9.5", "LINK_OK: 9.5 Gbps")

PAIR_CASES = {
    "pass": ({"server": SERVER_OK, "client": CLIENT_OK}, "Passed"),
    "client-threshold-fail": (
        {"server": SERVER_OK, "client": side("tcpThroughputGbps=2.5", "LINK_OK: 2.5 Gbps")},
        "Failed",
    ),
    "server-fail": (
        {
            "server": side("serverSide=0", "LINK_FAIL: server saw corruption", end=1),
            "client": CLIENT_OK,
        },
        "Failed",
    ),
    "client-crash": ({"server": SERVER_OK, "client": side("half a line", end="SEGV")}, "Error"),
}
RANK_OK = side("bw=20", "RING_OK")
GROUP_CASES = {
    "pass": ({"*": RANK_OK}, "Passed"),
    "rank-fail": ({"*": RANK_OK, "rank1": side("bw=20", "RING_FAIL: miscompare", end=1)}, "Failed"),
    "rank-na": ({"*": RANK_OK, "rank1": side("bw=n/a", "RING_OK: no counter")}, None),
}


def env_for(plan: dict[str, Any], port: int) -> dict[str, str]:
    return {"XCHECK_PLAN": json.dumps(plan, sort_keys=True), "XCHECK_PORT": str(port)}


#: The one part of a message the dispatchers word differently: who reports a signalled
#: runner's termination reason (a kubelet says "Error", as a real one does for exit 139;
#: ``glimmer run`` names the signal). The exit code beside it must still agree.
TERMINATION_REASON = re.compile(r'(terminated abnormally \(exit -?\d+), reason "[^"]*"\)')


def verdict(result: dict[str, Any]) -> dict[str, Any]:
    """The verdict fields of one result, absent lists and maps as empty ones."""
    empty: dict[str, Any] = {"metrics": {}, "unmeasurable": [], "violations": []}
    fields = {key: result.get(key) or empty.get(key) for key in VERDICT_FIELDS}
    fields["message"] = TERMINATION_REASON.sub(r"\1, reason ...)", str(fields["message"]))
    return fields


async def in_cluster(
    *, kube: Any, namespace: str, nodes: list[str], scope: str, env: dict[str, str],
    gate: list[dict[str, str]],
) -> dict[str, Any]:  # fmt: skip
    spec = {
        "kind": "custom",
        "scope": scope,
        "durationSeconds": 60,
        "runner": {
            "image": IMAGE,
            "command": [sys.executable, "-c", SIDE],
            "env": [{"name": k, "value": v} for k, v in env.items()],
        },
        "thresholds": gate,
    }
    await apply_profile(kube, namespace, {"link": spec})
    await create_run(kube, namespace, "link", nodes)
    run = await wait_for_verdict(kube, namespace=namespace, name="link", timeout=180)
    await assert_nothing_left(kube, namespace, nodes)
    [result] = run["status"]["results"]
    return dict(result)


def glimmer_proc(*args: str) -> subprocess.Popen[str]:
    env = {
        **os.environ,
        "PYTHONPATH": str(Path(__file__).resolve().parents[3]),
        "GLIMMER_SESSION": SESSION,
    }
    return subprocess.Popen(
        [*GLIMMER, "run", *args, "--runtime", "process"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )


def bare_pair(
    tmp_path: Path, *, nodes: list[str], env: dict[str, str], gate: list[dict[str, str]]
) -> tuple[dict[str, Any], int]:
    """A server and a client ``glimmer run`` on loopback; the client decides."""
    server_dir, client_dir = tmp_path / "server", tmp_path / "client"
    record = server_dir / SERVER_RECORD_PATH
    suite = profile(
        tmp_path / "pair.yaml",
        scope="Pair",
        command=[sys.executable, "-c", SIDE],
        env={**env, "XCHECK_AWAIT_FILE": str(record)},
        thresholds=gate,
    )
    server_node, client_node = nodes
    server = glimmer_proc(
        str(suite), "--role", "server", "--node", server_node, "--peer", "127.0.0.1",
        "--peer-node", client_node, "--results-dir", str(server_dir),
    )  # fmt: skip
    client = glimmer_proc(
        str(suite), "--role", "client", "--node", client_node, "--peer", "127.0.0.1",
        "--peer-node", server_node, "--results-dir", str(client_dir),
        "--server-record", str(record),
    )  # fmt: skip
    server_out, _ = server.communicate(timeout=150)
    client_out, _ = client.communicate(timeout=150)
    assert server.returncode == 2, server_out  # the server never judges
    assert not (server_dir / "run.json").exists()
    (result,) = run_json(client_dir)["results"]
    assert "did not report" not in str(result["message"]), client_out
    return dict(result), client.returncode


def bare_group(
    tmp_path: Path, *, nodes: list[str], env: dict[str, str], gate: list[dict[str, str]]
) -> tuple[dict[str, Any], int]:
    """Every rank a ``glimmer run --rank`` on loopback, then ``glimmer merge``."""
    suite = profile(
        tmp_path / "group.yaml",
        scope="Group",
        command=[sys.executable, "-c", SIDE],
        env=env,
        thresholds=gate,
    )

    def rank_args(rank: int, node: str) -> list[str]:
        args = [str(suite), "--rank", str(rank), "--nranks", str(len(nodes))]
        args += ["--root", "127.0.0.1", "--root-node", nodes[0], "--node", node]
        return [*args, "--results-dir", str(tmp_path / f"r{rank}")]

    ranks = [glimmer_proc(*rank_args(rank, node)) for rank, node in enumerate(nodes)]
    for proc in ranks:
        out, _ = proc.communicate(timeout=150)
        assert proc.returncode == 2, out  # no rank judges
    merged = tmp_path / "merged"
    (merged / "ranks").mkdir(parents=True)
    for rank in range(len(nodes)):
        shutil.copy(tmp_path / f"r{rank}" / rank_record_path(rank), merged / rank_record_path(rank))
    done = glimmer_merge("--results-dir", str(merged), "--nranks", str(len(nodes)))
    (result,) = run_json(merged)["results"]
    return dict(result), done.exit_code


EXIT_OF = {"Passed": 0, "Failed": 1, "Error": 3}


@pytest.mark.parametrize("case", sorted(PAIR_CASES))
async def test_N3_a_pair_reaches_the_same_verdict_in_cluster_and_on_bare_hosts(
    case: str,
    operator: Operator,
    kube: Any,
    namespace: str,
    sim_nodes: Any,
    tmp_path: Path,
) -> None:
    plan, phase = PAIR_CASES[case]
    nodes = link_nodes(sim_nodes, 2).names
    env = env_for(plan, free_port(0))
    cluster = await in_cluster(
        kube=kube, namespace=namespace, nodes=nodes, scope="Pair", env=env, gate=PAIR_GATE
    )
    bare, code = bare_pair(tmp_path, nodes=nodes, env=env_for(plan, free_port(0)), gate=PAIR_GATE)
    assert verdict(bare) == verdict(cluster)
    assert cluster["phase"] == phase and code == EXIT_OF[phase], cluster
    assert cluster["nodes"] == nodes
    assert f"server {nodes[0]}" in cluster["message"] and f"client {nodes[1]}" in cluster["message"]
    if case == "client-threshold-fail":
        assert [v["metric"] for v in cluster["violations"]] == ["tcpThroughputGbps"]
    if case == "client-crash":  # the reason aside, the exit and the wording agree
        assert "client " + nodes[1] + " Error (exit 139)" in cluster["message"]
        assert "exit 139, reason" in bare["message"]
    if case == "pass":  # client wins shared keys; the server's own keys are kept
        assert cluster["metrics"] == {"serverSide": "1", "tcpThroughputGbps": "9.5"}


@pytest.mark.parametrize("case", sorted(GROUP_CASES))
async def test_N3_a_group_of_three_reaches_the_same_verdict_in_cluster_and_after_merge(
    case: str,
    operator: Operator,
    kube: Any,
    namespace: str,
    sim_nodes: Any,
    tmp_path: Path,
) -> None:
    plan, phase = GROUP_CASES[case]
    nodes = link_nodes(sim_nodes, 3).names
    cluster = await in_cluster(
        kube=kube, namespace=namespace, nodes=nodes, scope="Group",
        env=env_for(plan, free_port(0)), gate=GROUP_GATE,
    )  # fmt: skip
    bare, code = bare_group(tmp_path, nodes=nodes, env=env_for(plan, free_port(0)), gate=GROUP_GATE)
    assert verdict(bare) == verdict(cluster)
    assert cluster["nodes"] == nodes
    if phase is not None:
        assert cluster["phase"] == phase and code == EXIT_OF[phase], cluster
    if case == "rank-fail":
        assert f"rank 1 ({nodes[1]})" in cluster["message"]
    if case == "rank-na":  # one rank's n/a is never hidden behind the others' 20
        assert "bw" in cluster["unmeasurable"] and "bw" not in (cluster.get("metrics") or {})
        assert cluster["phase"] != "Passed"
