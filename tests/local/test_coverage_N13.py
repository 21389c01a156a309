"""``glimmer coverage`` end to end (N13, N14): real ``glimmer run`` processes per fault on
the simulated GPU, the matrix read back from their run.json."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import yaml

from glimmer.local.coverage import (
    Case,
    CaseOutcome,
    Coverage,
    PlannedTest,
    TestCell,
    derived_documents,
    modelled_faults,
)
from glimmer.local.manifests import load_documents
from glimmer.report.coverage import coverage_html, coverage_json
from runners.fault_matrix import FABRIC_FAULTS, FAULT_STORIES, FAULTS, LINK_FAULTS

ACCEPTANCE = Path(__file__).resolve().parents[2] / "glimmer" / "examples" / "acceptance.yaml"

#: What the bundled acceptance profile catches on h200x2, and by which required tests:
#: the specification this test holds the command to (the tests' own verdicts per fault
#: are runners/fault_matrix.py's, run by the conformance suite).
ACCEPTANCE_CATCHERS: dict[str, list[str]] = {
    "low-clock": ["clockprobe", "gpu-burn"],
    "ecc-uncorrectable": ["dcgm-diag", "host-health"],
    "remap-pending": ["dcgm-diag", "host-health"],
    "fallen-off-bus": [
        "gemm-correctness-bf16",
        "clockprobe",
        "dcgm-diag",
        "host-health",
        "memory-bw",
        "gpu-burn",
    ],
    "xid:79": ["dcgm-diag", "host-health"],
    "low-bandwidth": ["dcgm-diag", "memory-bw"],
    "nan-compute": ["gemm-correctness-bf16", "gpu-burn"],
    "sdc": ["gpu-burn"],
    # gpu-burn's five minutes outlast the cooling (its clock floor decides); the rest a
    # burst profile misses need their own readings gated or a fabric test
    # (docs/simulated-gpu.md, "Readings that show what no runner fails").
    "thermal-throttle": ["gpu-burn"],
    "power-brake": [],
    "pcie-downtrain": ["dcgm-diag", "memory-bw"],
    "nvlink-down": ["dcgm-diag"],
    "ecc-correctable-storm": [],
    "nic-flap-under-load": [],
    "no-driver": [
        "gemm-correctness-bf16",
        "clockprobe",
        "dcgm-diag",
        "host-health",
        "memory-bw",
        "gpu-burn",
    ],
    "crash": [
        "gemm-correctness-bf16",
        "clockprobe",
        "dcgm-diag",
        "host-health",
        "memory-bw",
        "gpu-burn",
        "memory-stress",
    ],
}


def glimmer(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from glimmer.cli import main; main()", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def profile_file(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "profile.yaml"
    path.write_text(textwrap.dedent(body))
    return path


#: gpu-burn (a sustained load test that checks its results repeatedly, with a clock floor)
#: and clockprobe.
WITH_GPU_BURN = """\
    apiVersion: burnin.glimmer.ai/v1alpha1
    kind: BurnInProfile
    metadata: {name: with-gpu-burn}
    spec:
      tests:
      - testRef: gpu-burn
      - testRef: clockprobe
    ---
    apiVersion: burnin.glimmer.ai/v1alpha1
    kind: BurnInTest
    metadata: {name: gpu-burn}
    spec:
      kind: gpu-burn
      durationSeconds: 60
      thresholds:
      - {metric: sustainedClockPct, comparison: GreaterThanOrEqual, value: "85"}
    ---
    apiVersion: burnin.glimmer.ai/v1alpha1
    kind: BurnInTest
    metadata: {name: clockprobe}
    spec:
      kind: clockprobe
      durationSeconds: 30
      thresholds:
      - {metric: sustainedClockPct, comparison: GreaterThanOrEqual, value: "85"}
    """


def test_N13_acceptance_profile_coverage_catches_sdc_and_names_what_it_misses(
    tmp_path: Path,
) -> None:
    """The bundled profile's gpu-burn catches ``sdc`` (and the cooling that gives out),
    so ``--require sdc`` passes; what it misses is named with what would catch it."""
    proc = glimmer(
        "coverage", "-o", "json", "--require", "sdc,thermal-throttle", "--work-dir",
        str(tmp_path / "w"), cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc: dict[str, Any] = json.loads(proc.stdout)
    assert doc["controlPassed"] is True
    assert doc["summary"]["line"] == (
        "catches 13 of 16 modelled faults; misses: power-brake, ecc-correctable-storm, "
        "nic-flap-under-load"
    )
    caught = {f["fault"]: [c["test"] for c in f["caughtBy"]] for f in doc["faults"]}
    assert caught == ACCEPTANCE_CATCHERS
    sdc = next(f for f in doc["faults"] if f["fault"] == "sdc")
    assert sdc["runPhase"] == "Failed" and sdc["caught"] is True
    assert sdc["caughtBy"] == [
        {"test": "gpu-burn", "phase": "Failed", "gate": "runner verdict GPU_BURN_FAIL"}
    ]
    brake = next(f for f in doc["faults"] if f["fault"] == "power-brake")
    assert brake["runPhase"] == "Passed" and brake["caught"] is False
    assert brake["caughtByKind"] == FAULT_STORIES["power-brake"].caught_by
    assert brake["models"] == FAULT_STORIES["power-brake"].models
    low_clock = next(f for f in doc["faults"] if f["fault"] == "low-clock")
    assert low_clock["caughtBy"][0] == {
        "test": "clockprobe", "phase": "Failed", "gate": "runner verdict CLOCKPROBE_FAIL"
    }  # fmt: skip
    assert low_clock["caughtBy"][1]["gate"].startswith("sustainedClockPct: got ")
    # The host-real test runs only where a modelled fault reaches it (crash), never to
    # load the host for real in the control or under a GPU fault.
    healthy = doc["control"][0]["tests"]
    assert [t["phase"] for t in healthy if t["kind"] == "memory-stress"] == [None]
    crash = next(f for f in doc["faults"] if f["fault"] == "crash")
    assert [t["phase"] for t in crash["tests"] if t["kind"] == "memory-stress"] == ["Error"]

    # N13: the one brain. A plain `glimmer run` of the user's file under a fault reaches
    # the phase and the failing tests coverage reported for it.
    run = glimmer(
        "run", str(ACCEPTANCE), "--sim", "h200x2:low-bandwidth", "--report-dir",
        str(tmp_path / "r"), cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 1, run.stdout + run.stderr
    record = json.loads((tmp_path / "r" / "run.json").read_text())
    covered = next(f for f in doc["faults"] if f["fault"] == "low-bandwidth")
    assert covered["runPhase"] == record["phase"]
    assert [c["test"] for c in covered["caughtBy"]] == [
        r["name"] for r in record["results"] if r["required"] and r["phase"] in ("Failed", "Error")
    ]


def without_gpu_burn(tmp_path: Path) -> Path:
    """The bundled profile with its gpu-burn entry (and test) taken out."""
    docs = [d for d in yaml.safe_load_all(ACCEPTANCE.read_text()) if d]
    kept = [d for d in docs if not (d["kind"] == "BurnInTest" and d["spec"]["kind"] == "gpu-burn")]
    for doc in kept:
        if doc["kind"] == "BurnInProfile":
            tests = doc["spec"]["tests"]
            doc["spec"]["tests"] = [t for t in tests if t.get("testRef") != "gpu-burn"]
    path = tmp_path / "no-gpu-burn.yaml"
    path.write_text(yaml.safe_dump_all(kept, sort_keys=False))
    return path


def test_N13_acceptance_without_gpu_burn_misses_sdc_and_require_sdc_fails(
    tmp_path: Path,
) -> None:
    """Without a sustained load test that checks its results repeatedly the profile
    misses ``sdc``, says so with what would catch it, and ``--require sdc`` exits 1 (N14)."""
    path = without_gpu_burn(tmp_path)
    proc = glimmer(
        "coverage", str(path), "-o", "json", "--require", "sdc", "--work-dir",
        str(tmp_path / "w"), cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "required fault(s) missed: sdc" in proc.stderr
    doc: dict[str, Any] = json.loads(proc.stdout)
    assert doc["summary"]["line"] == (
        "catches 11 of 16 modelled faults; misses: sdc, thermal-throttle, power-brake, "
        "ecc-correctable-storm, nic-flap-under-load"
    )
    without = {
        fault: [t for t in tests if t != "gpu-burn"] for fault, tests in ACCEPTANCE_CATCHERS.items()
    }
    caught = {f["fault"]: [c["test"] for c in f["caughtBy"]] for f in doc["faults"]}
    assert caught == without
    sdc = next(f for f in doc["faults"] if f["fault"] == "sdc")
    assert sdc["runPhase"] == "Passed" and sdc["caught"] is False
    assert sdc["caughtByKind"] == FAULT_STORIES["sdc"].caught_by
    assert sdc["models"] == FAULT_STORIES["sdc"].models


def test_N13_profile_with_gpu_burn_catches_sdc_and_the_table_says_what_each_fault_models(
    tmp_path: Path,
) -> None:
    path = profile_file(tmp_path, WITH_GPU_BURN)
    proc = glimmer("coverage", str(path), "--require", "sdc,low-clock", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert "SIMULATED GPU (h200x2): fault coverage of with-gpu-burn" in out
    assert "tests: 1 gpu-burn  2 clockprobe" in out
    sdc_row = next(line for line in out.splitlines() if line.startswith("sdc "))
    assert sdc_row.split() == ["sdc", "\u2716", "\u2714", "\u2716", "FAIL", "caught"]
    assert "sdc: CAUGHT by gpu-burn (FAIL: runner verdict GPU_BURN_FAIL)" in out
    # A gate decides too: gpu-burn passes its own checks under low-clock, its clock floor
    # does not; the row names the violated gate as the run recorded it.
    assert "low-clock: CAUGHT by gpu-burn (FAIL: sustainedClockPct: got " in out
    assert "need GreaterThanOrEqual 85); clockprobe (FAIL: runner verdict CLOCKPROBE_FAIL)" in out
    # Misses are named on the summary line and each says what kind of test catches it.
    summary = next(line for line in out.splitlines() if line.startswith("catches "))
    assert summary.startswith("catches 6 of 16 modelled faults; misses: ")
    missed = summary.split("misses: ")[1].split(", ")
    # gpu-burn's 60 s window ends before the cooling gives out, and its clock floor (85 %)
    # is far below what the brakes cost the mean: both need their own readings gated.
    assert missed == [
        "ecc-uncorrectable",
        "remap-pending",
        "xid:79",
        "low-bandwidth",
        "thermal-throttle",
        "power-brake",
        "pcie-downtrain",
        "nvlink-down",
        "ecc-correctable-storm",
        "nic-flap-under-load",
    ]
    for fault in missed:
        assert f"{fault}: MISSED (the run would Pass)\n" in out
        assert f"\n  caught by: {FAULT_STORIES[fault].caught_by}\n" in out
    for fault in modelled_faults("h200x2"):
        assert f"\n  models: {FAULT_STORIES[fault].models}\n" in out


def test_N13_a_profile_that_fails_a_healthy_node_measures_no_coverage(tmp_path: Path) -> None:
    """The healthy control must Pass: otherwise every fault would read "caught"."""
    path = profile_file(
        tmp_path,
        """\
        apiVersion: burnin.glimmer.ai/v1alpha1
        kind: BurnInProfile
        metadata: {name: impossible-floor}
        spec:
          tests:
          - testRef: memory-bw
        ---
        apiVersion: burnin.glimmer.ai/v1alpha1
        kind: BurnInTest
        metadata: {name: memory-bw}
        spec:
          kind: memory-bw
          thresholds:
          - {metric: hostToDeviceBandwidthGBs, comparison: GreaterThanOrEqual, value: "100000"}
        """,
    )
    proc = glimmer("coverage", str(path), cwd=tmp_path)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "the healthy control (h200x2) did not Pass" in proc.stderr
    assert "memory-bw Failed (hostToDeviceBandwidthGBs" in proc.stderr
    assert "catches" not in proc.stdout


def test_N14_require_names_only_modelled_faults(tmp_path: Path) -> None:
    proc = glimmer("coverage", "--require", "sdc,bitflip", cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "--require bitflip: not a modelled fault of h200x2" in proc.stderr
    assert "known: " in proc.stderr and "sdc" in proc.stderr.split("known: ")[1]


def test_N13_sim_names_parts_not_faults(tmp_path: Path) -> None:
    proc = glimmer("coverage", "--sim", "h200x2:sdc", cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "name the part only" in proc.stderr
    proc = glimmer("coverage", "--sim", "h9000", cwd=tmp_path)
    assert proc.returncode == 2 and "unknown profile" in proc.stderr


def test_N13_the_faults_of_a_part_are_those_the_simulator_accepts_on_it() -> None:
    nvidia = [f for f in FAULTS if f != "healthy"]
    assert list(modelled_faults("h200x2")) == nvidia
    # An Xid is an NVIDIA driver event and an AMD part has no NVLink: the simulator
    # refuses both there, and a single GPU has no NVLink to lose.
    refused_on_amd = ("xid:79", "nvlink-down")
    assert list(modelled_faults("mi300xx2")) == [f for f in nvidia if f not in refused_on_amd]
    assert "nvlink-down" not in modelled_faults("h200")


def test_N13_every_modelled_fault_tells_what_it_models_and_what_catches_it() -> None:
    assert set(FAULT_STORIES) == set(FAULTS) | set(FABRIC_FAULTS) | set(LINK_FAULTS)
    for story in FAULT_STORIES.values():
        assert story.models.endswith(".") and story.caught_by


def test_N13_host_real_tests_run_only_where_a_modelled_fault_reaches_them() -> None:
    documents = load_documents(ACCEPTANCE)

    def kinds(fault: str) -> list[str]:
        bodies = derived_documents(documents, Case("h200x2", fault))
        profile = next(b for b in bodies if b["kind"] == "BurnInProfile")
        return [entry["testRef"] for entry in profile["spec"]["tests"]]

    assert "memory-stress" not in kinds("healthy")
    assert "memory-stress" not in kinds("sdc")
    assert "memory-stress" in kinds("crash")
    assert kinds("sdc") == [k for k in kinds("crash") if k != "memory-stress"]
    # Everything else is the user's, unchanged.
    bodies = derived_documents(documents, Case("h200x2", "sdc"))
    assert [b for b in bodies if b["kind"] == "BurnInTest"] == [
        yaml.safe_load(yaml.safe_dump(dict(d.body))) for d in documents if d.kind == "BurnInTest"
    ]


def _coverage() -> Coverage:
    tests = (
        PlannedTest(name="clockprobe", kind="clockprobe", required=True),
        PlannedTest(name="memory-stress", kind="memory-stress", required=True),
    )

    def outcome(fault: str, phase: str, cells: tuple[TestCell, ...]) -> CaseOutcome:
        return CaseOutcome(case=Case("h200x2", fault), phase=phase, exit_code=0, cells=cells)

    passed = TestCell(name="clockprobe", kind="clockprobe", phase="Passed", required=True)
    failed = TestCell(
        name="clockprobe", kind="clockprobe", phase="Failed", required=True,
        gate="sustainedClockPct: 17.4 < 85",
    )  # fmt: skip
    return Coverage(
        profile="p",
        sims=("h200x2",),
        control=(outcome("healthy", "Passed", (passed,)),),
        faults=(outcome("low-clock", "Failed", (failed,)), outcome("sdc", "Passed", (passed,))),
        tests=tests,
        seconds=1.0,
        jobs=2,
    )


def test_N13_html_is_a_self_contained_heatmap_in_words_and_shapes() -> None:
    page = coverage_html(_coverage())
    assert "<script" not in page and "default-src 'none'" in page
    assert page.count('data-caught="missed"') == 1 and page.count('data-caught="caught"') == 1
    assert page.count('data-caught="control"') == 1
    assert '<td class="cell fail" title="sustainedClockPct: 17.4 &lt; 85">' in page
    assert "catches 1 of 2 modelled faults; misses: sdc" in page
    assert FAULT_STORIES["sdc"].models in page
    # A test a case left out reads "not run", never a guessed phase.
    assert '<td class="cell absent"' in page


def test_N13_json_names_the_catcher_and_the_miss() -> None:
    doc = coverage_json(_coverage())
    assert doc["kind"] == "BurnInCoverage" and doc["provenance"] == "sim"
    low, sdc = doc["faults"]
    assert low["caughtBy"] == [
        {"test": "clockprobe", "phase": "Failed", "gate": "sustainedClockPct: 17.4 < 85"}
    ]
    assert "caughtByKind" not in low
    assert sdc["caught"] is False and sdc["caughtByKind"] == FAULT_STORIES["sdc"].caught_by


def test_N13_a_profile_of_real_host_tests_only_has_nothing_to_cover(tmp_path: Path) -> None:
    path = profile_file(
        tmp_path,
        """\
        apiVersion: burnin.glimmer.ai/v1alpha1
        kind: BurnInProfile
        metadata: {name: host-only}
        spec:
          tests:
          - testRef: memory-stress
        ---
        apiVersion: burnin.glimmer.ai/v1alpha1
        kind: BurnInTest
        metadata: {name: memory-stress}
        spec: {kind: memory-stress, durationSeconds: 10}
        """,
    )
    proc = glimmer("coverage", str(path), cwd=tmp_path)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "every test of the profile loads the real host (memory-stress)" in proc.stderr
    assert "catches" not in proc.stdout
