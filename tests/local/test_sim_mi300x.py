"""``glimmer run --sim mi300x``: the acceptance profile reaches a verdict on a simulated
AMD node, an AMD-shaped profile passes there (gfx942's GEMMs in FP8 through gemm-sweep:
compute-smoke is the FP4 test, a declared skip on gfx942), and the load samples (gpu-burn,
thermal-soak and gemm-sweep on the simulated AMD parts) reach a verdict."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest


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


def test_acceptance_profile_reaches_a_verdict_on_a_simulated_mi300x(tmp_path: Path) -> None:
    """The sample acceptance profile is NVIDIA-shaped: on an MI300X it reaches a verdict
    that says why — DCGM's image is built for NVIDIA nodes and the host probe (N8) says
    this one is AMD, so that execution is an E14 Error as on an AMD node in a cluster,
    and its Required ``xidEvents`` gate meets host-health's ``n/a`` (an AMD part has no
    Xids) — while clockprobe and memory-bw measure the part through their ROCm images'
    stand-ins and pass, suspect (simulated), and compute-smoke declares its FP4 skip on
    gfx942 (no FP4 matrix cores)."""
    proc = glimmer("run", "--sim", "mi300x", "--report-dir", str(tmp_path / "r"), cwd=tmp_path)
    doc = document(tmp_path / "r")
    phases = {r["kind"]: r for r in doc["results"]}
    assert doc["phase"] in ("Failed", "Error") and proc.returncode in (1, 3)
    assert doc["provenance"] == "sim" and doc["certifiesSilicon"] is False
    assert phases["clockprobe"]["phase"] == "Passed"
    assert phases["memory-bw"]["phase"] == "Passed"
    assert phases["compute-smoke"]["phase"] == "Skipped", phases["compute-smoke"]["message"]
    assert "gfx942 (CDNA 3) has no FP4 matrix cores" in phases["compute-smoke"]["message"]
    assert {"clockprobe", "memory-bw"} <= set(doc["suspectResults"])
    assert phases["dcgm-diag"]["phase"] == "Error"
    dcgm = phases["dcgm-diag"]["message"]
    assert "the default 'dcgm-diag' image is built for nvidia nodes" in dcgm
    assert phases["host-health"]["phase"] == "Failed"
    assert "xidEvents" in phases["host-health"]["message"]
    assert "unmeasurable" in phases["host-health"]["message"]
    assert "SIMULATED GPU (mi300x)" in proc.stdout


AMD_PROFILE = """\
kind: BurnInProfile
metadata: {name: amd-node}
spec:
  tests:
  - inline:
      kind: host-health
      thresholds:
      - {metric: xidEvents, comparison: Equal, value: "0", applicability: RequiredIfMeasurable}
      - {metric: pcieReplayErrors, comparison: Equal, value: "0"}
      - {metric: eccErrors, comparison: Equal, value: "0"}
      - {metric: remappedRows, comparison: Equal, value: "0"}
  - inline:
      kind: memory-bw
      thresholds:
      - {metric: memoryBandwidthGBs, comparison: GreaterThanOrEqual, value: "4000"}
      - {metric: hostToDeviceBandwidthGBs, comparison: GreaterThanOrEqual, value: "20"}
  - inline:
      kind: clockprobe
      thresholds:
      - {metric: sustainedClockPct, comparison: GreaterThanOrEqual, value: "90"}
      - {metric: gpuTempC, comparison: LessThanOrEqual, value: "95"}
  - inline:
      kind: gemm-sweep
      thresholds:
      - {metric: nonfiniteCount, comparison: Equal, value: "0"}
      - {metric: maxRelativeError, comparison: LessThanOrEqual, value: "0.05"}
    variants:
    - {name: fp8, axes: {precision: fp8}}
  - inline:
      kind: gpu-burn
      durationSeconds: 60
      thresholds:
      - {metric: miscompares, comparison: Equal, value: "0"}
      - {metric: sdcDetections, comparison: Equal, value: "0"}
      - {metric: eccErrors, comparison: Equal, value: "0"}
  - inline:
      kind: gemm-sweep
      thresholds:
      - {metric: achievedTflops, comparison: GreaterThanOrEqual, value: "500"}
