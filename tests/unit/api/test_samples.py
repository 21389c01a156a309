"""The sample suites in manifests/samples are well-formed, safe to apply, and their
gates are sound.

``kubectl apply -k manifests/samples`` applies definitions only and starts nothing:
runs are separate files under runs/, and one that puts a long real load on a node
says so in its file name and its first comment line.

Samples are what users copy, so a gate in them must mean what it says: only
registered Acceptance metrics, GTE/LTE on anything with a unit, Equal only on
integer counters, spread metrics RequiredIfMeasurable (semantics B3, B4, C4), and
the threshold linter finds nothing at all (the upstream CI's zero-tolerance rule).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from glimmer.api import BurnInProfile, BurnInRun, BurnInTest, from_object
from glimmer.contract.names import DIMENSIONLESS, unit_of
from glimmer.contract.registry import REGISTRY, SPREAD_METRICS, ThresholdUse
from glimmer.verdict.lint import lint_thresholds
from glimmer.verdict.thresholds import Threshold as LintThreshold

SAMPLES = Path(__file__).resolve().parents[3] / "manifests" / "samples"
NODE_ACCEPTANCE_KINDS = {
    "compute-smoke",
    "gemm-sweep",
    "clockprobe",
    "dcgm-diag",
    "host-health",
    "memory-bw",
    "memory-stress",
}


RUNS = sorted((SAMPLES / "runs").glob("*.yaml"))
#: A run whose planned load on a node exceeds this is a long real load.
LONG_LOAD_SECONDS = 15 * 60


def _documents(path: Path) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc]


def _objects() -> list[Any]:
    found = []
    for path in [*sorted(SAMPLES.glob("*.yaml")), *RUNS]:
        if path.name == "kustomization.yaml":
            continue
        found += [from_object(doc) for doc in _documents(path)]
    return found


def _kustomized() -> list[dict[str, Any]]:
    """What ``kubectl apply -k manifests/samples`` applies (its resources, in order)."""
    kustomization = yaml.safe_load((SAMPLES / "kustomization.yaml").read_text())
    found: list[dict[str, Any]] = []
    for resource in kustomization["resources"]:
        found += _documents(SAMPLES / resource)
    return found


OBJECTS = _objects()
#: Profiles of the sample folders (load-soak, soak, ...), which runs/ may also name.
FOLDER_PROFILES = {
    o.metadata.name
    for o in (
        from_object(d)
        for p in SAMPLES.glob("*/*.yaml")
        if p.parent.name != "runs" and p.name != "kustomization.yaml"
        for d in _documents(p)
    )
    if isinstance(o, BurnInProfile)
}
TESTS = [o for o in OBJECTS if isinstance(o, BurnInTest)]
GATES = [
    pytest.param(test, gate, id=f"{test.metadata.name}.{gate.metric}")
    for test in TESTS
    for gate in test.spec.thresholds or []
]


def test_every_sample_reads_as_a_model() -> None:
    kinds = sorted({type(o).__name__ for o in OBJECTS})
    assert kinds == ["BurnInProfile", "BurnInRun", "BurnInSchedule", "BurnInSink", "BurnInTest"]


def test_node_acceptance_covers_the_six_seed_kinds_and_gemm_correctness() -> None:
    (profile,) = [
        o for o in OBJECTS if isinstance(o, BurnInProfile) and o.metadata.name == "node-acceptance"
    ]
    by_name = {t.metadata.name: t for t in TESTS}
    kinds = {by_name[entry.test_ref].spec.kind for entry in profile.spec.tests if entry.test_ref}
    assert kinds == NODE_ACCEPTANCE_KINDS


def test_every_profile_reference_resolves_within_the_samples() -> None:
    names = {t.metadata.name for t in TESTS}
    profiles = {o.metadata.name for o in OBJECTS if isinstance(o, BurnInProfile)}
    sinks = {o.metadata.name for o in OBJECTS if type(o).__name__ == "BurnInSink"}
    for obj in OBJECTS:
        if isinstance(obj, BurnInProfile):
            assert {e.test_ref for e in obj.spec.tests} <= names
            assert set(obj.spec.sinks or []) <= sinks
        if isinstance(obj, BurnInRun):
            assert obj.spec.profile_ref in profiles | FOLDER_PROFILES


def test_pair_runs_allow_two_nodes_at_once() -> None:
    for run in (o for o in OBJECTS if isinstance(o, BurnInRun)):
        if run.spec.target.node_names and len(run.spec.target.node_names) == 2:
            assert run.spec.max_concurrent_nodes >= 2


@pytest.mark.parametrize(("test", "gate"), GATES)
def test_sample_gates_only_registered_acceptance_metrics(test: BurnInTest, gate: Any) -> None:
    spec = REGISTRY.get(gate.metric)
    assert spec is not None, f"{gate.metric} is not registered"
    assert spec.use == ThresholdUse.ACCEPTANCE


@pytest.mark.parametrize(("test", "gate"), GATES)
def test_sample_comparisons_are_sound(test: BurnInTest, gate: Any) -> None:
    if unit_of(gate.metric) != DIMENSIONLESS:
        assert gate.comparison in ("GreaterThanOrEqual", "LessThanOrEqual")
    if gate.comparison in ("Equal", "NotEqual"):
        assert unit_of(gate.metric) == DIMENSIONLESS
        assert float(gate.value).is_integer()
    if gate.metric in SPREAD_METRICS:
        assert gate.applicability == "RequiredIfMeasurable"


@pytest.mark.parametrize("test", TESTS, ids=lambda t: t.metadata.name)
def test_the_threshold_linter_finds_nothing_in_the_samples(test: BurnInTest) -> None:
    gates = [
        LintThreshold(
            metric=g.metric, comparison=g.comparison, value=g.value, applicability=g.applicability
        )
        for g in test.spec.thresholds or []
    ]
    assert gates, f"{test.metadata.name} has no gates"
    assert lint_thresholds(test.spec.kind, gates) == []


def test_applying_the_samples_kustomization_starts_no_run() -> None:
    kinds = [doc["kind"] for doc in _kustomized()]
    assert "BurnInRun" not in kinds
    assert {"BurnInTest", "BurnInProfile", "BurnInSink", "BurnInSchedule"} <= set(kinds)


def test_every_schedule_the_samples_kustomization_applies_is_suspended() -> None:
    schedules = [doc for doc in _kustomized() if doc["kind"] == "BurnInSchedule"]
    assert schedules
    for schedule in schedules:
        assert schedule["spec"].get("suspend") is True, schedule["metadata"]["name"]


def test_the_samples_kustomization_lists_every_definition_file() -> None:
    kustomization = yaml.safe_load((SAMPLES / "kustomization.yaml").read_text())
    files = sorted(p.name for p in SAMPLES.glob("*.yaml") if p.name != "kustomization.yaml")
    assert sorted(kustomization["resources"]) == files


def _definitions_by_folder() -> dict[Path, list[Any]]:
    """Every sample folder's tests and profiles (a run's profile and its tests share one)."""
    folders: dict[Path, list[Any]] = {}
    for path in sorted(SAMPLES.rglob("*.yaml")):
        if path.name == "kustomization.yaml" or path.parent.name == "runs":
            continue
        folders.setdefault(path.parent, []).extend(from_object(d) for d in _documents(path))
    return folders


def _planned_seconds(run: BurnInRun) -> int:
    """Seconds of load the run's profile plans on one node (variants each run once)."""
    for objects in _definitions_by_folder().values():
        profiles = [
            o
            for o in objects
            if isinstance(o, BurnInProfile) and o.metadata.name == run.spec.profile_ref
        ]
        if not profiles:
            continue
        by_name = {o.metadata.name: o for o in objects if isinstance(o, BurnInTest)}
        total = 0
        for entry in profiles[0].spec.tests:
            test = by_name[entry.test_ref]
            total += (test.spec.duration_seconds or 0) * max(1, len(entry.variants or []))
        return total
    raise AssertionError(f"no sample profile {run.spec.profile_ref}")


@pytest.mark.parametrize("path", RUNS, ids=lambda p: p.name)
def test_each_run_file_holds_one_run_and_a_long_real_load_says_so(path: Path) -> None:
    (document,) = _documents(path)
    run = from_object(document)
    assert isinstance(run, BurnInRun)
    first = path.read_text().splitlines()[0]
    long_load = _planned_seconds(run) > LONG_LOAD_SECONDS
    assert path.name.startswith("long-real-load-") == long_load, path.name
    assert ("LONG REAL LOAD" in first) == long_load, first


def test_the_runs_include_a_small_one_on_one_simulated_node() -> None:
    small = [
        from_object(_documents(p)[0]) for p in RUNS if not p.name.startswith("long-real-load-")
    ]
    assert any(
        r.spec.target.node_names == ["sim-0"] and _planned_seconds(r) <= 5 * 60 for r in small
    )
