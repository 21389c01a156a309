"""What the verdict-integrity rules add to the API surface: ``TestAttempt.podUID``
(I18), provenance words that never default to silicon (I14), and an Installing text that
states the shipped manifests' boundary (I29) rather than an older one.

A field missing from the CRD is pruned by the apiserver without a word, and docs that
name the wrong namespace or role send an operator to bind the wrong thing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from glimmer.api.crd import crd_manifest
from glimmer.api.docs import (
    MANAGER_NAMESPACE,
    SERVED_NAMESPACE,
    SINK_SECRETS_ROLE,
    WORKLOADS_ROLE,
    render_api_docs,
)
from glimmer.api.kinds import KINDS_BY_NAME

MANIFESTS = Path(__file__).resolve().parents[3] / "manifests"


def _status_schema() -> dict[str, Any]:
    version = crd_manifest(KINDS_BY_NAME["BurnInRun"])["spec"]["versions"][0]
    status: dict[str, Any] = version["schema"]["openAPIV3Schema"]["properties"]["status"]
    return status


def _attempt_schema() -> dict[str, Any]:
    result = _status_schema()["properties"]["results"]["items"]
    attempt: dict[str, Any] = result["properties"]["attempts"]["items"]
    return attempt


def test_I18_the_attempt_pod_uid_is_in_the_crd_so_the_apiserver_keeps_it() -> None:
    attempt = _attempt_schema()
    field = attempt["properties"]["podUID"]
    assert field["type"] == "string"
    assert "podUID" not in attempt.get("required", [])
    assert "another UID is foreign" in field["description"]


def test_I14_provenance_descriptions_say_absence_is_unknown_not_silicon() -> None:
    status = _status_schema()["properties"]
    result = status["results"]["items"]["properties"]
    attempt = _attempt_schema()["properties"]
    assert "unknown" in attempt["provenance"]["description"]
    assert (
        "only when the runner declared provenance=silicon" in (attempt["provenance"]["description"])
    )
    assert "any unknown one unknown" in result["provenance"]["description"]
    assert "never silicon" in status["provenance"]["description"]
    [column] = [
        c
        for c in crd_manifest(KINDS_BY_NAME["BurnInRun"])["spec"]["versions"][0][
            "additionalPrinterColumns"
        ]
        if c["name"] == "Provenance"
    ]
    assert "never silicon" in column["description"]


def _documents(*parts: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for path in sorted((MANIFESTS / Path(*parts)).glob("*.yaml")):
        found += [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d]
    return found


def _bindings(role: str) -> set[str]:
    """Namespaces where a RoleBinding grants ClusterRole ``role`` to the manager."""
    return {
        d["metadata"]["namespace"]
        for d in _documents("rbac")
        if d["kind"] == "RoleBinding"
        and d["roleRef"]
        == {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole",
            "name": role,
        }
        and {"kind": "ServiceAccount", "name": "glimmer-manager", "namespace": MANAGER_NAMESPACE}
        in d["subjects"]
    }


def _env(container: dict[str, Any], name: str) -> str:
    return str(next(e["value"] for e in container["env"] if e["name"] == name))


def test_I29_the_installing_text_names_what_the_manifests_install() -> None:
    [deployment] = [d for d in _documents("manager") if d["kind"] == "Deployment"]
    assert deployment["metadata"]["namespace"] == MANAGER_NAMESPACE
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    assert "--serve-namespaces=$(GLIMMER_SERVE_NAMESPACES)" in container["args"]
    patch = yaml.safe_load((MANIFESTS / "default" / "serve_namespaces.yaml").read_text())
    [patched] = patch["spec"]["template"]["spec"]["containers"]
    assert _env(patched, "GLIMMER_SERVE_NAMESPACES") == SERVED_NAMESPACE
    assert _env(container, "GLIMMER_SERVE_NAMESPACES") == SERVED_NAMESPACE
    # The workloads and sink-secret roles are bound exactly in the served namespace.
    assert _bindings(WORKLOADS_ROLE) == {SERVED_NAMESPACE}
    assert _bindings(SINK_SECRETS_ROLE) == {SERVED_NAMESPACE}
    [secrets] = [
        d
        for d in _documents("rbac")
        if d["kind"] == "ClusterRole" and d["metadata"]["name"] == SINK_SECRETS_ROLE
    ]
    assert secrets["rules"] == [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}]

    text = render_api_docs()
    install = text[text.index("## Installing") : text.index("## Provenance")]
    for word in (
        f"runs in `{MANAGER_NAMESPACE}`",
        f"serves `{SERVED_NAMESPACE}`",
        "`--serve-namespaces`",
        "manifests/default/serve_namespaces.yaml",
        f"`{WORKLOADS_ROLE}`",
        f"`{SINK_SECRETS_ROLE}`",
        "never\nlisted",
        "each namespace added to\n`--serve-namespaces`",
    ):
        assert word in install, word
    assert f"from `{MANAGER_NAMESPACE}` only" not in install  # the old, false boundary


def test_I16_the_api_docs_say_an_all_skipped_run_certifies_nothing() -> None:
    text = render_api_docs()
    section = text[text.index("## Provenance") : text.index("## Kinds")]
    assert "`unknown`, never `silicon`" in section
    assert "reason `NothingMeasured`" in section
    assert "all Skipped" in section
