"""Specification of the JSON <-> model converter: it reads objects the way the apiserver does."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glimmer.api import (
    KINDS,
    BurnInProfile,
    BurnInRun,
    BurnInRunStatus,
    BurnInSchedule,
    BurnInTest,
    MalformedObjectError,
    TestResult,
    format_time,
    from_json,
    from_object,
    to_json,
)
from tests.unit.api.model_strategies import model

ANY_ROOT = st.sampled_from([info.model for info in KINDS]).flatmap(model)


def _test(spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "burnin.glimmer.ai/v1alpha1", "kind": "BurnInTest", "spec": spec}


@settings(max_examples=50, deadline=None)
@given(ANY_ROOT)
def test_every_model_survives_json_and_back_unchanged(obj: Any) -> None:
    assert from_json(to_json(obj), type(obj)) == obj


@settings(max_examples=50, deadline=None)
@given(ANY_ROOT)
def test_serialised_objects_never_carry_null(obj: Any) -> None:
    def walk(value: Any) -> None:
        assert value is not None
        if isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(to_json(obj))


def test_unknown_fields_are_pruned_like_the_apiserver_does() -> None:
    test = from_json(
        _test({"kind": "nccl", "futureField": 1, "runner": {"image": "x", "shiny": True}}),
        BurnInTest,
    )
    wire = to_json(test)
    assert "futureField" not in wire["spec"]
    assert wire["spec"]["runner"] == {"image": "x"}


def test_null_reads_as_absent_and_takes_the_schema_default() -> None:
    test = from_json(_test({"kind": "nccl", "scope": None, "repeatCount": None}), BurnInTest)
    assert test.spec.scope == "Node"
    assert test.spec.repeat_count == 1


@pytest.mark.parametrize(
    ("data", "cls", "read", "expected"),
    [
        (_test({"kind": "k"}), BurnInTest, lambda o: o.spec.scope, "Node"),
        (_test({"kind": "k"}), BurnInTest, lambda o: o.spec.repeat_count, 1),
        (
            _test(
                {"kind": "k", "thresholds": [{"metric": "a", "comparison": "Equal", "value": "1"}]}
            ),
            BurnInTest,
            lambda o: o.spec.thresholds[0].applicability,
            "Required",
        ),
        (
            _test({"kind": "k", "runner": {"hostPaths": [{"path": "/a", "mountPath": "/b"}]}}),
            BurnInTest,
            lambda o: o.spec.runner.host_paths[0].read_only,
            True,
        ),
        (
            _test({"kind": "k", "soak": {"segmentSeconds": 300}}),
            BurnInTest,
            lambda o: o.spec.soak.abort_early,
            False,
        ),
        (
            {"kind": "BurnInProfile", "spec": {"tests": [{"testRef": "t"}]}},
            BurnInProfile,
            lambda o: o.spec.tests[0].required,
            True,
        ),
        (
            {"kind": "BurnInRun", "spec": {"profileRef": "p", "target": {"nodeNames": ["n"]}}},
            BurnInRun,
            lambda o: (
                o.spec.max_concurrent_nodes,
                o.spec.force,
                o.spec.retry_on_error_limit,
                o.spec.suspend,
                o.spec.baseline,
                o.spec.cancel,
                o.spec.cancel_policy,
            ),
            (1, False, 0, False, False, False, "Graceful"),
        ),
        (
            {"kind": "BurnInRun", "spec": {"profileRef": "p", "target": {}}, "status": {}},
            BurnInRun,
            lambda o: o.status.phase,
            "Pending",
        ),
        (
            {
                "kind": "BurnInSchedule",
                "spec": {"schedule": "@daily", "profileRef": "p", "target": {}, "runTemplate": {}},
            },
            BurnInSchedule,
            lambda o: (
                o.spec.suspend,
                o.spec.concurrency_policy,
                o.spec.successful_runs_history_limit,
                o.spec.failed_runs_history_limit,
                o.spec.run_template.max_concurrent_nodes,
                o.spec.run_template.retry_on_error_limit,
                o.spec.run_template.baseline,
            ),
            (False, "Forbid", 3, 10, 1, 0, False),
        ),
    ],
)
def test_absent_fields_take_the_reference_defaults(
    data: dict[str, Any], cls: type[Any], read: Any, expected: Any
) -> None:
    assert read(from_json(data, cls)) == expected


def test_optional_fields_without_default_stay_unset() -> None:
    test = from_json(_test({"kind": "k"}), BurnInTest)
    assert test.spec.duration_seconds is None
    assert test.spec.host_network is None
    assert "durationSeconds" not in to_json(test)["spec"]


def test_synthetic_result_kind_is_always_serialised_even_when_empty() -> None:
    result = TestResult(name="resolve", kind="", phase="Error")
    wire = to_json(BurnInRunStatus(results=[result]))
    assert wire["results"][0]["kind"] == ""
    assert "scope" not in wire["results"][0]


def test_empty_variant_thresholds_stay_distinct_from_unset() -> None:
    """A non-nil empty list means "no gates" (api §3); it must not collapse to inherit."""
    data = {
        "kind": "BurnInProfile",
        "spec": {
            "tests": [
                {"testRef": "t", "variants": [{"name": "a", "thresholds": []}, {"name": "b"}]}
            ]
        },
    }
    profile = from_json(data, BurnInProfile)
    variants = profile.spec.tests[0].variants
    assert variants is not None
    assert variants[0].thresholds == []
    assert variants[1].thresholds is None
    assert to_json(profile)["spec"]["tests"][0]["variants"][0]["thresholds"] == []


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [
        ({"kind": 5}, "$.spec.kind"),
        ({"kind": "k", "hostNetwork": "false"}, "$.spec.hostNetwork"),
        ({"kind": "k", "repeatCount": "5"}, "$.spec.repeatCount"),
        ({"kind": "k", "repeatCount": True}, "$.spec.repeatCount"),
        ({"scope": "Node"}, "spec"),
    ],
)
def test_malformed_objects_are_refused_naming_the_field(
    spec: dict[str, Any], fragment: str
) -> None:
    with pytest.raises(MalformedObjectError, match=fragment.replace("$", r"\$")):
        from_json(_test(spec), BurnInTest)


def test_naive_times_are_refused_rather_than_guessed() -> None:
    with pytest.raises(ValueError, match="naive"):
        format_time(datetime(2026, 3, 1))


def test_read_times_are_aware_utc() -> None:
    data = {"kind": "BurnInRun", "spec": {"profileRef": "p", "target": {}}}
    data["status"] = {"startedAt": "2026-03-01T10:30:05+02:00"}
    run = from_json(data, BurnInRun)
    assert run.status is not None
    assert run.status.started_at == datetime(2026, 3, 1, 8, 30, 5, tzinfo=UTC)


def test_numeric_quantities_read_as_strings() -> None:
    test = from_json(
        _test({"kind": "k", "resources": {"limits": {"cpu": 2, "memory": "1Gi"}}}), BurnInTest
    )
    assert test.spec.resources is not None
    assert test.spec.resources.limits == {"cpu": "2", "memory": "1Gi"}


def test_probe_ports_keep_int_or_string() -> None:
    test = from_json(
        _test(
            {
                "kind": "k",
                "runner": {
                    "readinessProbe": {"httpGet": {"port": "health"}, "tcpSocket": {"port": 18510}}
                },
            }
        ),
        BurnInTest,
    )
    probe = test.spec.runner.readiness_probe if test.spec.runner else None
    assert probe is not None and probe.http_get is not None and probe.tcp_socket is not None
    assert probe.http_get.port == "health"
    assert probe.tcp_socket.port == 18510


def test_from_object_dispatches_on_kind() -> None:
    assert isinstance(from_object(_test({"kind": "k"})), BurnInTest)


def test_from_object_refuses_foreign_kinds() -> None:
    with pytest.raises(MalformedObjectError, match=r"not a burnin\.glimmer\.ai kind"):
        from_object({"kind": "Pod", "spec": {}})


def test_an_object_of_another_kind_is_never_read_as_this_one() -> None:
    run = {"kind": "BurnInRun", "spec": {"kind": "nccl"}}
    with pytest.raises(MalformedObjectError, match="expected kind BurnInTest"):
        from_json(run, BurnInTest)


def test_an_object_of_another_api_version_is_refused() -> None:
    data = {**_test({"kind": "k"}), "apiVersion": "burnin.glimmer.ai/v1beta1"}
    with pytest.raises(MalformedObjectError, match="expected apiVersion"):
        from_json(data, BurnInTest)
