"""Variant expansion (I1) and entry naming/normalisation (E2)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from glimmer.plan.spec import SpecError
from glimmer.plan.variants import expand_entry, inline_name

_GATE = {"metric": "miscompares", "comparison": "LessThanOrEqual", "value": "0"}
_OTHER_GATE = {"metric": "gpuTempC", "comparison": "LessThanOrEqual", "value": "90"}


def _parent_spec() -> dict[str, Any]:
    return {
        "kind": "gpu-burn",
        "scope": "Node",
        "durationSeconds": 900,
        "repeatCount": 2,
        "thresholds": [_GATE, _OTHER_GATE],
        "runner": {"image": "img", "args": ["--base"], "env": [{"name": "A", "value": "1"}]},
    }


def test_I1_each_variant_becomes_a_test_named_parent_dash_variant() -> None:
    entry = {
        "testRef": "burn",
        "required": False,
        "variants": [{"name": "short"}, {"name": "long"}],
    }
    tests = expand_entry(entry=entry, name="burn", spec=_parent_spec())
    assert [t.name for t in tests] == ["burn-short", "burn-long"]
    assert all(t.required is False for t in tests)
    assert all(t.parent == "burn" for t in tests)


def test_I1_required_defaults_to_true() -> None:
    (test,) = expand_entry(entry={"testRef": "burn"}, name="burn", spec=_parent_spec())
    assert test.required is True


def test_I1_variant_thresholds_replace_not_merge() -> None:
    entry = {"testRef": "burn", "variants": [{"name": "v", "thresholds": [_OTHER_GATE]}]}
    (cell,) = expand_entry(entry=entry, name="burn", spec=_parent_spec())
    assert cell.spec["thresholds"] == [_OTHER_GATE]


def test_I1_empty_variant_thresholds_mean_no_gates() -> None:
    entry = {"testRef": "burn", "variants": [{"name": "v", "thresholds": []}]}
    (cell,) = expand_entry(entry=entry, name="burn", spec=_parent_spec())
    assert cell.spec["thresholds"] == []


def test_I1_absent_overlays_inherit_the_parent() -> None:
    entry = {"testRef": "burn", "variants": [{"name": "v", "thresholds": None}]}
    (cell,) = expand_entry(entry=entry, name="burn", spec=_parent_spec())
    parent = _parent_spec()
    assert cell.spec["thresholds"] == parent["thresholds"]
    assert cell.spec["durationSeconds"] == 900
    assert cell.spec["repeatCount"] == 2
    assert cell.spec["runner"] == parent["runner"]


def test_I1_overlays_duration_repeat_args_and_env() -> None:
    variant = {
        "name": "v",
        "durationSeconds": 60,
        "repeatCount": 3,
        "args": ["--fast"],
        "env": [{"name": "B", "value": "2"}],
    }
    (cell,) = expand_entry(
        entry={"testRef": "burn", "variants": [variant]}, name="burn", spec=_parent_spec()
    )
    assert cell.spec["durationSeconds"] == 60
    assert cell.spec["repeatCount"] == 3
    assert cell.spec["runner"] == {
        "image": "img",
        "args": ["--fast"],
        "env": [{"name": "B", "value": "2"}],
    }


def test_I1_args_overlay_creates_an_empty_runner_block_when_absent() -> None:
    spec = {"kind": "custom"}
    entry = {"testRef": "t", "variants": [{"name": "v", "args": ["x"]}]}
    (cell,) = expand_entry(entry=entry, name="t", spec=spec)
    assert cell.spec["runner"] == {"args": ["x"]}


def test_I1_axes_are_copied_and_parent_recorded() -> None:
    entry = {"testRef": "sweep", "variants": [{"name": "fp8", "axes": {"precision": "fp8"}}]}
    (cell,) = expand_entry(entry=entry, name="sweep", spec={"kind": "gemm-sweep"})
    assert cell.axes == {"precision": "fp8"}
    assert cell.parent == "sweep"


def test_I1_without_variants_the_entry_is_planned_unchanged() -> None:
    spec = _parent_spec()
    (test,) = expand_entry(entry={"testRef": "burn", "variants": []}, name="burn", spec=spec)
    assert test.name == "burn"
    assert test.spec == spec
    assert test.axes == {}
    assert test.parent == ""


def test_I1_expansion_never_mutates_the_profile_or_test() -> None:
    spec = _parent_spec()
    entry = {"testRef": "burn", "variants": [{"name": "v", "args": ["x"], "env": []}]}
    before = (copy.deepcopy(spec), copy.deepcopy(entry))
    (cell,) = expand_entry(entry=entry, name="burn", spec=spec)
    cell.spec["runner"]["args"].append("mutated")
    assert (spec, entry) == before


@pytest.mark.parametrize("scope", [None, ""])
def test_E2_empty_scope_is_normalised_to_node(scope: str | None) -> None:
    spec: dict[str, Any] = {"kind": "custom"}
    if scope is not None:
        spec["scope"] = scope
    (test,) = expand_entry(entry={"testRef": "t"}, name="t", spec=spec)
    assert test.spec["scope"] == "Node"
    assert test.scope == "Node"


def test_E2_inline_entries_are_named_inline_index_kind() -> None:
    assert inline_name(entry_index=3, kind="nccl") == "inline-3-nccl"


@pytest.mark.parametrize(
    "entry",
    [
        {"testRef": "t", "required": "yes"},
        {"testRef": "t", "variants": "v"},
        {"testRef": "t", "variants": [{"axes": {}}]},
        {"testRef": "t", "variants": [{"name": "v", "axes": {"a": 1}}]},
    ],
)
def test_I1_malformed_entries_raise_rather_than_guess(entry: dict[str, Any]) -> None:
    with pytest.raises(SpecError):
        expand_entry(entry=entry, name="t", spec={"kind": "custom"})


def test_I1_expand_profile_plans_what_the_plan_builder_plans() -> None:
    from glimmer.plan import PinnedPlan, build_plan
    from glimmer.plan.variants import expand_profile

    profile = {
        "tests": [
            {"testRef": "burn", "variants": [{"name": "short"}, {"name": "long"}]},
            {"testRef": "burn"},
            {"inline": {"kind": "clockprobe", "thresholds": [_GATE]}},
        ]
    }
    tests = {"burn": _parent_spec()}
    expansion = expand_profile(profile=profile, tests=tests)
    plan = build_plan(profile=profile, tests=tests, targets=["n0"])
    assert isinstance(plan, PinnedPlan)
    assert expansion.tests == plan.tests
    assert [e.test_ref for e in expansion.entries] == ["burn", "burn", ""]
    assert expansion.unresolved == ()


def test_E2_expand_profile_lists_a_missing_test_ref_never_guesses_it() -> None:
    from glimmer.plan.variants import expand_profile

    profile = {"tests": [{"testRef": "ghost", "variants": [{"name": "v"}]}, {"testRef": "b"}]}
    expansion = expand_profile(profile=profile, tests={"b": _parent_spec()})
    assert expansion.unresolved == ("ghost",)
    assert [t.name for t in expansion.tests] == ["b"]


@pytest.mark.parametrize(
    "entry",
    [{"testRef": "b", "inline": {"kind": "custom"}}, {}, {"inline": "x"}, "x"],
    ids=["both", "neither", "inline-not-object", "not-object"],
)
def test_E4_expand_profile_refuses_an_entry_the_plan_refuses(entry: Any) -> None:
    from glimmer.plan.variants import expand_profile

    with pytest.raises(SpecError):
        expand_profile(profile={"tests": [entry]}, tests={"b": _parent_spec()})
