"""The kit's object views (I7): every object a controller reads is read through one, any
kind's metadata one way, and no read crashes on a malformed value (an unreadable entry
is skipped, an unreadable map or list reads empty, an unreadable number as its default).

The scan keeps it so: no controller module walks ``metadata``, ``spec`` or ``status``
itself (``obj.get("spec")``, ``obj["status"]`` read, the old ``kube.meta(obj)``); only
the view modules do. A write body (``patch["metadata"] = {...}``) is not a read."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any, Final

import pytest

import glimmer.controllers
from glimmer.api.vocabulary import ConditionStatus
from glimmer.controllers.kit import core_view, names
from glimmer.controllers.kit import view as view_module
from glimmer.controllers.kit.core_view import NodeView, PodView, ServiceView
from glimmer.controllers.kit.view import (
    FingerprintView,
    ObjectView,
    RunView,
    ScheduleView,
)
from glimmer.controllers.run import kube, podstate

CONTROLLERS: Final = Path(glimmer.controllers.__file__).parent
#: The packages whose every module reads objects only through the views.
SCANNED: Final = ("run", "fingerprint", "schedule", "kit")
#: Where the walks live.
VIEWS: Final = frozenset({Path(view_module.__file__), Path(core_view.__file__)})
#: The parts of an object only a view reads.
PARTS: Final = frozenset({"metadata", "spec", "status"})


def _part(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value in PARTS


def walks(source: str) -> list[str]:
    """Each read of an object's ``metadata``/``spec``/``status`` in ``source`` that is
    not a view's: ``x.get("spec")``, ``x["status"]`` read (a subscript written to is a
    write body), ``kube.meta(x)``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            method, owner = node.func.attr, node.func.value
            by_get = method == "get" and bool(node.args) and _part(node.args[0])
            by_meta = method == "meta" and isinstance(owner, ast.Name) and owner.id == "kube"
            if by_get or by_meta:
                found.append(f"{node.lineno}: {ast.unparse(node)}")
        elif (
            isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and _part(node.slice)
        ):
            found.append(f"{node.lineno}: {ast.unparse(node)}")
    return found


def controller_modules() -> list[Path]:
    paths = [p for package in SCANNED for p in sorted((CONTROLLERS / package).glob("*.py"))]
    return [*paths, CONTROLLERS / "operator.py"]


def test_I7_no_controller_reads_metadata_spec_or_status_outside_the_views() -> None:
    paths = controller_modules()
    assert len(paths) > 40 and set(paths) >= VIEWS  # every package was scanned
    offences = {
        f"{path.relative_to(CONTROLLERS)}:{hit}"
        for path in paths
        if path not in VIEWS
        for hit in walks(path.read_text(encoding="utf-8"))
    }
    assert not offences, "read it through a kit view:\n" + "\n".join(sorted(offences))
    assert not hasattr(kube, "meta")  # the walk helper is gone


@pytest.mark.parametrize(
    ("source", "found"),
    [
        ('pod.get("spec")', True),
        ('(pod.get("status") or {}).get("phase")', True),
        ('run["metadata"]["name"]', True),
        ('x = expected["spec"]', True),
        ('condition.get("status") == "True"', True),
        ('kube.meta(pod)["name"]', True),
        ('patch["metadata"] = {"labels": {}}', False),
        ('body["status"] = dict(status)', False),
        ('view.spec.get("nodeName")', False),
        ('result.get("phase")', False),
    ],
)
def test_I7_the_scan_sees_each_shape_of_a_walk(source: str, found: bool) -> None:
    assert bool(walks(source)) is found


# --- ObjectView ---------------------------------------------------------------------------


def test_an_object_view_reads_metadata_and_skips_unreadable_entries() -> None:
    obj = {
        "metadata": {
            "name": "p",
            "namespace": "lab",
            "uid": "u1",
            "resourceVersion": "42",
            "labels": {"a": "b"},
            "ownerReferences": [
                "garbage",
                {"uid": "run-1", "controller": True},
                {"uid": "other", "controller": False},
            ],
            "deletionTimestamp": "2024-01-01T00:00:30Z",
            "deletionGracePeriodSeconds": 30,
        },
        "status": {
            "conditions": [
                None,
                {"type": "Ready", "status": "True"},
                {"type": "Gone", "status": "False", "reason": "first"},
                {"type": "Gone", "status": "False", "reason": "second"},
            ]
        },
    }
    view = ObjectView(obj)
    assert (view.key, view.uid, dict(view.labels)) == ("lab/p", "u1", {"a": "b"})
    assert view.controlled_by("run-1") and not view.controlled_by("other")
    assert view.owned_by("other") and not view.owned_by("nobody")
    assert [c["type"] for c in view.conditions] == ["Ready", "Gone", "Gone"]
    assert view.condition("Ready") == ConditionStatus.TRUE
    assert view.condition("Gone") == ConditionStatus.FALSE and view.condition("Nope") is None
    assert [c["reason"] for c in view.conditions_of("Gone", ConditionStatus.FALSE)] == [
        "first",
        "second",
    ]
    assert list(view.conditions_of("Ready", ConditionStatus.FALSE)) == []
    assert (view.resource_version, view.deletion_timestamp) == ("42", "2024-01-01T00:00:30Z")
    assert view.deletion_grace_seconds == 30 and view.deleting


