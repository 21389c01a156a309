"""Adoption compares a found pod with ours in the form the apiserver stores.

The apiserver omits a plain field's false/zero/empty value, keeps a pointer field's
explicit zero, and fills in defaults; a pod we built must be recognised as ours in that
form (a test with a writable hostPath otherwise never gets a verdict), and a pod that
differs in what runs, where, with which host access or which credentials must not be.
The stored forms here are written out by hand, as the real apiserver returns them
(tests/integration/run/test_adoption_round_trip_property.py checks the same rule
against it for generated specs).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from glimmer.controllers.kit import names
from glimmer.controllers.run.pods import (
    RUNNER_SERVICE_ACCOUNT,
    PodRequest,
    RunRef,
    build_pod,
    foreign_reason,
)
from glimmer.plan import PlannedTest

JSON = dict[str, Any]
RUN = RunRef("team", "r1", "run-uid")
RDMA_PATHS = [{"path": "/dev/infiniband", "mountPath": "/dev/infiniband", "readOnly": False}]


def built(*, service_account: str | None = RUNNER_SERVICE_ACCOUNT, **spec: Any) -> JSON:
    runner = {"image": "img:1", "command": ["sh", "-c", "echo"], **spec.pop("runner", {})}
    spec = {"kind": "custom", "durationSeconds": 20, "runner": runner, **spec}
    test = PlannedTest(name="t", required=True, spec=spec)
    return build_pod(
        run=RUN,
        request=PodRequest(test_index=0, test=test, node="n0", attempt=1, image="img:1"),
        service_account=service_account,
    )


def stored(pod: JSON) -> JSON:
    """The defaults every stored pod gets (the cases below add their own omissions)."""
    found = copy.deepcopy(pod)
    spec = found["spec"]
    spec.update(
        dnsPolicy="ClusterFirst", schedulerName="default-scheduler",
        terminationGracePeriodSeconds=30, enableServiceLinks=True, priority=0,
        preemptionPolicy="PreemptLowerPriority", securityContext={}, nodeName="n0",
    )  # fmt: skip
    if "serviceAccountName" in spec:
        spec["serviceAccount"] = spec["serviceAccountName"]
    for volume in spec.get("volumes", []):
        volume["hostPath"].setdefault("type", "")
    container = spec["containers"][0]
    container.update(
        terminationMessagePath="/dev/termination-log", terminationMessagePolicy="File",
        imagePullPolicy="IfNotPresent",
    )  # fmt: skip
    container.setdefault("resources", {})
    found["metadata"]["uid"] = "pod-uid"
    return found


def container(pod: JSON) -> JSON:
    return dict(pod["spec"]["containers"][0])


def test_a_writable_host_path_is_ours_when_the_apiserver_omits_read_only_false() -> None:
    ours = built(runner={"hostPaths": RDMA_PATHS})
    assert container(ours)["volumeMounts"][0]["readOnly"] is False  # the builder says so
    found = stored(ours)
    del found["spec"]["containers"][0]["volumeMounts"][0]["readOnly"]  # omitempty
    assert foreign_reason(found, expected=ours) is None


def test_the_pod_as_posted_is_ours_too() -> None:
    """A store that keeps what was posted (the unit tests' fake apiserver) is no worse."""
    ours = built(runner={"hostPaths": RDMA_PATHS, "env": [{"name": "EMPTY", "value": ""}]})
    assert foreign_reason(stored(ours), expected=ours) is None


def test_an_empty_env_value_the_apiserver_omits_is_ours() -> None:
    ours = built(runner={"env": [{"name": "EMPTY", "value": ""}]})
    found = stored(ours)
    entry = found["spec"]["containers"][0]["env"][-1]
    assert entry == {"name": "EMPTY", "value": ""}
    del entry["value"]
    assert foreign_reason(found, expected=ours) is None


def test_a_probe_is_ours_with_its_zeros_omitted_and_its_defaults_filled_in() -> None:
    probe = {"httpGet": {"port": 8080, "path": "/ready"}, "initialDelaySeconds": 0,
             "periodSeconds": 0}  # fmt: skip
    ours = built(runner={"readinessProbe": probe})
    found = stored(ours)
    found["spec"]["containers"][0]["readinessProbe"] = {
        "httpGet": {"port": 8080, "path": "/ready", "scheme": "HTTP"},
        "timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3,
    }  # fmt: skip
    assert foreign_reason(found, expected=ours) is None
    found["spec"]["containers"][0]["readinessProbe"]["periodSeconds"] = 11
    assert foreign_reason(found, expected=ours) == "spec.containers[0].readinessProbe.periodSeconds"


def test_requests_are_defaulted_per_resource_from_limits() -> None:
    ours = built(resources={"limits": {"memory": "1024Mi", "cpu": 2}, "requests": {"cpu": "1"}})
    found = stored(ours)
    found["spec"]["containers"][0]["resources"] = {
        "limits": {"memory": "1Gi", "cpu": "2"},
        "requests": {"memory": "1Gi", "cpu": "1"},
    }
    assert foreign_reason(found, expected=ours) is None
    found["spec"]["containers"][0]["resources"]["requests"]["memory"] = "512Mi"
    assert foreign_reason(found, expected=ours) == "spec.containers[0].resources.requests.memory"


def test_every_runner_pod_asks_for_no_token_and_names_the_runner_service_account() -> None:
    for pod in (built(), built(runner={"privileged": True}), built(hostNetwork=True)):
        assert pod["spec"]["automountServiceAccountToken"] is False
        assert pod["spec"]["serviceAccountName"] == RUNNER_SERVICE_ACCOUNT
    bare = built(service_account=None)
    assert "serviceAccountName" not in bare["spec"]
    assert bare["spec"]["automountServiceAccountToken"] is False
    found = stored(bare)
    found["spec"].update(serviceAccountName="default", serviceAccount="default")
    assert foreign_reason(found, expected=bare) is None  # the namespace's default, no token


TOKEN_VOLUME = {"name": "kube-api-access-x1", "projected": {"sources": []}}
TOKEN_MOUNT = {"name": "kube-api-access-x1", "readOnly": True,
               "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}  # fmt: skip


def _unset_automount(found: JSON) -> None:
    del found["spec"]["automountServiceAccountToken"]  # absent means: mount a token


def _token_mounted(found: JSON) -> None:
    """What the ServiceAccount admission plugin adds to a pod that asks for a token."""
    found["spec"]["automountServiceAccountToken"] = True
    found["spec"]["volumes"].append(TOKEN_VOLUME)
    found["spec"]["containers"][0]["volumeMounts"].append(TOKEN_MOUNT)


def _token_volume_added(found: JSON) -> None:
    found["spec"]["volumes"].append(TOKEN_VOLUME)


def _other_account(found: JSON) -> None:
    found["spec"].update(serviceAccountName="admin", serviceAccount="admin")


def _mismatched_deprecated_account(found: JSON) -> None:
    found["spec"]["serviceAccount"] = "admin"


def _made_read_write(found: JSON) -> None:
    del found["spec"]["containers"][0]["volumeMounts"][0]["readOnly"]  # stored false


def _mount_option_added(found: JSON) -> None:
    found["spec"]["containers"][0]["volumeMounts"][0]["mountPropagation"] = "Bidirectional"


def _capability_added(found: JSON) -> None:
    found["spec"]["containers"][0]["securityContext"] = {"capabilities": {"add": ["SYS_ADMIN"]}}


def _host_path_type_changed(found: JSON) -> None:
    found["spec"]["volumes"][0]["hostPath"]["type"] = "Socket"


def _host_path_moved(found: JSON) -> None:
    found["spec"]["volumes"][0]["hostPath"]["path"] = "/"


def _empty_value_filled(found: JSON) -> None:
    found["spec"]["containers"][0]["env"][-1]["value"] = "x"


def _ran_as_root(found: JSON) -> None:
    found["spec"]["containers"][0]["securityContext"] = {"runAsUser": 0}


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (_unset_automount, "spec.automountServiceAccountToken"),
        (_token_mounted, "spec.containers[0].volumeMounts"),
        (_token_volume_added, "spec.volumes"),
        (_other_account, "spec.serviceAccountName"),
        (_mismatched_deprecated_account, "spec.serviceAccount"),
        (_made_read_write, "spec.containers[0].volumeMounts[0].readOnly"),
        (_mount_option_added, "spec.containers[0].volumeMounts[0].mountPropagation"),
        (_capability_added, "spec.containers[0].securityContext"),
        (_host_path_type_changed, "spec.volumes[0].hostPath.type"),
        (_host_path_moved, "spec.volumes[0].hostPath.path"),
        (_empty_value_filled, "spec.containers[0].env[2].value"),
        (_ran_as_root, "spec.containers[0].securityContext"),
    ],
    ids=lambda value: getattr(value, "__name__", str(value)).lstrip("_"),
)
def test_a_stored_pod_that_differs_from_ours_is_foreign(
    change: Callable[[JSON], None], field: str
) -> None:
    paths = [{"path": "/dev/kmsg", "mountPath": "/dev/kmsg", "readOnly": True}]
    ours = built(runner={"hostPaths": paths, "env": [{"name": "EMPTY", "value": ""}]})
    found = stored(ours)
    assert foreign_reason(found, expected=ours) is None
    change(found)
    assert foreign_reason(found, expected=ours) == field


