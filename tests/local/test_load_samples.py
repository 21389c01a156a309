"""The load samples (manifests/samples/load-soak, gemm-precision-sweep, gb10-node) reach a
verdict under ``glimmer run --sim``, and their gates are sound (semantics B3, B4, C4)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from glimmer.api import BurnInProfile, BurnInTest, from_object
from glimmer.contract.names import DIMENSIONLESS, unit_of
from glimmer.contract.registry import REGISTRY, SPREAD_METRICS, ThresholdUse
from glimmer.verdict.lint import lint_thresholds
from glimmer.verdict.thresholds import Threshold as LintThreshold

SAMPLES = Path(__file__).resolve().parents[2] / "manifests" / "samples"
DIRS = ("load-soak", "gemm-precision-sweep", "gb10-node")


def run(sample: str, sim: str, tmp_path: Path) -> tuple[int, dict[str, Any]]:
    folder = SAMPLES / sample
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "from glimmer.cli import main; main()",
            "run",
            str(folder / "profile.yaml"),
            "--tests",
            str(folder / "tests.yaml"),
            "--sim",
            sim,
            "--report-dir",
            str(tmp_path / "r"),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    doc: dict[str, Any] = json.loads((tmp_path / "r" / "run.json").read_text())
    return proc.returncode, doc


def phases(doc: dict[str, Any]) -> dict[str, str]:
    return {r["name"]: r["phase"] for r in doc["results"]}


def test_load_soak_passes_on_a_healthy_simulated_h200_and_is_never_silicon(
    tmp_path: Path,
) -> None:
    code, doc = run("load-soak", "h200", tmp_path)
    assert code == 0 and doc["phase"] == "Passed"
    assert phases(doc) == {"gpu-burn": "Passed", "thermal-soak": "Passed"}
    assert doc["provenance"] == "sim" and doc["certifiesSilicon"] is False
    soak = next(r for r in doc["results"] if r["name"] == "thermal-soak")
    # N2: on a bare host the whole soak is one process with the whole duration as window.
    assert float(soak["metrics"]["elapsedS"]) >= 14400


def test_load_soak_fails_on_wrong_results_and_stops_there(tmp_path: Path) -> None:
    code, doc = run("load-soak", "h200:nan-compute", tmp_path)
    assert code == 1 and doc["phase"] == "Failed"
    assert phases(doc)["gpu-burn"] == "Failed"
    assert phases(doc).get("thermal-soak") != "Passed"  # failFast: never run


def test_load_soak_catches_a_pinned_clock_through_its_thresholds(tmp_path: Path) -> None:
    code, doc = run("load-soak", "h200:low-clock", tmp_path)
    assert code == 1 and phases(doc)["gpu-burn"] == "Failed"


def test_gemm_sweep_declares_fp4_skipped_on_hopper_and_measures_the_rest(tmp_path: Path) -> None:
    code, doc = run("gemm-precision-sweep", "h200", tmp_path)
    assert code == 0 and doc["phase"] == "Passed"
    assert phases(doc) == {
        "gemm-sweep-fp4": "Skipped",
        "gemm-sweep-fp8": "Passed",
        "gemm-sweep-bf16": "Passed",
        "gemm-sweep-tf32": "Passed",
        "gemm-sweep-fp64": "Passed",
    }


def test_gemm_sweep_measures_fp4_on_blackwell(tmp_path: Path) -> None:
    code, doc = run("gemm-precision-sweep", "b200", tmp_path)
    assert code == 0
    assert phases(doc)["gemm-sweep-fp4"] == "Passed"


def test_gemm_sweep_fails_on_nonfinite_output(tmp_path: Path) -> None:
    code, doc = run("gemm-precision-sweep", "h200:nan-compute", tmp_path)
    assert code == 1 and phases(doc)["gemm-sweep-bf16"] == "Failed"


def test_gb10_sample_passes_with_its_dcgm_allowlist(tmp_path: Path) -> None:
    code, doc = run("gb10-node", "gb10", tmp_path)
    assert code == 0 and doc["phase"] == "Passed", phases(doc)
    dcgm = next(r for r in doc["results"] if r["kind"] == "dcgm-diag")
    assert dcgm["metrics"]["dcgmAllow"] == "memory,pcie,software"


def _objects() -> list[Any]:
    found = []
    for sample in DIRS:
        for path in sorted((SAMPLES / sample).glob("*.yaml")):
            if path.name != "kustomization.yaml":
                found += [from_object(doc) for doc in yaml.safe_load_all(path.read_text()) if doc]
    return found


OBJECTS = _objects()


def _gates() -> list[Any]:
    tests = {o.metadata.name: o for o in OBJECTS if isinstance(o, BurnInTest)}
    found = [(t.spec.kind, t.metadata.name, t.spec.thresholds or []) for t in tests.values()]
    for profile in (o for o in OBJECTS if isinstance(o, BurnInProfile)):
        for entry in profile.spec.tests:
            for variant in entry.variants or []:
                kind = tests[entry.test_ref].spec.kind
                found.append((kind, f"{entry.test_ref}-{variant.name}", variant.thresholds or []))
    return found


@pytest.mark.parametrize(("kind", "name", "gates"), _gates(), ids=lambda v: str(v)[:40])
def test_C4_sample_gates_are_registered_acceptance_sound_and_lint_clean(
    kind: str, name: str, gates: list[Any]
) -> None:
    assert gates, f"{name} has no gates"
    for gate in gates:
        spec = REGISTRY.get(gate.metric)
        assert spec is not None and spec.use == ThresholdUse.ACCEPTANCE, gate.metric
        if unit_of(gate.metric) != DIMENSIONLESS:
            assert gate.comparison in ("GreaterThanOrEqual", "LessThanOrEqual")
        if gate.comparison in ("Equal", "NotEqual"):
            assert float(gate.value).is_integer()
        if gate.metric in SPREAD_METRICS:
            assert gate.applicability == "RequiredIfMeasurable"
    lint = [
        LintThreshold(
            metric=g.metric, comparison=g.comparison, value=g.value, applicability=g.applicability
        )
        for g in gates
    ]
    assert lint_thresholds(kind, lint) == []
