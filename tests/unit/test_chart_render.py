"""The Helm chart (charts/glimmer) renders the kustomize install (manifests/default):
the same RBAC rules and bindings, the same manager pod, the same CRDs, and values that
cannot work are refused at render time.

Renders with the helm that hack/helm builds (hack/prereqs runs it); a missing helm fails
with that instruction, never skips.
"""

from __future__ import annotations

import functools
import os
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml

from glimmer.cli.manager import manager as manager_command
from glimmer.engine import ManagerOptions
from glimmer.testing.assets import AssetsMissingError, find_assets

REPO = Path(__file__).resolve().parents[2]
CHART = REPO / "charts" / "glimmer"
RELEASE, RELEASE_NAMESPACE = "glimmer", "glimmer-system"
RBAC_KINDS = ("ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding")


def helm_binary() -> str:
    """hack/helm's cached binary; fails (with the fix) when it was never built."""
    result = subprocess.run(
        [str(REPO / "hack" / "helm")],
        env={**os.environ, "GLIMMER_HELM_NO_BUILD": "1"},
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        pytest.fail(f"helm is not built: run hack/helm\n{result.stderr}", pytrace=False)
    return result.stdout.strip().splitlines()[-1]


def helm(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [helm_binary(), *args], capture_output=True, text=True, check=check, cwd=REPO
    )


def render(*extra: str, crds: bool = False) -> list[dict[str, Any]]:
    """``helm template`` of the chart as release glimmer in glimmer-system."""
    args = ["template", RELEASE, str(CHART), "-n", RELEASE_NAMESPACE, *extra]
    if crds:
        args.append("--include-crds")
    result = helm(*args)
    return [d for d in yaml.safe_load_all(result.stdout) if d]


def render_error(*extra: str) -> str:
    result = helm("template", RELEASE, str(CHART), "-n", RELEASE_NAMESPACE, *extra, check=False)
    assert result.returncode != 0, result.stdout
    return result.stderr


@functools.cache
def kustomize_default() -> tuple[dict[str, Any], ...]:
    """``kubectl kustomize manifests/default``: the kustomize install as users apply it."""
    try:
        kubectl = find_assets().kubectl
    except AssetsMissingError as error:
        pytest.fail(str(error), pytrace=False)
    rendered = subprocess.run(
        [str(kubectl), "kustomize", str(REPO / "manifests" / "default")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return tuple(d for d in yaml.safe_load_all(rendered) if d)


def _kustomize_deployment() -> dict[str, Any]:
    return _one(kustomize_default(), "Deployment")


def _key(document: dict[str, Any]) -> tuple[str, str, str]:
    meta = document["metadata"]
    return document["kind"], meta["name"], meta.get("namespace", "")


def _rbac(documents: Sequence[dict[str, Any]]) -> dict[tuple[str, str, str], Any]:
    """Each role's rules and aggregation labels, each binding's roleRef and subjects."""
    out: dict[tuple[str, str, str], Any] = {}
    for document in documents:
        if document["kind"] not in RBAC_KINDS:
            continue
        labels = document["metadata"].get("labels", {})
        aggregation = {k: v for k, v in labels.items() if k.startswith("rbac.authorization")}
        if document["kind"].endswith("Binding"):
            out[_key(document)] = (document["roleRef"], document["subjects"])
        else:
            out[_key(document)] = (document["rules"], aggregation)
    return out


def _one(documents: Sequence[dict[str, Any]], kind: str) -> dict[str, Any]:
    (found,) = [d for d in documents if d["kind"] == kind]
    return found


def _container(deployment: dict[str, Any]) -> dict[str, Any]:
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    return dict(container)


# -- equivalence with manifests/default --------------------------------------------------


def test_chart_rbac_equals_the_kustomize_rbac() -> None:
    """Same names (for release glimmer), same rules, same bindings: they cannot drift."""
    chart = _rbac(render())
    kustomize = _rbac(kustomize_default())
    assert sorted(chart) == sorted(kustomize)
    for key, value in kustomize.items():
        assert chart[key] == value, key


def test_chart_crds_are_the_generated_crds() -> None:
    """charts/glimmer/crds is a copy of manifests/crd (which `glimmer crds` writes)."""
    generated = sorted(p.name for p in (REPO / "manifests" / "crd").glob("burnin.*.yaml"))
    copied = sorted(p.name for p in (CHART / "crds").iterdir())
    assert copied == generated
    for name in generated:
        assert (CHART / "crds" / name).read_bytes() == (
            REPO / "manifests" / "crd" / name
        ).read_bytes(), f"cp manifests/crd/{name} charts/glimmer/crds/"
    rendered = [d for d in render(crds=True) if d["kind"] == "CustomResourceDefinition"]
    assert len(rendered) == len(generated)


def _flags(args: Sequence[str]) -> dict[str, str]:
    flags: dict[str, str] = {}
    for arg in args[1:]:
        name, _, value = arg.partition("=")
        flags[name] = value
    return flags


def _cli_default(flag: str) -> str:
    """The manager CLI's default for ``--flag``, as the string a Deployment would pass."""
    for param in manager_command.params:
        if flag in getattr(param, "opts", []):
            return str(param.default) if param.default is not None else ""
        if flag in getattr(param, "secondary_opts", []):
            return ""
    raise AssertionError(f"glimmer manager has no flag {flag}")


def _same(value: str, default: str) -> bool:
    """Equal as numbers when both are numbers ("30" and 30.0), else as text."""
    try:
        return float(value) == float(default)
    except ValueError:
        return value == default


def test_chart_manager_pod_equals_the_kustomize_manager_pod() -> None:
    chart = _one(render(), "Deployment")
    kustomize = _kustomize_deployment()
    chart_pod, kustomize_pod = (
        chart["spec"]["template"]["spec"],
        kustomize["spec"]["template"]["spec"],
    )
    chart_container, kustomize_container = _container(chart), _container(kustomize)
    for field in ("args", "env"):
        chart_container.pop(field)
        kustomize_container.pop(field)
    assert {**chart_pod, "containers": [chart_container]} == {
        **kustomize_pod,
        "containers": [kustomize_container],
    }
    # Arguments: kustomize's (its env expanded as the kubelet would) plus only the CLI's
    # defaults, spelled out.
    env = {e["name"]: e.get("value") for e in _container(kustomize)["env"]}
    expanded = [a.replace("$(GLIMMER_SERVE_NAMESPACES)", env["GLIMMER_SERVE_NAMESPACES"] or "")
                for a in _container(kustomize)["args"]]  # fmt: skip
    chart_flags, kustomize_flags = _flags(_container(chart)["args"]), _flags(expanded)
    assert _container(chart)["args"][0] == expanded[0] == "manager"
    for flag, value in kustomize_flags.items():
        assert chart_flags[flag] == value, flag
    for flag in set(chart_flags) - set(kustomize_flags):
        assert _same(chart_flags[flag], _cli_default(flag)), (flag, chart_flags[flag])
    assert [e for e in _container(chart)["env"] if e["name"] == "POD_NAMESPACE"] == [
        e for e in _container(kustomize)["env"] if e["name"] == "POD_NAMESPACE"
    ]


def test_chart_served_namespace_equals_the_kustomize_one() -> None:
    (chart,) = [d for d in render() if d["kind"] == "Namespace"]
    (kustomize,) = [
        d
        for d in kustomize_default()
        if d["kind"] == "Namespace" and d["metadata"]["name"] == "glimmer-runs"
    ]
    psa = "pod-security.kubernetes.io/"

    def levels(document: dict[str, Any]) -> dict[str, str]:
        return {k: v for k, v in document["metadata"]["labels"].items() if k.startswith(psa)}

    assert chart["metadata"]["name"] == "glimmer-runs"
    assert levels(chart) == levels(kustomize)


# -- the fixes both installs carry -------------------------------------------------------


def _grace_exceeds_shutdown(deployment: dict[str, Any]) -> None:
    flags = _flags(_container(deployment)["args"])
    shutdown = float(
        flags.get("--graceful-shutdown-timeout", ManagerOptions().graceful_shutdown_timeout)
    )
    grace = deployment["spec"]["template"]["spec"]["terminationGracePeriodSeconds"]
    assert grace > shutdown, (grace, shutdown)


def _tolerates_cordoned_and_control_plane(deployment: dict[str, Any]) -> None:
    tolerations = deployment["spec"]["template"]["spec"]["tolerations"]
    keys = {(t["key"], t["operator"], t["effect"]) for t in tolerations}
    assert ("node.kubernetes.io/unschedulable", "Exists", "NoSchedule") in keys
    assert ("node-role.kubernetes.io/control-plane", "Exists", "NoSchedule") in keys


def _requests_without_cpu_limit(deployment: dict[str, Any]) -> None:
    resources = _container(deployment)["resources"]
    assert set(resources["requests"]) == {"cpu", "memory"}
    assert "cpu" not in resources.get("limits", {})


@pytest.mark.parametrize(
    "check",
    [_grace_exceeds_shutdown, _tolerates_cordoned_and_control_plane, _requests_without_cpu_limit],
    ids=["grace-above-shutdown", "tolerations", "no-cpu-limit"],
)
@pytest.mark.parametrize("install", ["kustomize", "chart"])
def test_manager_deployment_is_hardened(install: str, check: Any) -> None:
    deployment = _one(render(), "Deployment") if install == "chart" else _kustomize_deployment()
    check(deployment)


# -- values ------------------------------------------------------------------------------


def test_chart_lints_strictly() -> None:
    result = helm("lint", "--strict", str(CHART), check=False)
    assert result.returncode == 0, result.stdout + result.stderr


def test_values_reach_the_manager() -> None:
    documents = render(
        "--set", "clusterName=prod-east",
        "--set", "replicas=2",
        "--set", "image.tag=9.9.9",
        "--set", "extraArgs={--kube-api-qps=100}",
        "--set", "podLabels.team=gpu",
        "--set", "nodeSelector.pool=infra",
        "--set", "serviceAccount.name=burnin",
        "--set", "metrics.serviceMonitor.enabled=true",
        "--set", "dashboards.enabled=true",
    )  # fmt: skip
    deployment = _one(documents, "Deployment")
    container = _container(deployment)
    assert "--cluster-name=prod-east" in container["args"]
    assert container["args"][-1] == "--kube-api-qps=100"
    assert container["image"] == "ghcr.io/glimmer-ai/glimmer:9.9.9"
    assert deployment["spec"]["replicas"] == 2
    pod = deployment["spec"]["template"]
    assert pod["metadata"]["labels"]["team"] == "gpu"
    assert pod["spec"]["nodeSelector"] == {"pool": "infra"}
    assert pod["spec"]["serviceAccountName"] == "burnin"
    subjects = [d["subjects"] for d in documents if d["kind"].endswith("Binding")]
    assert all(s == [{"kind": "ServiceAccount", "name": "burnin",
                      "namespace": RELEASE_NAMESPACE}] for s in subjects)  # fmt: skip
    monitor = _one(documents, "ServiceMonitor")
    assert monitor["spec"]["endpoints"][0]["honorLabels"] is True
    dashboard = _one(documents, "ConfigMap")
    assert dashboard["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert dashboard["data"]["glimmer.json"] == (
        CHART / "dashboards" / "glimmer.json"
    ).read_text().rstrip("\n")


def test_no_cluster_name_flag_unless_a_name_is_given() -> None:
    assert not [a for a in _container(_one(render(), "Deployment"))["args"]
                if a.startswith("--cluster-name")]  # fmt: skip


def test_serving_every_namespace_binds_cluster_wide_and_creates_no_namespace() -> None:
    documents = render("--set", "servedNamespaces.names={*}")
    assert not [d for d in documents if d["kind"] == "Namespace"]
    assert "--serve-namespaces=*" in _container(_one(documents, "Deployment"))["args"]
    bound = sorted(d["metadata"]["name"] for d in documents if d["kind"] == "ClusterRoleBinding")
    assert bound == [
        "glimmer-manager",
        "glimmer-manager-sink-secrets",
        "glimmer-manager-workloads",
    ]
    assert not [d for d in documents if d["kind"] == "RoleBinding"
                and d["roleRef"]["name"] != "glimmer-leader-election"]  # fmt: skip


def test_several_served_namespaces_each_get_both_bindings() -> None:
    documents = render("--set", "servedNamespaces.names={team-a,team-b}")
    bindings = sorted(
        (d["metadata"]["namespace"], d["metadata"]["name"])
        for d in documents
        if d["kind"] == "RoleBinding" and d["roleRef"]["name"] != "glimmer-leader-election"
    )
    assert bindings == [
        (ns, f"glimmer-manager-{role}")
        for ns in ("team-a", "team-b")
        for role in ("sink-secrets", "workloads")
    ]
    assert "--serve-namespaces=team-a,team-b" in _container(_one(documents, "Deployment"))["args"]


def test_rbac_create_false_renders_no_rbac() -> None:
    assert not [d for d in render("--set", "rbac.create=false") if d["kind"] in RBAC_KINDS]


@pytest.mark.parametrize(
    ("values", "message"),
    [
        (["replicas=2", "leaderElection.enabled=false"], "replicas > 1 needs leaderElection"),
        (["terminationGracePeriodSeconds=30"], "terminationGracePeriodSeconds must be above"),
        (["servedNamespaces.names={*,team-a}"], "cannot be mixed with names"),
        (["servedNamespaces.names={glimmer-system}"], "must not include the manager's own"),
        (["metrics.service.enabled=false", "metrics.serviceMonitor.enabled=true"],
         "needs metrics.service.enabled"),
    ],
    ids=["two-writers", "grace-too-short", "star-and-names", "own-namespace", "monitor-no-service"],
)  # fmt: skip
def test_values_that_cannot_work_are_refused(values: list[str], message: str) -> None:
    args = [item for value in values for item in ("--set", value)]
    assert message in render_error(*args)


# -- runner identity, served-namespace shapes, webhook destinations ----------------------

SERVED_LABEL = r"burnin\.glimmer\.ai/served"
SELECTOR = [
    "--set-json", "servedNamespaces.names=[]",
    "--set", f"servedNamespaces.selector.matchLabels.{SERVED_LABEL}=true",
]  # fmt: skip


def _args(documents: Sequence[dict[str, Any]]) -> list[str]:
    return list(_container(_one(documents, "Deployment"))["args"])


def _runner_accounts(documents: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        d
        for d in documents
        if d["kind"] == "ServiceAccount"
        and d["metadata"]["labels"].get("app.kubernetes.io/component") == "runner"
    ]


def test_runner_pods_get_a_tokenless_unbound_service_account_in_each_served_namespace() -> None:
    documents = render("--set", "servedNamespaces.names={team-a,team-b}")
    accounts = _runner_accounts(documents)
    assert sorted(a["metadata"]["namespace"] for a in accounts) == ["team-a", "team-b"]
    assert {a["metadata"]["name"] for a in accounts} == {"glimmer-runner"}
    assert all(a["automountServiceAccountToken"] is False for a in accounts)
    subjects = [s for d in documents if d["kind"].endswith("Binding") for s in d["subjects"]]
    assert not [s for s in subjects if s["name"] == "glimmer-runner"]
    # glimmer-runner is the manager's default: no flag for it.
    assert not [a for a in _args(documents) if a.startswith("--runner-service-account")]


def test_the_kustomize_install_has_the_same_runner_service_account() -> None:
    (chart,) = _runner_accounts(render())
    (kustomize,) = [d for d in kustomize_default() if d["kind"] == "ServiceAccount"
                    and d["metadata"]["name"] == "glimmer-runner"]  # fmt: skip
    for document in (chart, kustomize):
        assert document["metadata"]["namespace"] == "glimmer-runs"
        assert document["automountServiceAccountToken"] is False


def test_another_runner_service_account_reaches_the_manager() -> None:
    documents = render("--set", "runnerServiceAccount.name=burn-runner")
    assert "--runner-service-account=burn-runner" in _args(documents)
    assert [a["metadata"]["name"] for a in _runner_accounts(documents)] == ["burn-runner"]
    bare = render(
        "--set", "runnerServiceAccount.name=", "--set", "runnerServiceAccount.create=false"
    )
    assert "--runner-service-account=" in _args(bare)
    assert not _runner_accounts(bare)


def test_serving_every_namespace_creates_no_runner_service_account() -> None:
    assert not _runner_accounts(render("--set", "servedNamespaces.names={*}"))


def test_serving_by_selector_reads_secrets_only_where_granted_and_never_cluster_wide() -> None:
    """Without a cluster (`helm template`) no namespace carries the labels, so nothing is
    granted in any namespace; what the lookup finds is checked against the apiserver
    (tests/integration/test_rbac_served_namespaces.py)."""
    documents = render(*SELECTOR)
    assert "--serve-namespace-selector=burnin.glimmer.ai/served=true" in _args(documents)
    assert not [a for a in _args(documents) if a.startswith("--serve-namespaces")]
    cluster_bound = sorted(d["roleRef"]["name"] for d in documents
                           if d["kind"] == "ClusterRoleBinding")  # fmt: skip
    assert cluster_bound == ["glimmer-manager", "glimmer-manager-namespaces"]
    (namespaces,) = [d for d in documents if d["kind"] == "ClusterRole"
                     and d["metadata"]["name"] == "glimmer-manager-namespaces"]  # fmt: skip
    assert namespaces["rules"] == [
        {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get", "list", "watch"]}
    ]
    assert not [d for d in documents if d["kind"] == "Namespace"]
    assert not [d for d in documents if d["kind"] == "RoleBinding"
                and d["roleRef"]["name"] != "glimmer-leader-election"]  # fmt: skip


def test_webhook_destination_values_render_as_manager_flags_only_when_given() -> None:
    assert not [a for a in _args(render()) if a.startswith(("--sink-allow", "--cluster-cidr"))]
    args = _args(render(
        "--set", "sinks.allowDestinations={10.0.0.0/8,hooks.example.com,*.svc.example}",
        "--set", "clusterCIDRs={10.96.0.0/12,10.244.0.0/16}",
    ))  # fmt: skip
    assert "--sink-allow=10.0.0.0/8,hooks.example.com,*.svc.example" in args
    assert "--cluster-cidr=10.96.0.0/12,10.244.0.0/16" in args


@pytest.mark.parametrize(
    ("values", "message"),
    [
        (["--set", r"servedNamespaces.selector.matchLabels.a=b"], "are both set: choose one"),
        (["--set", "servedNamespaces.selector.matchExpressions[0].key=a"],
         "only matchLabels is supported"),
        (["--set-json", "servedNamespaces.names=[]"], "servedNamespaces.names is empty"),
        (["--set", r"clusterCIDRs={10.0.0.0/8\,10.1.0.0/16}"], "clusterCIDRs: each entry is one"),
        (["--set-json", 'sinks.allowDestinations=[""]'], "sinks.allowDestinations: each entry"),
        (["--set", "runnerServiceAccount.name="], "runnerServiceAccount.name is empty"),
    ],
    ids=["selector-and-names", "match-expressions", "nothing-served", "comma-in-cidr",
         "empty-destination", "runner-account-unnamed"],
)  # fmt: skip
def test_served_namespace_and_destination_values_that_cannot_work_are_refused(
    values: list[str], message: str
) -> None:
    assert message in render_error(*values)


REFERENCE_VALUES = REPO / "tests" / "fixtures" / "chart" / "reference-values.yaml"


@pytest.mark.parametrize(
    ("values", "key"),
    [
        (["--set", "replicaz=2"], "'replicaz'"),
        (["--set", "image.repo=example.com/x"], "'repo'"),
        (["--set", "metrics.serviceMonitor.enable=true"], "'enable'"),
        (["--set", "leaderElection.enable=false"], "leaderElection"),
        (["--set", "servedNamespaces.selector.matchLabel.a=b"], "'matchLabel'"),
    ],
)
def test_I34_a_misspelt_value_is_refused(values: list[str], key: str) -> None:
    """values.schema.json: a key the chart does not know fails the render, never ignored."""
    error = render_error(*values)
    assert "schema" in error, error
    assert key in error, error


def test_I34_the_schema_closes_every_object_the_chart_owns() -> None:
    import json

    schema = json.loads((CHART / "values.schema.json").read_text())
    assert schema["$schema"] == "http://json-schema.org/draft-07/schema#"
    free = {"annotations", "labels", "podLabels", "podAnnotations", "nodeSelector", "affinity"}
    free |= {"resources", "matchLabels"}

    def walk(node: dict[str, Any], path: str) -> None:
        for variant in node.get("oneOf", []):
            walk(variant, path)
        if node.get("type") == "object" and "properties" in node:
            assert node.get("additionalProperties") is False, path
            for name, child in node["properties"].items():
                if name not in free:
                    walk(child, f"{path}.{name}")

    walk(schema, "")
    values = yaml.safe_load((CHART / "values.yaml").read_text())

    def covered(tree: dict[str, Any], node: dict[str, Any], path: str) -> None:
        objects = [node, *node.get("oneOf", [])]
        props: dict[str, Any] = {}
        for variant in objects:
            props.update(variant.get("properties", {}))
        for name, value in tree.items():
            assert name in props, f"{path}.{name} is in values.yaml but not in the schema"
            if isinstance(value, dict) and name not in free:
                covered(value, props[name], f"{path}.{name}")

    covered(values, schema, "")


@pytest.mark.parametrize(
    ("alias", "own"),
    [
        (["--set", "replicaCount=3"], ["--set", "replicas=3"]),
        (["--set", "replicaCount=0"], ["--set", "replicas=0"]),
        (["--set", "leaderElection=false"], ["--set", "leaderElection.enabled=false"]),
        (["--set", "leaderElection=true"], ["--set", "leaderElection.enabled=true"]),
        (["--set", "metrics.enabled=false"], ["--set", "metrics.service.enabled=false"]),
        (["--set", "metrics.enabled=true"], ["--set", "metrics.service.enabled=true"]),
    ],
)
def test_I35_a_reference_chart_name_renders_as_the_glimmer_name(
    alias: list[str], own: list[str]
) -> None:
    assert render(*alias) == render(*own)


def test_I35_aliases_change_what_they_alias() -> None:
    """The alias is honoured, not merely accepted: each differs from the default render."""
    default = render()
    for alias in (
        ["--set", "replicaCount=3"],
        ["--set", "leaderElection=false"],
        ["--set", "metrics.enabled=false"],
    ):
        assert render(*alias) != default, alias


def test_I35_more_than_one_replica_without_leader_election_is_refused_in_either_spelling() -> None:
    error = render_error("--set", "replicaCount=2", "--set", "leaderElection=false")
    assert "leaderElection" in error


def test_I35_the_reference_values_file_lints_and_renders() -> None:
    lint = helm("lint", "--strict", str(CHART), "-f", str(REFERENCE_VALUES), check=False)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    documents = render("-f", str(REFERENCE_VALUES))
    (deployment,) = [d for d in documents if d["kind"] == "Deployment"]
    assert deployment["spec"]["replicas"] == 2
    args = deployment["spec"]["template"]["spec"]["containers"][0]["args"]
    assert "--leader-elect" in args
    assert "--leader-election-id=glimmer-manager.burnin.glimmer.ai" in args
    image = deployment["spec"]["template"]["spec"]["containers"][0]["image"]
    assert image == "registry.example.com/glimmer/glimmer:0.1.0"
    assert [d for d in documents if d["kind"] == "Service"]


def test_I35_notes_point_to_what_a_chart_user_has() -> None:
    """NOTES name kubectl/helm commands and URLs, never a path inside the repository
    (a chart user has no checkout). The real install's NOTES are checked on the apiserver."""
    notes = (CHART / "templates" / "NOTES.txt").read_text()
    assert "helm show readme oci://ghcr.io/glimmer-ai/charts/glimmer" in notes
    notes = notes.replace("oci://ghcr.io/glimmer-ai/charts/glimmer", "OCI")
    for repo_path in ("manifests/", "docs/operations.md", "charts/glimmer", "hack/"):
        assert repo_path not in notes, repo_path


def test_I35_helm_show_readme_documents_every_value() -> None:
    readme = helm("show", "readme", str(CHART)).stdout
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    for name in values:
        assert f"`{name}" in readme, name
    for alias in ("replicaCount", "leaderElection: true", "metrics.enabled"):
        assert alias in readme, alias


def test_I35_the_install_guide_names_the_charts_version_and_images() -> None:
    """docs/install.md's commands use the chart's version, appVersion and image names."""
    import re

    guide = (REPO / "docs" / "install.md").read_text()
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    for page in (guide, (CHART / "README.md").read_text()):
        versions = set(re.findall(r"charts/glimmer --version ([0-9][^\s`]*)", page))
        assert versions == {chart["version"]}, versions
    assert f"{values['image']['repository']}:<appVersion>` (`{chart['appVersion']}`" in guide
    for kind in sorted(_own_runner_kinds()):
        assert f"`{kind}`" in guide, kind


def _own_runner_kinds() -> frozenset[str]:
    from glimmer.plan import images

    return images.OWN_RUNNER_KINDS | images.ROCM_SIBLING_KINDS


def test_I35_replica_count_and_replicas_that_disagree_are_refused() -> None:
    error = render_error("--set", "replicaCount=2", "--set", "replicas=3")
    assert "replicaCount and replicas are both set and differ" in error
