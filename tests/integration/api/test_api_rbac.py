"""The manager's ServiceAccount can do exactly what the reconcilers need, and no more.

Checked with ``kubectl auth can-i --as=<service account>`` (a SubjectAccessReview
evaluated by the real RBAC authorizer) after applying manifests/default.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from tests.integration.api.kube_helpers import kustomize

pytestmark = [pytest.mark.controlplane, pytest.mark.usefixtures("installed_crds")]

MANAGER = "system:serviceaccount:glimmer-system:glimmer-manager"
SYSTEM = "glimmer-system"


@pytest.fixture(scope="module")
def installed_default(control_plane: Any) -> None:
    rendered = kustomize(control_plane, "default")
    documents = list(yaml.safe_load_all(rendered))
    # CRDs are already installed (server-side) by the session fixture.
    others = [d for d in documents if d["kind"] != "CustomResourceDefinition"]
    control_plane.kubectl("apply", "-f", "-", input=yaml.safe_dump_all(others))


def _can(control_plane: Any, verb: str, resource: str, namespace: str | None) -> bool:
    """``resource`` is ``plural[.group][:subresource]`` or ``plural/name`` (kubectl's form).

    Any warning (an unknown resource type above all) fails the check: a "no" for a
    resource the server does not know proves nothing about the role.
    """
    scope = ["--all-namespaces"] if namespace is None else ["-n", namespace]
    resource, _, subresource = resource.partition(":")
    if subresource:
        scope.append(f"--subresource={subresource}")
    result = control_plane.kubectl(
        "auth", "can-i", verb, resource, f"--as={MANAGER}", *scope, check=False
    )
    answer = result.stdout.strip()
    assert answer in ("yes", "no"), result.stderr
    assert "Warning" not in result.stderr, result.stderr
    return answer == "yes"


ALLOWED: list[tuple[str, str, str | None]] = [
    *[(verb, "nodes", None) for verb in ("get", "list", "watch", "patch", "update")],
    *[(verb, "pods", None) for verb in ("get", "list", "watch")],
    *[(verb, "pods", SYSTEM) for verb in ("create", "delete")],
    ("get", "pods:log", SYSTEM),
    *[(verb, "services", SYSTEM) for verb in ("create", "delete", "get", "list", "watch")],
    *[
        (verb, "configmaps", SYSTEM)
        for verb in ("get", "list", "watch", "create", "update", "patch")
    ],
    *[(verb, "events", "team-a") for verb in ("create", "patch")],
    *[(verb, "events.events.k8s.io", "team-a") for verb in ("create", "patch")],
    *[(verb, "leases.coordination.k8s.io", SYSTEM) for verb in ("get", "create", "update")],
    ("get", "namespaces/kube-system", None),
    *[
        (verb, f"{plural}.burnin.glimmer.ai", None)
        for plural in (
            "burnintests",
            "burninprofiles",
            "burninruns",
            "burninschedules",
            "burninsinks",
            "nodefingerprints",
        )
        for verb in ("get", "list", "watch")
    ],
    *[
        (verb, "burninruns.burnin.glimmer.ai", "team-a")
        for verb in ("create", "update", "patch", "delete")
    ],
    *[
        (verb, "nodefingerprints.burnin.glimmer.ai", SYSTEM)
        for verb in ("create", "update", "patch")
    ],
    *[
        (verb, f"{plural}.burnin.glimmer.ai:status", "team-a")
        for plural in ("burninruns", "burninschedules", "burninsinks", "nodefingerprints")
        for verb in ("get", "update", "patch")
    ],
    ("update", "burninruns.burnin.glimmer.ai:finalizers", "team-a"),
    ("update", "burninschedules.burnin.glimmer.ai:finalizers", "team-a"),
    ("get", "secrets", SYSTEM),
]

DENIED: list[tuple[str, str, str | None]] = [
    ("list", "secrets", None),
    ("list", "secrets", SYSTEM),
    ("get", "secrets", "kube-system"),
    ("watch", "secrets", None),
    ("delete", "nodes", None),
    ("create", "nodes", None),
    ("create", "pods", "kube-system"),
    ("create", "pods", "default"),
    ("delete", "pods", "kube-system"),
    ("create", "pods:exec", SYSTEM),
    ("get", "pods:log", "kube-system"),
    ("update", "burnintests.burnin.glimmer.ai:finalizers", "team-a"),
    ("create", "services", "kube-system"),
    ("update", "configmaps", "kube-system"),
    ("delete", "leases.coordination.k8s.io", SYSTEM),
    ("update", "leases.coordination.k8s.io", "kube-system"),
    ("get", "namespaces/default", None),
    ("list", "namespaces", None),
    ("create", "burnintests.burnin.glimmer.ai", "team-a"),
    ("update", "burninprofiles.burnin.glimmer.ai", "team-a"),
    ("delete", "burninschedules.burnin.glimmer.ai", "team-a"),
    ("delete", "nodefingerprints.burnin.glimmer.ai", SYSTEM),
    ("create", "clusterrolebindings.rbac.authorization.k8s.io", None),
    ("escalate", "clusterroles.rbac.authorization.k8s.io", None),
    ("impersonate", "serviceaccounts", None),
    ("*", "*", None),
]


@pytest.mark.usefixtures("installed_default")
@pytest.mark.parametrize(("verb", "resource", "namespace"), ALLOWED, ids=str)
def test_manager_may_do_what_reconcilers_need(
    control_plane: Any, verb: str, resource: str, namespace: str | None
) -> None:
    assert _can(control_plane, verb, resource, namespace)


@pytest.mark.usefixtures("installed_default")
@pytest.mark.parametrize(("verb", "resource", "namespace"), DENIED, ids=str)
def test_manager_may_not_exceed_least_privilege(
    control_plane: Any, verb: str, resource: str, namespace: str | None
) -> None:
    assert not _can(control_plane, verb, resource, namespace)


def test_no_role_uses_wildcards(control_plane: Any) -> None:
    for document in yaml.safe_load_all(kustomize(control_plane, "rbac")):
        for rule in document.get("rules", []):
            for key in ("apiGroups", "resources", "verbs"):
                assert "*" not in rule.get(key, []), (document["metadata"]["name"], rule)
