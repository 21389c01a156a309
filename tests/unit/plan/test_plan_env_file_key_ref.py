"""``env[].valueFrom.fileKeyRef`` is in the schema but refused at plan time (I24), in both
dispatchers, naming the field: it reads an env file from an emptyDir volume, and no runner
pod has one, so no runner could ever start with it (the cluster would refuse the pod after
the cordon; a bare host would run the test without the variable)."""

from __future__ import annotations

from typing import Any

import pytest

from glimmer.plan import PinnedPlan, PlanRefusal, build_plan

FILE_KEY = {"volumeName": "config", "path": "app.env", "key": "TOKEN"}


def entry(**file_key_ref: Any) -> dict[str, Any]:
    return {"name": "TOKEN", "valueFrom": {"fileKeyRef": {**FILE_KEY, **file_key_ref}}}


def plan(*env: dict[str, Any]) -> PinnedPlan | PlanRefusal:
    inline = {"kind": "custom", "runner": {"command": ["true"], "env": list(env)}}
    return build_plan(profile={"tests": [{"inline": inline}]}, tests={}, targets=["n1"])


@pytest.mark.parametrize("optional", [None, True, False])
def test_I24_a_well_formed_file_key_ref_is_refused_runner_pods_have_no_empty_dir(
    optional: bool | None,
) -> None:
    outcome = plan(entry() if optional is None else entry(optional=optional))
    assert isinstance(outcome, PlanRefusal)
    assert "spec.tests[0].inline.runner.env[0].valueFrom.fileKeyRef: reads an env file" in (
        outcome.message
    )
    assert "a runner pod has none" in outcome.message


def test_I24_the_other_env_sources_still_plan() -> None:
    others = [
        {"name": "N", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
        {"name": "S", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}},
        {"name": "V", "value": "x"},
    ]
    assert isinstance(plan(*others), PinnedPlan)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"volumeName": ""}, "fileKeyRef.volumeName: required"),
        ({"path": None}, "fileKeyRef.path: required"),
        ({"key": 3}, "fileKeyRef.key: required"),
        ({"path": "/etc/app.env"}, "fileKeyRef.path: '/etc/app.env' must be relative"),
        ({"path": "a/../../b.env"}, "fileKeyRef.path: 'a/../../b.env' must be relative"),
        ({"key": "A=B"}, "fileKeyRef.key: 'A=B' cannot be an env file key"),
        ({"optional": "yes"}, "fileKeyRef.optional: must be true or false"),
    ],
)
def test_I24_a_malformed_file_key_ref_is_refused_naming_the_field(
    body: dict[str, Any], field: str
) -> None:
    outcome = plan(entry(**body))
    assert isinstance(outcome, PlanRefusal)
    assert f"spec.tests[0].inline.runner.env[0].valueFrom.{field}" in outcome.message


def test_I24_a_file_key_ref_beside_another_source_is_refused() -> None:
    both = {"name": "T", "valueFrom": {"fileKeyRef": FILE_KEY, "secretKeyRef": {"key": "k"}}}
    outcome = plan(both)
    assert isinstance(outcome, PlanRefusal)
    assert "found fileKeyRef, secretKeyRef" in outcome.message
