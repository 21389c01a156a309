"""E10-E13, E21 as pure functions: the pod builder and the cordon patches."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from glimmer.controllers.kit import names
from glimmer.controllers.kit.cordon import (
    HeatMarker,
    cordon_patches,
    prior_for_capture,
    reap_patch,
    release_patch,
)
from glimmer.controllers.kit.ref import RunRef
from glimmer.controllers.run.pods import PodRequest, build_pod
from glimmer.plan import PlannedTest

RUN = RunRef(namespace="burnin", name="acceptance", uid="uid-1")
OURS = RUN  # a cordon stamp and a pod owner are one type
OTHER = RunRef("other", "run", "uid-2")
SOON = datetime(2026, 11, 29, 18, 0, tzinfo=UTC)
LATER = datetime(2026, 11, 29, 19, 0, tzinfo=UTC)


def planned(spec: dict[str, Any]) -> PlannedTest:
    return PlannedTest(name="gpu-burn", required=True, spec=spec)


def test_E13_pod_shape() -> None:
    spec = {
        "kind": "gpu-burn",
        "durationSeconds": 300,
        "resources": {"limits": {"nvidia.com/gpu": 8}},
        "hostNetwork": True,
        "runner": {
            "command": ["/run"],
            "args": ["--x"],
            "env": [{"name": "EXTRA", "value": "1"}],
            "privileged": True,
            "hostPaths": [{"path": "/dev/kmsg", "mountPath": "/dev/kmsg", "type": "CharDevice"}],
        },
    }
    pod = build_pod(
        run=RUN,
        request=PodRequest(test_index=2, test=planned(spec), node="gpu-1", attempt=3, image="img"),
        tolerations=[{"key": "gpu", "operator": "Exists"}],
    )
    meta, pod_spec = pod["metadata"], pod["spec"]
    assert meta["labels"] == {
        names.RUN_LABEL: "acceptance",
        names.TEST_LABEL: "gpu-burn",
        names.NODE_LABEL: "gpu-1",
        names.ATTEMPT_LABEL: "3",
    }
    assert meta["annotations"] == {names.SAFE_TO_EVICT: "false"}
    assert meta["ownerReferences"][0]["uid"] == "uid-1"
    assert meta["ownerReferences"][0]["controller"] is True
    assert pod_spec["nodeSelector"] == {"kubernetes.io/hostname": "gpu-1"}
    assert "nodeName" not in pod_spec
    assert pod_spec["restartPolicy"] == "Never"
    assert pod_spec["activeDeadlineSeconds"] == 420
    assert pod_spec["tolerations"][-1] == {
        "key": "node.kubernetes.io/unschedulable",
        "operator": "Exists",
        "effect": "NoSchedule",
    }
    (container,) = pod_spec["containers"]
    assert container["name"] == "runner"
    assert container["securityContext"] == {"privileged": True}
    assert [e["name"] for e in container["env"]] == [
        "BURNIN_DURATION_SECONDS",
        "BURNIN_ATTEMPT",
        "BURNIN_RESOURCE_LIMITS",
        "EXTRA",
    ]
    assert container["volumeMounts"][0]["readOnly"] is True
    assert pod_spec["volumes"][0]["hostPath"] == {"path": "/dev/kmsg", "type": "CharDevice"}


def test_E13_pod_names_are_deterministic_and_distinct_per_attempt() -> None:
    spec = {"kind": "custom"}

    def name(attempt: int, node: str = "n") -> str:
        request = PodRequest(
            test_index=0, test=planned(spec), node=node, attempt=attempt, image="i"
        )
        return str(build_pod(run=RUN, request=request)["metadata"]["name"])

    assert name(1) == name(1)
    assert len({name(1), name(2), name(1, "m")}) == 3


def test_E13_no_security_context_unless_asked() -> None:
    request = PodRequest(
        test_index=0, test=planned({"kind": "custom"}), node="n", attempt=1, image="i"
    )
    container = build_pod(run=RUN, request=request)["spec"]["containers"][0]
    assert "securityContext" not in container and "volumeMounts" not in container
    runs_as = planned({"kind": "custom", "runner": {"runAsUser": 0}})
    request = PodRequest(test_index=0, test=runs_as, node="n", attempt=1, image="i")
    context = build_pod(run=RUN, request=request)["spec"]["containers"][0]["securityContext"]
    assert context == {"runAsUser": 0, "runAsNonRoot": False}


def node(*, notes: dict[str, str] | None = None, cordoned: bool = False) -> dict[str, Any]:
    return {
        "metadata": {"name": "gpu-1", "resourceVersion": "7", "annotations": notes or {}},
        "spec": {"unschedulable": True} if cordoned else {},
    }


def test_E10_the_stamp_and_the_cordon_are_one_write_never_a_cordon_without_its_owner() -> None:
    patches, record = cordon_patches(node(), stamp=OURS, prior=False, heat_until=None)
    assert record
    [only] = patches  # one merge patch, applied atomically: no crash can split it
    assert only["metadata"]["annotations"] == {
        names.CORDON_OWNER: "burnin/acceptance/uid-1",
        names.PRIOR_UNSCHEDULABLE: "false",
    }
    assert only["metadata"]["resourceVersion"] == "7"
    assert only["spec"] == {"unschedulable": True}
    for patch in patches:  # whatever sets unschedulable carries the owner stamp with it
        if (patch.get("spec") or {}).get("unschedulable"):
            assert names.CORDON_OWNER in patch["metadata"]["annotations"]


def test_E10_another_owners_cordon_is_never_taken_or_recorded() -> None:
    stamped = node(notes={names.CORDON_OWNER: OTHER.render()}, cordoned=True)
    assert cordon_patches(stamped, stamp=OURS, prior=False, heat_until=SOON) == ([], False)


def test_E10_our_stamp_reasserts_the_cordon() -> None:
    stamped = node(notes={names.CORDON_OWNER: OURS.render()})
    patches, record = cordon_patches(stamped, stamp=OURS, prior=False, heat_until=None)
    assert record and patches == [{"spec": {"unschedulable": True}}]


def test_E10_prior_falls_back_to_observed() -> None:
    patches, _ = cordon_patches(node(cordoned=True), stamp=OURS, prior=None, heat_until=None)
    assert patches[0]["metadata"]["annotations"][names.PRIOR_UNSCHEDULABLE] == "true"


def test_E11_heat_marker_only_moves_forward_and_never_touches_others() -> None:
    patches, _ = cordon_patches(node(), stamp=OURS, prior=False, heat_until=SOON)
    marker = patches[0]["metadata"]["annotations"][names.HEAT_EXPECTED]
    assert marker == "burnin/acceptance/uid-1/2026-11-29T18:00:00Z"
    ours = node(
        notes={names.CORDON_OWNER: OURS.render(), names.HEAT_EXPECTED: marker}, cordoned=True
    )
    assert cordon_patches(ours, stamp=OURS, prior=False, heat_until=SOON)[0] == []
    extended, _ = cordon_patches(ours, stamp=OURS, prior=False, heat_until=LATER)
    assert HeatMarker.parse(extended[0]["metadata"]["annotations"][names.HEAT_EXPECTED])
    withdrawn, _ = cordon_patches(ours, stamp=OURS, prior=False, heat_until=None)
    assert withdrawn[0]["metadata"]["annotations"] == {names.HEAT_EXPECTED: None}
    theirs = node(notes={names.HEAT_EXPECTED: f"{OTHER.render()}/2026-11-29T18:00:00Z"})
    patches, _ = cordon_patches(theirs, stamp=OURS, prior=False, heat_until=LATER)
    assert names.HEAT_EXPECTED not in patches[0]["metadata"]["annotations"]


def test_E12_release_restores_what_was_there() -> None:
    admin_drained = node(
        notes={names.CORDON_OWNER: OURS.render(), names.PRIOR_UNSCHEDULABLE: "true"},
        cordoned=True,
    )
    patch = release_patch(admin_drained, stamp=OURS, prior=True)
    assert patch is not None and patch["spec"] == {"unschedulable": True}
    assert patch["metadata"]["annotations"] == {
        names.CORDON_OWNER: None,
        names.PRIOR_UNSCHEDULABLE: None,
    }
    fresh = node(
        notes={names.CORDON_OWNER: OURS.render(), names.PRIOR_UNSCHEDULABLE: "false"},
        cordoned=True,
    )
    released = release_patch(fresh, stamp=OURS, prior=None)
    assert released is not None and released["spec"] == {"unschedulable": None}
    assert release_patch(fresh, stamp=OTHER, prior=None) is None


def test_E6_prior_capture_sees_through_an_existing_stamp() -> None:
    assert prior_for_capture(node(cordoned=True)) is True
    stamped = node(
        notes={names.CORDON_OWNER: OTHER.render(), names.PRIOR_UNSCHEDULABLE: "false"},
        cordoned=True,
    )
    assert prior_for_capture(stamped) is False


def test_E21_reaper_removes_a_stamp_whose_run_is_gone() -> None:
    stamped = node(
        notes={
            names.CORDON_OWNER: OTHER.render(),
            names.PRIOR_UNSCHEDULABLE: "false",
            names.HEAT_EXPECTED: f"{OTHER.render()}/2026-11-29T18:00:00Z",
        },
        cordoned=True,
    )
    assert reap_patch(stamped, owner_alive=True) is None
    patch = reap_patch(stamped, owner_alive=False)
    assert patch is not None
    assert patch["metadata"]["annotations"] == {
        names.CORDON_OWNER: None,
        names.PRIOR_UNSCHEDULABLE: None,
        names.HEAT_EXPECTED: None,
    }
    assert reap_patch(node(notes={names.CORDON_OWNER: "not/a-stamp"}), owner_alive=False) is None