"""


@pytest.mark.parametrize("sim", ["mi300x", "mi325x"])
def test_amd_profile_passes_on_a_healthy_simulated_instinct(tmp_path: Path, sim: str) -> None:
    profile = tmp_path / "amd.yaml"
    profile.write_text(AMD_PROFILE)
    proc = glimmer(
        "run", str(profile), "--sim", sim, "--report-dir", str(tmp_path / "r"), cwd=tmp_path
    )
    doc = document(tmp_path / "r")
    assert doc["phase"] == "Passed", proc.stdout + proc.stderr
    assert [r["phase"] for r in doc["results"]] == ["Passed"] * 6
    assert doc["provenance"] == "sim" and doc["certifiesSilicon"] is False


@pytest.mark.parametrize(
    ("fault", "kind"),
    [
        ("low-clock", "clockprobe"),
        ("low-bandwidth", "memory-bw"),
        ("ecc-uncorrectable", "host-health"),
        ("remap-pending", "host-health"),
        ("fallen-off-bus", "host-health"),
        ("nan-compute", "gemm-sweep"),
        ("sdc", "gpu-burn"),
    ],
)
def test_amd_profile_fails_on_each_fault_it_can_see(tmp_path: Path, fault: str, kind: str) -> None:
    profile = tmp_path / "amd.yaml"
    profile.write_text(AMD_PROFILE)
    glimmer(
        "run",
        str(profile),
        "--sim",
        f"mi300xx2:{fault}",
        "--report-dir",
        str(tmp_path / "r"),
        cwd=tmp_path,
    )
    doc = document(tmp_path / "r")
    phases = {r["kind"]: r["phase"] for r in doc["results"]}
    assert phases[kind] == "Failed" and doc["phase"] == "Failed"


def test_xid_fault_on_an_amd_profile_is_a_usage_error(tmp_path: Path) -> None:
    proc = glimmer(
        "run", "--sim", "mi300x:xid:79", "--report-dir", str(tmp_path / "r"), cwd=tmp_path
    )
    assert proc.returncode != 0
    assert "xid faults are NVIDIA driver events" in proc.stderr


SAMPLES = Path(__file__).resolve().parents[2] / "manifests" / "samples"


def run_sample(sample: str, tmp_path: Path) -> dict[str, Any]:
    folder = SAMPLES / sample
    glimmer(
        "run",
        str(folder / "profile.yaml"),
        "--tests",
        str(folder / "tests.yaml"),
        "--sim",
        "mi300x",
        "--report-dir",
        str(tmp_path / "r"),
        cwd=tmp_path,
    )
    return document(tmp_path / "r")


def test_gemm_precision_sweep_on_mi300x_skips_only_fp4_naming_gfx942(tmp_path: Path) -> None:
    doc = run_sample("gemm-precision-sweep", tmp_path)
    results = doc["results"]
    skipped = [r for r in results if r["phase"] == "Skipped"]
    assert len(skipped) == 1 and "gfx942 has no FP4 matrix path" in skipped[0]["message"]
    assert [r["phase"] for r in results if r is not skipped[0]] == ["Passed"] * 4
    assert doc["phase"] == "Passed" and doc["provenance"] == "sim"


def test_load_soak_on_mi300x_passes_with_xids_unmeasurable(tmp_path: Path) -> None:
    doc = run_sample("load-soak", tmp_path)
    phases = {r["kind"]: r for r in doc["results"]}
    assert doc["phase"] == "Passed" and doc["certifiesSilicon"] is False
    for kind in ("gpu-burn", "thermal-soak"):
        assert phases[kind]["phase"] == "Passed"
        assert "xidEvents is unmeasurable" in phases[kind]["message"]