def test_an_object_view_of_a_malformed_object_reads_empty_never_crashes() -> None:
    view = ObjectView({"metadata": "x", "spec": 3, "status": ["y"]})
    assert (view.name, view.uid, dict(view.labels), view.owner_references) == ("", "", {}, [])
    assert view.conditions == [] and not view.controlled_by("")
    assert view.condition("Ready") is None and dict(view.spec) == {}
    assert (view.resource_version, view.deletion_timestamp, view.deletion_grace_seconds) == (
        "",
        "",
        0,
    )
    odd = ObjectView(
        {
            "metadata": {"deletionGracePeriodSeconds": "soon", "generation": "x"},
            "status": {"conditions": "Ready"},
        }
    )
    assert odd.deletion_grace_seconds == 0 and odd.generation is None
    assert odd.conditions == [] and odd.condition("Ready") is None


def test_the_run_view_is_an_object_view() -> None:
    assert isinstance(RunView({"metadata": {"name": "r"}}), ObjectView)


VIEWS_OF_KINDS: Final = (ObjectView, RunView, PodView, NodeView, ServiceView, FingerprintView,
                         ScheduleView)  # fmt: skip


@pytest.mark.parametrize("kind", VIEWS_OF_KINDS)
def test_I7_a_view_wraps_the_object_itself_in_slots(kind: type[ObjectView]) -> None:
    obj: dict[str, Any] = {"metadata": {"name": "x"}}
    view = kind(obj)
    assert view.obj is obj  # no copy
    assert not hasattr(view, "__dict__")  # __slots__ all the way down


# --- PodView ------------------------------------------------------------------------------


def _pod() -> dict[str, Any]:
    return {
        "metadata": {"name": "p", "namespace": "lab", "uid": "pod-1"},
        "spec": {
            "nodeSelector": {names.HOSTNAME_LABEL: "n1"},
            "containers": [{"name": names.RUNNER_CONTAINER, "image": "img"}],
        },
        "status": {
            "phase": "Running",
            "startTime": "2024-01-01T00:00:00Z",
            "containerStatuses": [
                {"name": "sidecar", "state": {"running": {}}},
                {
                    "name": names.RUNNER_CONTAINER,
                    "state": {"terminated": {"exitCode": 3, "reason": "Error"}},
                },
            ],
            "conditions": [{"type": "PodScheduled", "status": "True"}],
        },
    }


def test_a_pod_view_reads_what_the_run_controller_reads_of_a_pod() -> None:
    pod = _pod()
    view = PodView(pod)
    assert (view.pinned_node, view.node_name, view.node) == ("n1", "", "n1")
    pod["spec"]["nodeName"] = "n2"
    assert view.node == "n2"  # bound wins, read live from the wrapped dict
    assert [c["image"] for c in view.containers] == ["img"]
    assert (view.phase, view.start_time) == ("Running", "2024-01-01T00:00:00Z")
    assert view.runner_status["name"] == names.RUNNER_CONTAINER
    assert view.runner_terminated == {"exitCode": 3, "reason": "Error"}
    assert (dict(view.runner_running), dict(view.runner_waiting)) == ({}, {})
    assert view.condition("PodScheduled") == ConditionStatus.TRUE


def test_I7_a_pod_view_of_a_malformed_pod_reads_empty_never_crashes() -> None:
    view = PodView(
        {
            "metadata": [],
            "spec": {"nodeSelector": "n1", "containers": "runner", "nodeName": None},
            "status": {
                "phase": None,
                "containerStatuses": [None, {"name": names.RUNNER_CONTAINER, "state": "x"}],
                "conditions": {"type": "Ready"},
            },
        }
    )
    assert (view.node, view.containers, view.phase, view.start_time) == ("", [], "", "")
    assert dict(view.runner_state) == {} and view.runner_terminated is None
    assert view.condition("Ready") is None
    runner = {"name": names.RUNNER_CONTAINER, "state": {"terminated": "yes"}}
    garbage = PodView({"status": {"containerStatuses": [runner]}})
    # An unreadable Terminated state is still terminated, with nothing said: code -1.
    assert garbage.runner_terminated == {}


def test_I7_podstate_reads_a_malformed_pod_fail_closed_never_crashes() -> None:
    pod = {
        "metadata": {"deletionTimestamp": 7, "deletionGracePeriodSeconds": "x"},
        "status": {
            "phase": "Failed",
            "containerStatuses": [
                {"name": names.RUNNER_CONTAINER, "state": {"terminated": {"exitCode": "x"}}}
            ],
            "conditions": [None, "Ready", {"type": "DisruptionTarget", "status": "True"}],
        },
    }
    assert podstate.exit_code(pod) == -1  # an unreadable code is not a pass
    assert podstate.terminated(pod) and not podstate.live(pod)
    ended = podstate.termination(pod)
    assert ended.exit_code == -1 and ended.interrupted  # the disruption still counts
    assert podstate.scheduler_message(pod) == "" and podstate.node_of(pod) == ""
    assert podstate.started_at(pod) is None  # a terminated pod with no start time


