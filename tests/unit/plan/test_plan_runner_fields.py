"""I24: runner fields that would fail only at attempt time are refused by the plan."""

from __future__ import annotations

from typing import Any

import pytest

from glimmer.plan import PinnedPlan, PlanRefusal, build_plan, runner_env
from glimmer.plan.runner_fields import env_problems, runner_problems


def plan(entry: dict[str, Any], tests: dict[str, Any] | None = None) -> PinnedPlan | PlanRefusal:
    return build_plan(profile={"tests": [entry]}, tests=tests or {}, targets=["n1"])


def inline(**runner: Any) -> dict[str, Any]:
    return {"inline": {"kind": "custom", "runner": {"command": ["true"], **runner}}}


@pytest.mark.parametrize(
    ("env", "field"),
    [
        ([{"name": "A", "valueFrom": "status.hostIP"}], "runner.env[0].valueFrom: must be"),
        ([{"name": "A", "valueFrom": {}}], "runner.env[0].valueFrom: must set exactly one"),
        (
            [{"name": "A", "valueFrom": {"fieldRef": {"fieldPath": "x"}, "secretKeyRef": {}}}],
            "runner.env[0].valueFrom: must set exactly one",
        ),
        (
            [{"name": "A", "valueFrom": {"fieldRef": {"fieldPath": "status.bogus"}}}],
            "runner.env[0].valueFrom.fieldRef.fieldPath: 'status.bogus' is not selectable",
        ),
        (
            [{"name": "A", "valueFrom": {"fieldRef": {}}}],
            "runner.env[0].valueFrom.fieldRef.fieldPath: required",
        ),
        (
            [{"name": "A", "valueFrom": {"fieldRef": "spec.nodeName"}}],
            "runner.env[0].valueFrom.fieldRef: must be",
        ),
        (
            [{"name": "A", "valueFrom": {"resourceFieldRef": {"resource": "limits.gpu"}}}],
            "runner.env[0].valueFrom.resourceFieldRef.resource: 'limits.gpu' is not selectable",
        ),
        (
            [{"name": "A", "valueFrom": {"secretKeyRef": {"name": "s"}}}],
            "runner.env[0].valueFrom.secretKeyRef.key: required",
        ),
        (
            [
                {
                    "name": "A",
                    "value": "v",
                    "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}},
                }
            ],
            "runner.env[0]: value and valueFrom exclude each other",
        ),
        ([{"value": "v"}], "runner.env[0].name: required"),
        ([{"name": ""}], "runner.env[0].name: required"),
        ([{"name": "A=B"}], "runner.env[0].name: 'A=B' cannot be"),
        ([{"name": "A", "value": 5}], "runner.env[0].value: must be a string"),
        (["A=1"], "runner.env[0]: must be an object"),
        ({"A": "1"}, "runner.env: must be a list"),
    ],
)
def test_I24_malformed_runner_env_is_refused_at_plan_time_naming_the_field(
    env: Any, field: str
) -> None:
    outcome = plan(inline(env=env))
    assert isinstance(outcome, PlanRefusal), "a malformed env must never reach an attempt"
    assert f"spec.tests[0].inline.{field}" in outcome.message


def test_I24_every_valid_env_source_is_accepted() -> None:
    env = [
        {"name": "PLAIN", "value": "x"},
        {"name": "EMPTY"},
        {"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
        {"name": "IP", "value": "", "valueFrom": {"fieldRef": {"fieldPath": "status.hostIP"}}},
        {"name": "LBL", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['a/b']"}}},
        {"name": "CPU", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu"}}},
        {"name": "HP", "valueFrom": {"resourceFieldRef": {"resource": "limits.hugepages-2Mi"}}},
        {"name": "S", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}},
        {"name": "C", "valueFrom": {"configMapKeyRef": {"key": "k", "optional": True}}},
    ]
    assert isinstance(plan(inline(env=env)), PinnedPlan)


@pytest.mark.parametrize(
    ("runner", "field"),
    [
        ({"args": "--fast"}, "spec.tests[0].inline.runner.args: must be a list of strings"),
        ({"args": [1]}, "spec.tests[0].inline.runner.args[0]: must be a string"),
        ({"command": "sh -c x"}, "spec.tests[0].inline.runner.command: must be a list"),
        ({"image": 3}, "spec.tests[0].inline.runner.image: must be a string"),
        ({"privileged": "yes"}, "spec.tests[0].inline.runner.privileged: must be true or false"),
        ({"runAsUser": "0"}, "spec.tests[0].inline.runner.runAsUser: must be an integer"),
        ({"hostPaths": ["/dev"]}, "spec.tests[0].inline.runner.hostPaths[0]: must be an object"),
    ],
)
def test_I24_malformed_runner_fields_are_refused_at_plan_time(
    runner: dict[str, Any], field: str
) -> None:
    outcome = plan(inline(**runner))
    assert isinstance(outcome, PlanRefusal)
    assert field in outcome.message


def test_I24_resource_limits_must_be_quantities_at_plan_time() -> None:
    # runner_env (the operator's pod env) would raise on this at pod-build time.
    entry = {"inline": {"kind": "custom", "resources": {"limits": {"nvidia.com/gpu": True}}}}
    outcome = plan(entry)
    assert isinstance(outcome, PlanRefusal)
    assert "spec.tests[0].inline.resources.limits.nvidia.com/gpu: must be a quantity" in (
        outcome.message
    )


def test_I24_a_referenced_test_is_named_by_its_own_field_path() -> None:
    tests = {"gpu": {"kind": "custom", "runner": {"env": [{"name": "A", "valueFrom": 1}]}}}
    outcome = plan({"testRef": "gpu"}, tests)
    assert isinstance(outcome, PlanRefusal)
    assert "BurnInTest 'gpu' (profile entry 0): spec.runner.env[0].valueFrom: must be" in (
        outcome.message
    )


def test_I24_a_variant_overlay_is_checked_where_it_is_written() -> None:
    entry = {
        **inline(),
        "variants": [
            {"name": "ok", "env": [{"name": "A", "value": "1"}]},
            {"name": "bad", "env": [{"name": "A", "valueFrom": {"fieldRef": {}}}], "args": "x"},
        ],
    }
    outcome = plan(entry)
    assert isinstance(outcome, PlanRefusal)
    assert "spec.tests[0].variants[1].env[0].valueFrom.fieldRef.fieldPath: required" in (
        outcome.message
    )
    assert "spec.tests[0].variants[1].args: must be a list of strings" in outcome.message
    assert "variants[0]" not in outcome.message


def test_I24_a_plan_that_passes_can_always_build_its_runner_env() -> None:
    """What the plan accepts, runner_env (used by both dispatchers) never raises on."""
    env = [{"name": "A", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}]
    entry = {**inline(env=env), "variants": [{"name": "v", "args": ["-x"]}]}
    outcome = plan(entry)
    assert isinstance(outcome, PinnedPlan)
    for test in outcome.tests:
        assert runner_env(spec=test.spec, attempt=1, axes=test.axes)


def test_I24_env_problems_are_empty_for_an_absent_env() -> None:
    assert env_problems(None, at="x") == []
    assert runner_problems({"kind": "custom"}, at="spec") == []
