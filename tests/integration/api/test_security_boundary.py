"""I29: who may load which node, as the shipped manifests and the real apiserver enforce it.

The manager serves only the namespaces named by ``--serve-namespaces``; each of them is
prepared for runner pods (Pod Security ``privileged``, the workloads and sink-secret
bindings) and nothing else is. Its own namespace enforces ``restricted``. PodSecurity is
built into kube-apiserver, so the test control plane admits or refuses exactly as a
cluster would.
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest

from glimmer.controllers.run.pods import PodRequest, RunRef, build_pod
from glimmer.plan import PlannedTest
from tests.integration.api.kube_helpers import install_default

pytestmark = [pytest.mark.controlplane, pytest.mark.usefixtures("installed_crds")]

SYSTEM = "glimmer-system"
RUNS = "glimmer-runs"
MANAGER_ACCOUNT = {"kind": "ServiceAccount", "name": "glimmer-manager", "namespace": SYSTEM}
#: RoleBindings every served namespace needs, and that no other namespace may hold.
SERVED_BINDINGS = ("glimmer-manager-workloads", "glimmer-manager-sink-secrets")
SERVE_FLAG = "--serve-namespaces=$(GLIMMER_SERVE_NAMESPACES)"
PSA = "pod-security.kubernetes.io"


@pytest.fixture(scope="module")
def documents(control_plane: Any) -> list[dict[str, Any]]:
    """manifests/default, rendered and applied (all but the session's CRDs)."""
    return install_default(control_plane)


def _one(documents: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    (found,) = [d for d in documents if d["kind"] == kind and d["metadata"]["name"] == name]
    return found


def _manager_container(documents: list[dict[str, Any]]) -> dict[str, Any]:
    deployment = _one(documents, "Deployment", "glimmer-manager")
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    return dict(container)


def _served(documents: list[dict[str, Any]]) -> list[str]:
    container = _manager_container(documents)
    flags = [a for a in container["args"] if a.startswith("--serve-namespaces")]
    assert flags == [SERVE_FLAG], container["args"]
    (value,) = [e["value"] for e in container["env"] if e["name"] == "GLIMMER_SERVE_NAMESPACES"]
    return [part.strip() for part in str(value).split(",")]


def _runner_pod(namespace: str) -> dict[str, Any]:
    """What the one pod builder makes of a test that asks for every host access the API
    allows (api RunnerSpec): privileged, uid 0, hostNetwork, a read-write hostPath of /."""
    spec = {
        "kind": "custom",
        "scope": "Node",
        "hostNetwork": True,
        "runner": {
            "privileged": True,
            "runAsUser": 0,
            "hostPaths": [{"path": "/", "mountPath": "/host", "readOnly": False}],
        },
    }
    request = PodRequest(
        test_index=0,
        test=PlannedTest(name="host-everything", required=True, spec=spec),
        node="gpu-1",
        attempt=1,
        image="registry.example/runner:1",
    )
    run = RunRef(namespace=namespace, name="boundary", uid="00000000-0000-0000-0000-000000000001")
    return build_pod(run=run, request=request)


def _dry_run_create(control_plane: Any, pod: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    result: subprocess.CompletedProcess[str] = control_plane.kubectl(
        "create", "--dry-run=server", "-f", "-", input=json.dumps(pod), check=False
    )
    return result


def test_I29_manager_serves_only_namespaces_prepared_for_runs(
    documents: list[dict[str, Any]],
) -> None:
    served = _served(documents)
    assert served == [RUNS]
    manager_namespace = _one(documents, "Deployment", "glimmer-manager")["metadata"]["namespace"]
    assert manager_namespace == SYSTEM and SYSTEM not in served
    for namespace in served:
        labels = _one(documents, "Namespace", namespace)["metadata"]["labels"]
        assert labels[f"{PSA}/enforce"] == "privileged", namespace
    for name in SERVED_BINDINGS:
        bindings = [
            d for d in documents if d["kind"] == "RoleBinding" and d["metadata"]["name"] == name
        ]
        # Bound in every served namespace, and in no other (no grant where runs are refused).
        assert sorted(b["metadata"]["namespace"] for b in bindings) == sorted(served), name
        for binding in bindings:
            assert binding["roleRef"] == {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": name,
            }
            assert binding["subjects"] == [MANAGER_ACCOUNT]
    assert not [
        d
        for d in documents
        if d["kind"] == "ClusterRoleBinding" and d["roleRef"]["name"] in SERVED_BINDINGS
    ]


def test_I29_namespaces_carry_pod_security_labels(
    control_plane: Any, documents: list[dict[str, Any]]
) -> None:
    expected = {
        SYSTEM: {"enforce": "restricted", "audit": "restricted", "warn": "restricted"},
        RUNS: {"enforce": "privileged", "audit": "baseline", "warn": "baseline"},
    }
    for namespace, levels in expected.items():
        live = json.loads(control_plane.kubectl("get", "namespace", namespace, "-o", "json").stdout)
        labels = live["metadata"]["labels"]
        for mode, level in levels.items():
            assert labels[f"{PSA}/{mode}"] == level, (namespace, mode)
            assert labels[f"{PSA}/{mode}-version"] == "latest", (namespace, mode)


@pytest.mark.usefixtures("documents")
def test_I29_manager_namespace_refuses_pods_beyond_restricted(control_plane: Any) -> None:
    """A runner pod (or any pod with less than restricted asks) never runs beside the
    manager's ServiceAccount, even for someone who may create pods there."""
    refused = _dry_run_create(control_plane, _runner_pod(SYSTEM))
    assert refused.returncode != 0
    assert 'violates PodSecurity "restricted:latest"' in refused.stderr, refused.stderr
    for field in ("hostNetwork=true", "privileged", '"hostPath"', "runAsUser=0"):
        assert field in refused.stderr, (field, refused.stderr)
    plain = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "plain", "namespace": SYSTEM},
        "spec": {"containers": [{"name": "c", "image": "registry.example/any:1"}]},
    }
    refused = _dry_run_create(control_plane, plain)
    assert refused.returncode != 0
    assert 'violates PodSecurity "restricted:latest"' in refused.stderr, refused.stderr


def test_I29_manager_pod_meets_restricted(
    control_plane: Any, documents: list[dict[str, Any]]
) -> None:
    template = _one(documents, "Deployment", "glimmer-manager")["spec"]["template"]
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "manager-template", "namespace": SYSTEM, **template["metadata"]},
        "spec": template["spec"],
    }
    admitted = _dry_run_create(control_plane, pod)
    assert admitted.returncode == 0, admitted.stderr
    assert "Warning" not in admitted.stderr, admitted.stderr


@pytest.mark.usefixtures("documents")
def test_I29_served_namespace_admits_every_host_access_a_runner_may_ask_for(
    control_plane: Any,
) -> None:
    """Enforce is privileged (the API lets a test ask for all of it); warn is baseline, so
    whoever creates such a pod is told, and audit marks it."""
    admitted = _dry_run_create(control_plane, _runner_pod(RUNS))
    assert admitted.returncode == 0, admitted.stderr
    assert 'would violate PodSecurity "baseline:latest"' in admitted.stderr, admitted.stderr