# --- NodeView, ServiceView ----------------------------------------------------------------


def test_a_node_view_reads_cordon_identity_and_writers() -> None:
    node = {
        "metadata": {
            "name": "n1",
            "managedFields": [
                "garbage",
                {"manager": "kubectl", "fieldsV1": {"f:spec": {"f:unschedulable": {}}}},
            ],
        },
        "spec": {"unschedulable": True},
        "status": {"nodeInfo": {"kernelVersion": "6.1"}, "allocatable": {"nvidia.com/gpu": "8"}},
    }
    view = NodeView(node)
    assert view.unschedulable and view.node_info["kernelVersion"] == "6.1"
    assert dict(view.allocatable) == {"nvidia.com/gpu": "8"}
    assert [e["manager"] for e in view.managed_fields or []] == ["kubectl"]


def test_I7_a_node_view_of_a_malformed_node_reads_empty_never_crashes() -> None:
    view = NodeView({"metadata": {"managedFields": "all"}, "spec": [], "status": {"nodeInfo": 1}})
    assert not view.unschedulable
    assert (dict(view.node_info), dict(view.allocatable)) == ({}, {})
    assert view.managed_fields is None  # no list: nothing can be said of who wrote what
    assert NodeView({"metadata": {"managedFields": []}}).managed_fields == []


def test_I7_a_service_view_of_a_malformed_service_reads_empty_never_crashes() -> None:
    view = ServiceView({"spec": {"selector": ["a"], "publishNotReadyAddresses": "true"}})
    assert view.selector == {} and not view.publishes_not_ready and not view.has_ports
    assert view.cluster_ip is None


# --- FingerprintView, ScheduleView ----------------------------------------------------------


def test_a_fingerprint_view_reads_spec_and_status() -> None:
    view = FingerprintView(
        {
            "spec": {"nodeName": "n1", "maxVerdictAgeSeconds": 600},
            "status": {
                "digest": "v1:ab",
                "capturedAt": "2024-01-01T00:00:00Z",
                "verdict": {"phase": "Passed"},
                "gpus": [None, {"vendor": "nvidia"}],
                "conditions": [{"type": "Drifted", "status": "True"}],
            },
        }
    )
    assert (view.node_name, view.max_verdict_age_seconds, view.digest) == ("n1", 600, "v1:ab")
    assert view.verdict == {"phase": "Passed"} and view.captured_at
    assert [g["vendor"] for g in view.gpus] == ["nvidia"]
    assert view.condition("Drifted") == ConditionStatus.TRUE


@pytest.mark.parametrize("age", ["600", True, 0, -5, None, 1.5])
def test_I7_a_fingerprint_view_of_a_malformed_fingerprint_reads_defaults(age: object) -> None:
    spec = {"nodeName": 5, "maxVerdictAgeSeconds": age}
    status = {"verdict": "Passed", "gpus": "nvidia", "digest": None}
    view = FingerprintView({"spec": spec, "status": status})
    assert (view.node_name, view.max_verdict_age_seconds, view.digest) == ("", None, "")
    assert view.verdict is None and view.gpus == [] and view.hardware_identity is None


def test_a_schedule_view_of_an_empty_schedule_reads_the_api_model_defaults() -> None:
    view = ScheduleView({"metadata": {"name": "s"}, "spec": {}})
    assert (view.successful_runs_history_limit, view.failed_runs_history_limit) == (3, 10)
    assert view.concurrency_policy == "Forbid" and not view.suspend
    assert view.starting_deadline_seconds is None and view.last_schedule_time is None


def test_I7_a_schedule_view_of_a_malformed_schedule_reads_defaults_never_crashes() -> None:
    view = ScheduleView(
        {
            "spec": {
                "schedule": 5,
                "timeZone": ["UTC"],
                "suspend": "true",
                "successfulRunsHistoryLimit": "7",
                "failedRunsHistoryLimit": True,
                "startingDeadlineSeconds": "60",
                "target": ["n1"],
                "targetVerdicts": "Failed",
                "runTemplate": "t",
                "profileRef": 3,
            },
            "status": {"lastScheduleTime": 17},
        }
    )
    assert (view.schedule, view.time_zone, view.suspend) == (None, None, False)
    assert (view.successful_runs_history_limit, view.failed_runs_history_limit) == (3, 10)
    assert view.starting_deadline_seconds is None and view.profile_ref is None
    assert (dict(view.target), view.target_verdicts, dict(view.run_template)) == ({}, [], {})
    assert view.last_schedule_time is None
