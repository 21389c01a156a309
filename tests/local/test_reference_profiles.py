"""Reference-shaped profiles through ``glimmer run --sim``.

Each profile in ``tests/fixtures/reference_profiles/`` is written against the
reference's v1alpha1 API as a reference user would write it. On a bare host under the
simulator each reaches the verdict the operator reaches (N1), a mixed profile runs its
Node tests and reports its Pair/Group tests Skipped with the command that runs them
(N5), a segmented soak runs as one window judged through the soak functions (G1, N2),
and nothing run under ``--sim`` certifies silicon.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

PROFILES = Path(__file__).resolve().parents[1] / "fixtures" / "reference_profiles"


def glimmer_run(
    profile: str, report: Path, *, sim: str = "h200"
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "from glimmer.cli import main; main()",
            "run",
            str(PROFILES / profile),
            "--sim",
            sim,
            "--node",
            "host-a",
            "--report-dir",
            str(report),
        ],
        cwd=report.parent,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def run_document(report: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((report / "run.json").read_text())
    return doc


def phases(doc: dict[str, Any]) -> dict[str, str]:
    return {r["name"]: r["phase"] for r in doc["results"]}


#: profile file -> the per-test phases a simulated H200 reaches (run phase Passed).
NODE_PROFILES: dict[str, dict[str, str]] = {
    "smoke.yaml": {"smoke-host-health": "Passed", "smoke-gemm": "Passed"},
    "variant-sweep.yaml": {
        "sweep-gemm-bf16": "Passed",
        "sweep-gemm-fp8": "Passed",
        "sweep-gemm-tf32": "Passed",
        "sweep-gemm-fp4": "Skipped",  # A3: a declared skip on sm_90, optional
    },
    "inference-readiness.yaml": {
        "inf-host-health": "Passed",
        "inf-memory-bw": "Passed",
        "inf-gemm-fp8": "Passed",
        "inf-clockprobe": "Passed",
    },
    "mixed-fleet.yaml": {
        "fleet-host-health": "Passed",
        "fleet-memory-bw": "Passed",
        "fleet-clockprobe": "Passed",
        "fleet-gemm-bf16": "Passed",
    },
    "periodic-reverification.yaml": {
        "reverify-host-health": "Passed",
        "reverify-memory-bw": "Passed",
    },
    "segmented-soak.yaml": {"seg-thermal": "Passed"},
}

#: profile file -> (phases of the tests run here, {link test: its scope}).
MIXED_PROFILES: dict[str, tuple[dict[str, str], dict[str, str]]] = {
    "standard.yaml": (
        {"std-host-health": "Passed", "std-memory-bw": "Passed", "std-clockprobe": "Passed"},
        {"std-nccl-pair": "Pair"},
    ),
    "extended.yaml": (
        {
            "ext-host-health": "Passed",
            "ext-dcgm-diag": "Passed",
            "ext-gpu-burn": "Passed",
            "ext-memory-stress": "Passed",
            "ext-disk-io": "Passed",
        },
        {"ext-nccl-group": "Group"},
    ),
    "post-maintenance.yaml": (
        {"pm-host-health": "Passed", "pm-memory-stress": "Passed", "pm-gemm": "Passed"},
        {"pm-ib-write-bw": "Pair"},
    ),
}

LINK_COMMAND = {
    "Pair": "--role server --peer-node NODE",
    "Group": "--rank R --nranks N --root HOST",
}


@pytest.mark.parametrize("profile", sorted(NODE_PROFILES))
def test_N1_a_reference_node_profile_reaches_its_verdict_under_sim(
    profile: str, tmp_path: Path
) -> None:
    report = tmp_path / "r"
    proc = glimmer_run(profile, report)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = run_document(report)
    assert doc["phase"] == "Passed"
    assert phases(doc) == NODE_PROFILES[profile]
    assert doc["provenance"] == "sim" and doc["certifiesSilicon"] is False
    assert doc.get("notRunHere", []) == []


@pytest.mark.parametrize("profile", sorted(MIXED_PROFILES))
def test_N5_a_reference_mixed_profile_runs_its_node_tests_and_skips_its_links(
    profile: str, tmp_path: Path
) -> None:
    report = tmp_path / "r"
    proc = glimmer_run(profile, report)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = run_document(report)
    ran, links = MIXED_PROFILES[profile]
    assert doc["phase"] == "Passed"
    assert phases(doc) == {**ran, **dict.fromkeys(links, "Skipped")}
    assert doc["notRunHere"] == sorted(links)
    by_name = {r["name"]: r for r in doc["results"]}
    for name, scope in links.items():
        skipped = by_name[name]
        assert skipped["scope"] == scope and skipped["attempts"] == []
        assert skipped["message"].startswith("not run on this host")
        assert LINK_COMMAND[scope] in skipped["message"]
    assert doc["certifiesSilicon"] is False
    assert "NOT A FULL RUN OF THE PROFILE" in proc.stdout


def test_N1_G1_a_reference_week_long_soak_finishes_under_the_simulators_clock(
    tmp_path: Path,
) -> None:
    """604800 s in 3600 s segments: under --sim the soak reaches Passed, its elapsedS
    gate (the whole week) met."""
    report = tmp_path / "r"
    proc = glimmer_run("week-soak.yaml", report)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = run_document(report)
    assert doc["phase"] == "Passed" and phases(doc) == {"week-thermal": "Passed"}
    (soak,) = doc["results"]
    assert float(soak["metrics"]["elapsedS"]) >= 604800
    assert doc["certifiesSilicon"] is False


def test_N8_a_reference_mixed_fleet_profile_judges_an_amd_node_too(tmp_path: Path) -> None:
    """RequiredIfMeasurable vendor counters: the profile an H200 passes, an MI300X
    passes too (xidEvents is n/a on AMD and not evaluated, not a Fail)."""
    report = tmp_path / "r"
    proc = glimmer_run("mixed-fleet.yaml", report, sim="mi300x")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = run_document(report)
    assert doc["phase"] == "Passed"
    assert phases(doc) == NODE_PROFILES["mixed-fleet.yaml"]
    health = {r["name"]: r for r in doc["results"]}["fleet-host-health"]
    assert "xidEvents is unmeasurable" in health["message"]
    assert doc["host"]["simulatedGpu"] == "mi300x" and doc["certifiesSilicon"] is False


def test_N1_N5_a_reference_pair_only_profile_is_refused_on_a_plain_run(tmp_path: Path) -> None:
    """A Pair-only profile has nothing of a plain run's scope: refused (exit 3), naming
    the --role command that runs it; nothing is judged."""
    report = tmp_path / "r"
    proc = glimmer_run("pair-network.yaml", report)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "pair-ib-write-bw (Pair), pair-nccl (Pair)" in proc.stderr + proc.stdout
    assert "--role server|client" in proc.stderr + proc.stdout
    assert not (report / "run.json").exists()


def test_N3_a_reference_pair_network_profile_passes_as_server_and_client_on_loopback(
    tmp_path: Path,
) -> None:
    """The Pair-only profile run as its two ends (``--role server`` / ``--role
    client``, one session): the client decides, every link test Passed, naming both."""
    suite = str(PROFILES / "pair-network.yaml")
    server_dir, client_dir = tmp_path / "server", tmp_path / "client"
    env = {**os.environ, "GLIMMER_SESSION": "test-session-0001"}
    base = [sys.executable, "-c", "from glimmer.cli import main; main()", "run", suite]
    common = ["--sim", "h200", "--peer", "127.0.0.1"]
    server = subprocess.Popen(
        [*base, *common, "--role", "server", "--node", "node-a", "--peer-node", "node-b",
         "--results-dir", str(server_dir)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
    )  # fmt: skip
    client = subprocess.run(
        [*base, *common, "--role", "client", "--node", "node-b", "--peer-node", "node-a",
         "--results-dir", str(client_dir),
         "--server-record", str(server_dir / "sidecar" / "server-record.json")],
        capture_output=True, text=True, env=env, timeout=300, check=False,
    )  # fmt: skip
    server_out, _ = server.communicate(timeout=300)
    assert server.returncode == 2, server_out  # a server decides nothing
    assert client.returncode == 0, client.stdout + client.stderr
    doc = run_document(client_dir)
    assert doc["phase"] == "Passed"
    assert phases(doc) == {"pair-ib-write-bw": "Passed", "pair-nccl": "Passed"}
    for result in doc["results"]:
        assert sorted(result["nodes"]) == ["node-a", "node-b"]
    assert doc["certifiesSilicon"] is False
