"""The sample suites in manifests/samples are well-formed and their gates are sound.

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


def _objects() -> list[Any]:
    found = []
    for path in sorted(SAMPLES.glob("*.yaml")):
        if path.name == "kustomization.yaml":
            continue
        found += [from_object(doc) for doc in yaml.safe_load_all(path.read_text()) if doc]
    return found


OBJECTS = _objects()
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
            assert obj.spec.profile_ref in profiles


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
