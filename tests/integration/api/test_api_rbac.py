"""The manager's ServiceAccount can do exactly what the reconcilers need, and no more.

Checked with ``kubectl auth can-i --as=<service account>`` (a SubjectAccessReview
evaluated by the real RBAC authorizer) after applying manifests/default.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from tests.integration.api.kube_helpers import install_default, kustomize

pytestmark = [pytest.mark.controlplane, pytest.mark.usefixtures("installed_crds")]

MANAGER = "system:serviceaccount:glimmer-system:glimmer-manager"
SYSTEM = "glimmer-system"
#: The namespace manifests/default serves (--serve-namespaces): runs and runner pods.
RUNS = "glimmer-runs"


@pytest.fixture(scope="module")
def installed_default(control_plane: Any) -> None:
    install_default(control_plane)


def _can(
    control_plane: Any, verb: str, resource: str, namespace: str | None, *, who: str = MANAGER
) -> bool:
    """``resource`` is ``plural[.group][:subresource]`` or ``plural/name`` (kubectl's form).

    Any warning (an unknown resource type above all) fails the check: a "no" for a
    resource the server does not know proves nothing about the role.
    """
    scope = ["--all-namespaces"] if namespace is None else ["-n", namespace]
    resource, _, subresource = resource.partition(":")
    if subresource:
        scope.append(f"--subresource={subresource}")
    result = control_plane.kubectl(
        "auth", "can-i", verb, resource, f"--as={who}", *scope, check=False
    )
    answer = result.stdout.strip()
    assert answer in ("yes", "no"), result.stderr
    assert "Warning" not in result.stderr, result.stderr
    return answer == "yes"


ALLOWED: list[tuple[str, str, str | None]] = [
    *[(verb, "nodes", None) for verb in ("get", "list", "watch", "patch")],
    *[(verb, "pods", None) for verb in ("get", "list", "watch")],
    *[(verb, "pods", RUNS) for verb in ("create", "delete")],
    ("get", "pods:log", RUNS),
    *[(verb, "services", RUNS) for verb in ("create", "delete", "get", "list", "watch")],
    *[(verb, "configmaps", RUNS) for verb in ("get", "create", "update", "patch")],
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
    ("get", "secrets", RUNS),
]

DENIED: list[tuple[str, str, str | None]] = [
    ("list", "secrets", None),
    ("list", "secrets", SYSTEM),
    ("list", "secrets", RUNS),
    ("get", "secrets", SYSTEM),
    ("get", "secrets", "kube-system"),
    ("watch", "secrets", None),
    ("delete", "nodes", None),
    ("create", "nodes", None),
    ("create", "pods", "kube-system"),
    ("create", "pods", "default"),
    ("create", "pods", SYSTEM),
    ("create", "services", SYSTEM),
    ("create", "configmaps", SYSTEM),
    ("delete", "pods", "kube-system"),
    ("create", "pods:exec", SYSTEM),
    ("get", "pods:log", "kube-system"),
    ("update", "burnintests.burnin.glimmer.ai:finalizers", "team-a"),
    ("create", "services", "kube-system"),
    ("update", "configmaps", "kube-system"),
    # Artifacts and ConfigMap sinks are a get then a write: nothing lists or watches them.
    ("list", "configmaps", RUNS),
    ("watch", "configmaps", RUNS),
    ("delete", "configmaps", RUNS),
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


# -- I29: the boundary, rule by rule ---------------------------------------------------

KINDS = ("burnintests", "burninprofiles", "burninruns", "burninschedules", "burninsinks")
FINGERPRINTS = "nodefingerprints.burnin.glimmer.ai"
#: People bound in the served namespace: to the shipped roles, and to the built-in ones.
VIEWER = "viewer@example.com"
EDITOR = "editor@example.com"
COVERAGE_WRITER = "coverage-ci@example.com"
BUILT_IN = {"view": "view@example.com", "edit": "edit@example.com", "admin": "admin@example.com"}


def _aggregate(control_plane: Any, role: str) -> None:
    """One pass of kube-controller-manager's clusterrole-aggregation controller for ``role``.

    The test control plane runs no controller manager, so this does the controller's only
    step: the built-in role's rules become the union of the rules of every ClusterRole its
    own ``aggregationRule`` selects, with the selection made by the real apiserver.
    """
    built_in = json.loads(control_plane.kubectl("get", "clusterrole", role, "-o", "json").stdout)
    rules: list[dict[str, Any]] = []
    for selector in built_in["aggregationRule"]["clusterRoleSelectors"]:
        assert set(selector) == {"matchLabels"}, selector
        text = ",".join(f"{key}={value}" for key, value in selector["matchLabels"].items())
        picked = control_plane.kubectl("get", "clusterroles", "-l", text, "-o", "json").stdout
        for item in sorted(json.loads(picked)["items"], key=lambda i: i["metadata"]["name"]):
            rules.extend(r for r in item.get("rules") or [] if r not in rules)
    control_plane.kubectl(
        "patch", "clusterrole", role, "--type=merge", "-p", json.dumps({"rules": rules})
    )


@pytest.fixture(scope="module")
def people(control_plane: Any, installed_default: None) -> None:
    """RoleBindings in the served namespace; the built-in roles aggregated."""
    bindings = {
        "glimmer-burnin-viewer": VIEWER,
        "glimmer-burnin-editor": EDITOR,
        "glimmer-coverage-writer": COVERAGE_WRITER,
        **BUILT_IN,
    }
    for role, user in bindings.items():
        binding = {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": f"test-{role}", "namespace": RUNS},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": role,
            },
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}],
        }
        control_plane.kubectl("apply", "-f", "-", input=json.dumps(binding))
    for role in BUILT_IN:
        _aggregate(control_plane, role)


@pytest.mark.usefixtures("installed_default")
def test_I29_manager_cannot_update_nodes(control_plane: Any) -> None:
    """Cordons are merge patches (glimmer/controllers/run/kube.py): patch yes, update no."""
    assert _can(control_plane, "patch", "nodes", None)
    assert not _can(control_plane, "update", "nodes", None)


@pytest.mark.usefixtures("installed_default")
@pytest.mark.parametrize("resource", ["services", "configmaps"])
def test_I29_manager_cannot_read_services_or_configmaps_cluster_wide(
    control_plane: Any, resource: str
) -> None:
    """No informer watches them; the namespaced reads it makes are granted where it serves."""
    for verb in ("get", "list", "watch"):
        assert not _can(control_plane, verb, resource, None), verb
        assert not _can(control_plane, verb, resource, "team-a"), verb
    assert _can(control_plane, "get", resource, RUNS)


@pytest.mark.usefixtures("people")
def test_I29_viewer_reads_but_cannot_create_or_change_burnin_objects(
    control_plane: Any,
) -> None:
    for plural in (*KINDS, "nodefingerprints"):
        resource = f"{plural}.burnin.glimmer.ai"
        for verb in ("get", "list", "watch"):
            assert _can(control_plane, verb, resource, RUNS, who=VIEWER), (verb, plural)
        for verb in ("create", "update", "patch", "delete", "deletecollection"):
            assert not _can(control_plane, verb, resource, RUNS, who=VIEWER), (verb, plural)
        assert not _can(control_plane, "update", f"{resource}:status", RUNS, who=VIEWER)
    assert not _can(control_plane, "get", "burninruns.burnin.glimmer.ai", "team-a", who=VIEWER)


@pytest.mark.usefixtures("people")
def test_I29_editor_creates_runs_but_never_writes_status_or_fingerprints(
    control_plane: Any,
) -> None:
    for plural in KINDS:
        resource = f"{plural}.burnin.glimmer.ai"
        for verb in ("get", "create", "update", "patch", "delete", "deletecollection"):
            assert _can(control_plane, verb, resource, RUNS, who=EDITOR), (verb, plural)
        for verb in ("update", "patch"):
            assert not _can(control_plane, verb, f"{resource}:status", RUNS, who=EDITOR)
    for verb in ("create", "update", "patch", "delete"):
        assert not _can(control_plane, verb, FINGERPRINTS, RUNS, who=EDITOR), verb
    # The role is about BurnIn objects only: no pods of its own, and only where bound.
    assert not _can(control_plane, "create", "pods", RUNS, who=EDITOR)
    assert not _can(control_plane, "create", "burninruns.burnin.glimmer.ai", "team-a", who=EDITOR)


@pytest.mark.usefixtures("people")
def test_N16_coverage_writer_writes_a_profiles_coverage_and_nothing_else(
    control_plane: Any,
) -> None:
    """What `glimmer coverage --profile-ref --write-status` needs, and no verdict."""
    profiles = "burninprofiles.burnin.glimmer.ai"
    assert _can(control_plane, "get", profiles, RUNS, who=COVERAGE_WRITER)
    assert _can(control_plane, "get", "burnintests.burnin.glimmer.ai", RUNS, who=COVERAGE_WRITER)
    assert _can(control_plane, "patch", f"{profiles}:status", RUNS, who=COVERAGE_WRITER)
    for verb in ("create", "update", "patch", "delete"):
        assert not _can(control_plane, verb, profiles, RUNS, who=COVERAGE_WRITER), verb
    for plural in ("burninruns", "burninschedules", "burninsinks", "nodefingerprints"):
        resource = f"{plural}.burnin.glimmer.ai"
        assert not _can(control_plane, "patch", f"{resource}:status", RUNS, who=COVERAGE_WRITER)
        assert not _can(control_plane, "create", resource, RUNS, who=COVERAGE_WRITER)
    assert not _can(control_plane, "patch", f"{profiles}:status", "team-a", who=COVERAGE_WRITER)


@pytest.mark.usefixtures("people")
def test_I29_builtin_view_edit_admin_aggregate_the_burnin_roles(control_plane: Any) -> None:
    runs = "burninruns.burnin.glimmer.ai"
    for role, user in BUILT_IN.items():
        assert _can(control_plane, "get", runs, RUNS, who=user), role
        assert _can(control_plane, "list", FINGERPRINTS, RUNS, who=user), role
        assert not _can(control_plane, "update", f"{runs}:status", RUNS, who=user), role
        assert not _can(control_plane, "create", FINGERPRINTS, RUNS, who=user), role
    assert not _can(control_plane, "create", runs, RUNS, who=BUILT_IN["view"])
    assert _can(control_plane, "create", runs, RUNS, who=BUILT_IN["edit"])
    assert _can(control_plane, "create", runs, RUNS, who=BUILT_IN["admin"])
