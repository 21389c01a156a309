"""The sample suites in manifests/samples are well-formed, safe to apply, and their
gates are sound.

Applying a sample starts nothing (I36): ``kubectl apply -k`` on manifests/samples or
any folder below it applies definitions only, and every run is its own file under
runs/, one BurnInRun for glimmer-runs whose comments give the kustomization to apply
first; one that puts a long real load on a node says so in its file name and its first
comment line. The kustomizations are read here without kustomize: their resources,
followed in order, and any other field refused rather than ignored.

Samples are what users copy, so a gate in them must mean what it says: only
registered Acceptance metrics, GTE/LTE on anything with a unit, Equal only on
integer counters, spread metrics RequiredIfMeasurable (semantics B3, B4, C4), and
the threshold linter finds nothing at all (the upstream CI's zero-tolerance rule).
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from glimmer.api import BurnInProfile, BurnInRun, BurnInTest, from_object
from glimmer.contract.names import DIMENSIONLESS, unit_of
from glimmer.contract.registry import REGISTRY, SPREAD_METRICS, ThresholdUse
from glimmer.verdict.lint import lint_thresholds
from glimmer.verdict.thresholds import Threshold as LintThreshold

REPO = Path(__file__).resolve().parents[3]
SAMPLES = REPO / "manifests" / "samples"
#: The namespace the default install serves, where every sample lands.
NAMESPACE = "glimmer-runs"
NODE_ACCEPTANCE_KINDS = {
    "compute-smoke",
    "gemm-sweep",
    "clockprobe",
    "dcgm-diag",
    "host-health",
    "memory-bw",
    "gpu-burn",
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


KUSTOMIZATIONS = sorted(SAMPLES.rglob("kustomization.yaml"))
#: The kustomization fields this reader follows. Any other (a generator, a patch, a
#: component) could add an object the reader never sees, so it is refused, not ignored.
KUSTOMIZATION_FIELDS = {"apiVersion", "kind", "namespace", "resources"}


def _rendered(kustomization: Path) -> list[dict[str, Any]]:
    """What ``kubectl apply -k`` on the kustomization's folder applies: its resources in
    order (a folder among them rendered the same way), each in the namespace it sets."""
    body = yaml.safe_load(kustomization.read_text())
    unread = sorted(set(body) - KUSTOMIZATION_FIELDS)
    assert not unread, f"{kustomization}: this reader does not follow {unread}; extend it"
    found: list[dict[str, Any]] = []
    for resource in body["resources"]:
        path = (kustomization.parent / resource).resolve()
        assert path.is_relative_to(SAMPLES), f"{kustomization}: {resource} is not a sample"
        if path.is_dir():
            found += _rendered(path / "kustomization.yaml")
        else:
            found += _documents(path)
    if "namespace" in body:
        for document in found:
            document.setdefault("metadata", {})["namespace"] = body["namespace"]
    return found


def _kustomized() -> list[dict[str, Any]]:
    """What ``kubectl apply -k manifests/samples`` applies (its resources, in order)."""
    return _rendered(SAMPLES / "kustomization.yaml")


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


def test_node_acceptance_covers_the_six_seed_kinds_gemm_correctness_and_gpu_burn() -> None:
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


@pytest.mark.parametrize(
    "kustomization", KUSTOMIZATIONS, ids=lambda p: p.parent.relative_to(REPO).as_posix()
)
def test_applying_any_sample_kustomization_starts_nothing(kustomization: Path) -> None:
    applied = _rendered(kustomization)
    assert applied, f"{kustomization} applies nothing"
    runs = [d["metadata"]["name"] for d in applied if d["kind"] == "BurnInRun"]
    assert runs == [], f"{kustomization} starts {runs}: move each run to its own runs/ file"
    for schedule in (d for d in applied if d["kind"] == "BurnInSchedule"):
        assert schedule["spec"].get("suspend") is True, schedule["metadata"]["name"]
    assert {d["metadata"].get("namespace") for d in applied} == {NAMESPACE}, kustomization


def test_every_sample_folder_but_runs_is_a_kustomization_of_all_its_files() -> None:
    """No file in a sample folder escapes the rule by being left out of its kustomization
    (a run there would be one ``kubectl apply -f`` of the folder away), and runs/ has
    none (applying it would start every run at once)."""
    odd = [p for p in SAMPLES.rglob("*") if p.is_file() and p.suffix != ".yaml"]
    assert odd == [], "a sample is a .yaml file, which this check reads"
    folders = {p.parent for p in SAMPLES.rglob("*.yaml")} - {SAMPLES / "runs"}
    assert {k.parent for k in KUSTOMIZATIONS} == folders
    for kustomization in KUSTOMIZATIONS:
        listed = yaml.safe_load(kustomization.read_text())["resources"]
        files = sorted(
            p.name for p in kustomization.parent.glob("*.yaml") if p.name != "kustomization.yaml"
        )
        assert sorted(r for r in listed if (kustomization.parent / r).is_file()) == files


def test_the_samples_kustomization_applies_every_kind_of_definition() -> None:
    kinds = {doc["kind"] for doc in _kustomized()}
    assert {"BurnInTest", "BurnInProfile", "BurnInSink", "BurnInSchedule"} <= kinds


def test_every_schedule_the_samples_kustomization_applies_is_suspended() -> None:
    schedules = [doc for doc in _kustomized() if doc["kind"] == "BurnInSchedule"]
    assert schedules
    for schedule in schedules:
        assert schedule["spec"].get("suspend") is True, schedule["metadata"]["name"]


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


def _header(path: Path) -> str:
    """The comment lines a run file opens with."""
    lines = path.read_text().splitlines()
    return "\n".join(itertools.takewhile(lambda line: line.startswith("#"), lines))


@pytest.mark.parametrize("path", RUNS, ids=lambda p: p.name)
def test_each_run_file_is_one_run_for_glimmer_runs_after_its_kustomization(
    path: Path,
) -> None:
    (document,) = _documents(path)
    run = from_object(document)
    assert isinstance(run, BurnInRun)
    # kubectl apply -f puts a run that names no namespace in the context's, away from
    # its profile and outside what the default install serves.
    assert run.metadata.namespace == NAMESPACE, f"{path.name}: set metadata.namespace"
    homes = [
        k.parent
        for k in KUSTOMIZATIONS
        for d in _rendered(k)
        if d["kind"] == "BurnInProfile" and d["metadata"]["name"] == run.spec.profile_ref
    ]
    assert len(homes) == 1, f"{path.name}: profile {run.spec.profile_ref} is defined in {homes}"
    header = _header(path)
    definitions = re.search(
        rf"^#\s+kubectl apply -k {re.escape(homes[0].relative_to(REPO).as_posix())}(\s|$)",
        header,
        re.MULTILINE,
    )
    assert definitions, f"{path.name}: its comments must give the kustomization to apply"
    apply = header.find(f"kubectl apply -f {path.relative_to(REPO).as_posix()}")
    assert apply > definitions.start(), f"{path.name}: give the definitions, then the run"
    assert NAMESPACE in header, f"{path.name}: its comments must name the namespace"


@pytest.mark.parametrize("path", [p for p in RUNS if "-sim-" in p.name], ids=lambda p: p.name)
def test_a_run_file_named_sim_targets_only_simulated_nodes(path: Path) -> None:
    run = from_object(_documents(path)[0])
    assert isinstance(run, BurnInRun)
    assert run.spec.target.node_names, f"{path.name}: a simulated run names its nodes"
    assert all(re.fullmatch(r"sim-\d+", n) for n in run.spec.target.node_names), path.name


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