def test_the_node_binding_must_name_our_node() -> None:
    ours = built()
    found = stored(ours)
    found["spec"]["nodeName"] = "n9"
    assert foreign_reason(found, expected=ours) == "spec.nodeName"
    assert names.HOSTNAME_LABEL in ours["spec"]["nodeSelector"]


def test_env_sources_are_ours_with_the_apiservers_defaults_filled_in() -> None:
    env = [
        {"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
        {"name": "MEM", "valueFrom": {"resourceFieldRef": {"resource": "limits.memory"}}},
        {"name": "MIB", "valueFrom": {"resourceFieldRef": {"resource": "limits.memory",
                                                           "divisor": "1024Ki"}}},
    ]  # fmt: skip
    ours = built(runner={"env": env})
    found = stored(ours)
    found["spec"]["containers"][0]["env"][-3:] = [
        {"name": "NODE", "valueFrom": {"fieldRef": {"apiVersion": "v1",
                                                    "fieldPath": "spec.nodeName"}}},
        {"name": "MEM", "valueFrom": {"resourceFieldRef": {"resource": "limits.memory",
                                                           "divisor": "0"}}},
        {"name": "MIB", "valueFrom": {"resourceFieldRef": {"resource": "limits.memory",
                                                           "divisor": "1Mi"}}},
    ]  # fmt: skip
    assert foreign_reason(found, expected=ours) is None
    found["spec"]["containers"][0]["env"][-1]["valueFrom"]["resourceFieldRef"]["divisor"] = "1"
    assert foreign_reason(found, expected=ours) == (
        "spec.containers[0].env[4].valueFrom.resourceFieldRef.divisor"
    )


def test_a_pod_that_names_no_account_may_only_get_the_namespace_default() -> None:
    bare = built(service_account=None)
    found = stored(bare)
    found["spec"].update(serviceAccountName="admin", serviceAccount="admin")
    assert foreign_reason(found, expected=bare) == "spec.serviceAccountName"
