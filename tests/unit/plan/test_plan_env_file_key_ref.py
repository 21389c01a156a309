"""``env[].valueFrom.fileKeyRef``: checked at plan time (I24), passed to the pod unchanged
in the cluster, refused on a bare host naming the field (N2), never silently dropped."""

from __future__ import annotations

from typing import Any

import pytest

from glimmer.plan import PinnedPlan, PlanRefusal, SpecError, build_plan, runner_env
from glimmer.plan.runner_fields import bare_host_env_refusal

FILE_KEY = {"volumeName": "config", "path": "app.env", "key": "TOKEN"}


def entry(**file_key_ref: Any) -> dict[str, Any]:
    return {"name": "TOKEN", "valueFrom": {"fileKeyRef": {**FILE_KEY, **file_key_ref}}}


def plan(*env: dict[str, Any]) -> PinnedPlan | PlanRefusal:
    inline = {"kind": "custom", "runner": {"command": ["true"], "env": list(env)}}
    return build_plan(profile={"tests": [{"inline": inline}]}, tests={}, targets=["n1"])


def test_I24_a_complete_file_key_ref_is_a_valid_env_source() -> None:
    assert isinstance(plan(entry()), PinnedPlan)
    assert isinstance(plan(entry(optional=True)), PinnedPlan)


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


def test_a_file_key_ref_reaches_the_cluster_runner_env_unchanged() -> None:
    """The operator's pod env is runner_env's list; the entry must arrive as written."""
    spec = {"kind": "custom", "runner": {"env": [entry(optional=False)]}}
    assert runner_env(spec=spec, attempt=1)[-1] == entry(optional=False)


def test_N2_a_bare_host_refuses_a_file_key_ref_naming_the_field() -> None:
    spec = {"kind": "custom", "runner": {"env": [{"name": "A", "value": "1"}, entry()]}}
    with pytest.raises(SpecError, match=r"runner\.env\[1\]\.valueFrom\.fileKeyRef \(TOKEN\)"):
        runner_env(spec=spec, attempt=1, ignore_reserved_runner_env=True)


def test_N2_only_a_file_key_ref_is_refused_on_a_bare_host() -> None:
    others = [
        {"name": "N", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
        {"name": "S", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}},
        {"name": "V", "value": "x"},
    ]
    assert all(bare_host_env_refusal(e, at="runner.env[0]") is None for e in others)
    refusal = bare_host_env_refusal(entry(), at="runner.env[0]")
    assert refusal is not None
    assert "a bare host has no volumes" in refusal
