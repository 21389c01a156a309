"""``glimmer run`` end to end on this host: real runner processes, simulated GPU."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from glimmer.local.process import run_runner
from runners.fault_matrix import FAULT_MATRIX, NOT_READ
from runners.fault_matrix import FAULTS as MATRIX_FAULTS


def glimmer(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from glimmer.cli import main; main()", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def document(report: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((report / "run.json").read_text())
    return doc


def test_acceptance_profile_passes_on_a_healthy_simulated_h200(tmp_path: Path) -> None:
    proc = glimmer("run", "--sim", "h200", "--report-dir", str(tmp_path / "r"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = document(tmp_path / "r")
    assert doc["phase"] == "Passed"
    # compute-smoke is the FP4 test and an H200 has none: its declared skip (not required
    # in the bundled profile), then GEMM correctness in bf16 and the other six.
    assert [r["phase"] for r in doc["results"]] == ["Skipped"] + ["Passed"] * 7
    assert "sm_90 (Hopper) has no FP4 tensor cores" in doc["results"][0]["message"]
    assert doc["provenance"] == "sim" and doc["certifiesSilicon"] is False
    assert "memory-bw" in doc["suspectResults"]
    assert "memory-stress" not in doc["suspectResults"]  # real host DIMMs, not the GPU
    # I3: the table's title and the run's line say SIMULATED (once each, not per row).
    above, summary = proc.stdout.split("\nTEST")
    assert above.splitlines()[-1] == "SIMULATED GPU (h200): no silicon was measured"
    run_line = next(line for line in summary.splitlines() if line.startswith("run "))
    assert "SIMULATED GPU (h200)" in run_line and "no silicon was measured" in run_line
    # M7: a simulated pass is said in words (proves the plumbing), never "suspect".
    assert "suspect" not in summary and "plumbing" in summary.split("\nrun ")[0]


#: Every fault the simulator models on one H200, from the one matrix (a hand copy once
#: lost ``sdc``); ``nvlink-down`` needs two GPUs and is refused on one (below).
FAULTS = [f for f in MATRIX_FAULTS if f not in ("healthy", "nvlink-down")]
#: Where the acceptance profile's own gates decide beyond the runner's verdict: gpu-burn's
#: clock floor (85 %) sees a part pinned low, and over its five minutes the cooling that
#: gives out after two.
THRESHOLD_DECIDES = {
    ("gpu-burn", "low-clock"): "Failed",
    ("gpu-burn", "thermal-throttle"): "Failed",
}


@pytest.mark.parametrize("fault", FAULTS)
def test_every_fault_gives_the_documented_phase(tmp_path: Path, fault: str) -> None:
    proc = glimmer("run", "--sim", f"h200:{fault}", "--report-dir", str(tmp_path), cwd=tmp_path)
    doc = document(tmp_path)
    got = {r["kind"]: r["phase"] for r in doc["results"]}
    want = {
        kind: THRESHOLD_DECIDES.get(
            (kind, fault),
            "Passed" if FAULT_MATRIX[kind][fault] == NOT_READ else FAULT_MATRIX[kind][fault],
        )
        for kind in got
    }
    assert got == want
    # The run's phase follows from its results (Failed beats Error beats Passed): a fault
    # the acceptance profile cannot see (``power-brake``: no gate on hardware slowdowns)
    # Passes here.
    phases = set(got.values())
    expected = "Failed" if "Failed" in phases else "Error" if "Error" in phases else "Passed"
    assert doc["phase"] == expected
    assert proc.returncode == {"Passed": 0, "Failed": 1, "Error": 3}[expected]


def test_a_fault_the_part_cannot_have_is_refused_before_anything_runs(tmp_path: Path) -> None:
    proc = glimmer("run", "--sim", "h200:nvlink-down", "--report-dir", str(tmp_path), cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "nvlink-down needs at least two GPUs" in proc.stderr and "h200x8" in proc.stderr
    assert not (tmp_path / "run.json").exists()


def test_without_gpu_and_without_sim_it_says_how_to_simulate(tmp_path: Path) -> None:
    proc = glimmer("run", "--report-dir", str(tmp_path), cwd=tmp_path)
    assert proc.returncode == 3
    assert "no GPU found" in proc.stderr and "--sim h200" in proc.stderr


def custom_profile(tmp_path: Path, script: str, **spec: Any) -> Path:
    body = {"kind": "custom", "runner": {"command": ["sh", "-c", script]}, **spec}
    path = tmp_path / "profile.yaml"
    path.write_text(
        "kind: BurnInProfile\nmetadata: {name: p}\nspec:\n  tests:\n  - inline: "
        + json.dumps(body)
        + "\n"
    )
    return path


GATE = {"thresholds": [{"metric": "bw", "comparison": "GreaterThanOrEqual", "value": "10"}]}


@pytest.mark.parametrize(
    ("script", "spec", "phase", "code"),
    [
        ("echo bw=12; echo OK", GATE, "Passed", 0),
        ("echo bw=12; echo BAD; exit 1", GATE, "Failed", 1),
        ("echo bw=9", GATE, "Failed", 1),
        ("echo X_SKIP: not here; exit 2", GATE, "Skipped", 2),
        ("echo oops; exit 2", GATE, "Error", 3),
        ("echo only prose", GATE, "Error", 3),
        ("kill -9 $$", {}, "Error", 3),
    ],
    ids=[
        "passed",
        "failed-exit1",
        "failed-threshold",
        "skipped",
        "undeclared-skip",
        "empty-harvest",
        "killed",
    ],
)
def test_custom_command_drives_every_phase(
    tmp_path: Path, script: str, spec: dict[str, Any], phase: str, code: int
) -> None:
    profile = custom_profile(tmp_path, script, **spec)
    proc = glimmer("run", str(profile), "--report-dir", str(tmp_path / "r"), cwd=tmp_path)
    doc = document(tmp_path / "r")
    assert doc["results"][0]["phase"] == phase, doc["results"][0]["message"]
    assert proc.returncode == code
    assert doc["provenance"] == "unknown"  # I14: no declaration is never silicon


@pytest.mark.parametrize(
    ("script", "provenance", "certified"),
    [
        ("echo provenance=silicon; echo bw=12", "silicon", True),
        ("echo provenance=sim; echo provenance=silicon; echo bw=12", "sim", False),
        ("echo bw=12", "unknown", False),
    ],
    ids=["declared-silicon", "sim-anywhere-wins", "undeclared"],
)
def test_I14_only_a_positive_silicon_declaration_certifies(
    tmp_path: Path, script: str, provenance: str, certified: bool
) -> None:
    profile = custom_profile(tmp_path, script, **GATE)
    proc = glimmer("run", str(profile), "--report-dir", str(tmp_path / "r"), cwd=tmp_path)
    doc = document(tmp_path / "r")
    assert proc.returncode == 0
    assert (doc["provenance"], doc["certifiesSilicon"]) == (provenance, certified)


def test_error_retried_then_passed_records_the_trigger(tmp_path: Path) -> None:
    script = 'if [ "$BURNIN_ATTEMPT" = 1 ]; then echo flaky; exit 3; fi; echo bw=20'
    profile = custom_profile(tmp_path, script, **GATE)
    proc = glimmer(
        "run", str(profile), "--retry-on-error", "1", "--report-dir", str(tmp_path), cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stdout
    result = document(tmp_path)["results"][0]
    assert result["phase"] == "Passed" and result["errorRetries"] == 1
    assert [a["trigger"] for a in result["attempts"]] == ["Initial", "ErrorRetry"]
    assert [a["phase"] for a in result["attempts"]] == ["Error", "Passed"]
    assert result["lastRetryTrigger"] == "flaky"


def test_failed_is_never_retried(tmp_path: Path) -> None:
    profile = custom_profile(tmp_path, "echo bw=1", **GATE)
    glimmer(
        "run", str(profile), "--retry-on-error", "5", "--report-dir", str(tmp_path), cwd=tmp_path
    )
    result = document(tmp_path)["results"][0]
    assert result["phase"] == "Failed" and len(result["attempts"]) == 1


def test_repeats_run_sequentially_and_all_must_pass(tmp_path: Path) -> None:
    script = "echo bw=$((8 + BURNIN_ATTEMPT))"
    profile = custom_profile(tmp_path, script, repeatCount=3, **GATE)
    glimmer("run", str(profile), "--report-dir", str(tmp_path), cwd=tmp_path)
    result = document(tmp_path)["results"][0]
    # attempt 1 prints bw=9 (< 10): the first Failed settles, no more repeats
    assert result["phase"] == "Failed" and len(result["attempts"]) == 1
    profile = custom_profile(tmp_path, "echo bw=$((9 + BURNIN_ATTEMPT))", repeatCount=3, **GATE)
    glimmer("run", str(profile), "--report-dir", str(tmp_path), cwd=tmp_path)
    result = document(tmp_path)["results"][0]
    assert result["phase"] == "Passed" and result["repeatsCompleted"] == 3
    assert [a["trigger"] for a in result["attempts"]] == ["Initial", "Repeat", "Repeat"]


def test_pair_and_group_are_refused_with_a_clear_message(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(
        textwrap.dedent("""\
        kind: BurnInProfile
        metadata: {name: p}
        spec:
          tests:
          - inline: {kind: ib-write-bw, scope: Pair}
    """)
    )
    proc = glimmer("run", str(path), "--report-dir", str(tmp_path), cwd=tmp_path)
    assert proc.returncode == 3
    assert "Node scope only" in proc.stderr or "refused" in proc.stderr


def test_plan_refusal_is_reported_not_run(tmp_path: Path) -> None:
    profile = custom_profile(
        tmp_path,
        "echo bw=1",
        thresholds=[{"metric": "bw", "comparison": "GreaterThanOrEqual", "value": "NaN"}],
    )
    proc = glimmer("run", str(profile), "--report-dir", str(tmp_path), cwd=tmp_path)
    assert proc.returncode == 3 and "plan refused" in proc.stderr


def test_A14_deadline_is_error_even_when_the_runner_exits_0(tmp_path: Path) -> None:
    script = "trap 'echo bw=99; exit 0' TERM; while true; do sleep 0.1; done"
    started = time.monotonic()
    outcome = run_runner(
        command=["sh", "-c", script],
        env={"PATH": "/usr/bin:/bin"},
        kind="custom",
        deadline_seconds=1.0,
        raw_log=tmp_path / "log",
    )
    assert time.monotonic() - started < 10
    assert outcome.termination.deadline_exceeded
    assert outcome.report.exit_code == 0  # the trap ran; the deadline still wins (A14)
