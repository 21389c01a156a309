"""The test control plane is a real apiserver: its API semantics hold as in a cluster."""

from __future__ import annotations

import asyncio
import json
import ssl
import urllib.error
import urllib.request
from typing import Any

import pytest
import yaml
from kubernetes_asyncio import client, watch
from kubernetes_asyncio.client import ApiClient
from kubernetes_asyncio.client.exceptions import ApiException

from glimmer.testing import ControlPlane, KubectlError

from ._waiting import eventually, get_json

pytestmark = pytest.mark.controlplane

GROUP = "probes.test.glimmer.dev"


def crd_manifest() -> dict[str, Any]:
    schema = {
        "type": "object",
        "properties": {
            "spec": {"type": "object", "properties": {"size": {"type": "integer"}}},
            "status": {"type": "object", "properties": {"phase": {"type": "string"}}},
        },
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"widgets.{GROUP}"},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": schema},
                    "subresources": {"status": {}},
                }
            ],
        },
    }


@pytest.fixture(scope="module")
def widget_crd(control_plane: ControlPlane) -> str:
    control_plane.kubectl("apply", "-f", "-", input=yaml.safe_dump(crd_manifest()))
    control_plane.kubectl(
        "wait", "--for=condition=Established", "--timeout=60s", f"crd/widgets.{GROUP}"
    )
    return f"widgets.{GROUP}"


async def test_configmap_can_be_created_listed_and_watched(
    api_client: ApiClient, namespace: str
) -> None:
    core = client.CoreV1Api(api_client)
    listing = await core.list_namespaced_config_map(namespace)
    since = listing.metadata.resource_version
    body = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="c1"), data={"k": "v"})
    await core.create_namespaced_config_map(namespace, body)

    names = [c.metadata.name for c in (await core.list_namespaced_config_map(namespace)).items]
    assert "c1" in names
    seen: list[tuple[str, str]] = []
    async with watch.Watch() as stream:
        async for event in stream.stream(
            core.list_namespaced_config_map,
            namespace,
            resource_version=since,
            timeout_seconds=5,
        ):
            seen.append((event["type"], event["object"].metadata.name))
            if ("ADDED", "c1") in seen:
                break
    assert ("ADDED", "c1") in seen


def test_crd_and_custom_resource_round_trip(
    control_plane: ControlPlane, widget_crd: str, namespace: str
) -> None:
    widget = {
        "apiVersion": f"{GROUP}/v1",
        "kind": "Widget",
        "metadata": {"name": "w1", "namespace": namespace},
        "spec": {"size": 3},
    }
    control_plane.kubectl("apply", "-f", "-", input=yaml.safe_dump(widget))
    stored = get_json(control_plane, widget_crd, "w1", f"--namespace={namespace}")
    assert stored["spec"] == {"size": 3}


def test_server_side_apply_tracks_field_managers_and_reports_conflicts(
    control_plane: ControlPlane, namespace: str
) -> None:
    def apply(manager: str, value: str, *extra: str) -> None:
        document = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "ssa", "namespace": namespace},
            "data": {"owned": value},
        }
        control_plane.kubectl(
            "apply",
            "--server-side",
            f"--field-manager={manager}",
            *extra,
            "-f",
            "-",
            input=yaml.safe_dump(document),
        )

    apply("first", "a")
    with pytest.raises(KubectlError, match="conflict"):
        apply("second", "b")
    apply("second", "b", "--force-conflicts")
    stored = get_json(
        control_plane, "configmap", "ssa", f"--namespace={namespace}", "--show-managed-fields"
    )
    assert stored["data"] == {"owned": "b"}
    managers = {m["manager"] for m in stored["metadata"]["managedFields"]}
    assert "second" in managers


async def test_status_update_with_a_stale_resource_version_is_a_409_conflict(
    api_client: ApiClient, widget_crd: str, namespace: str
) -> None:
    custom = client.CustomObjectsApi(api_client)
    created = await custom.create_namespaced_custom_object(
        GROUP,
        "v1",
        namespace,
        "widgets",
        {"apiVersion": f"{GROUP}/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": {}},
    )
    stale = dict(created)
    first = {**created, "status": {"phase": "one"}}
    await custom.replace_namespaced_custom_object_status(
        GROUP, "v1", namespace, "widgets", "w", first
    )
    with pytest.raises(ApiException) as raised:
        await custom.replace_namespaced_custom_object_status(
            GROUP, "v1", namespace, "widgets", "w", {**stale, "status": {"phase": "two"}}
        )
    assert raised.value.status == 409
    stored = await custom.get_namespaced_custom_object(GROUP, "v1", namespace, "widgets", "w")
    assert stored["status"] == {"phase": "one"}


def _watch_first_event(control_plane: ControlPlane, path: str) -> dict[str, Any]:
    context = ssl.create_default_context(cafile=str(control_plane.ca_path))
    kubeconfig = yaml.safe_load(control_plane.kubeconfig_path.read_text())
    user = kubeconfig["users"][0]["user"]
    pki = control_plane.work_dir / "pki"
    context.load_cert_chain(str(pki / "admin.crt"), str(pki / "admin.key"))
    assert user["client-certificate-data"]
    with urllib.request.urlopen(f"{control_plane.server}{path}", context=context) as response:
        event: dict[str, Any] = json.loads(response.readline())
        return event


def test_watch_from_before_an_etcd_compaction_is_410_gone(
    control_plane: ControlPlane, namespace: str
) -> None:
    control_plane.kubectl("create", "configmap", "old", f"--namespace={namespace}")
    old = get_json(control_plane, "configmap", "old", f"--namespace={namespace}")
    version = old["metadata"]["resourceVersion"]
    for i in range(3):
        control_plane.kubectl("create", "configmap", f"new-{i}", f"--namespace={namespace}")
    path = f"/api/v1/namespaces/{namespace}/configmaps?watch=1&timeoutSeconds=2"

    before = _watch_first_event(control_plane, f"{path}&resourceVersion={version}")
    assert before["type"] == "ADDED"

    control_plane.compact_etcd()
    after = _watch_first_event(control_plane, f"{path}&resourceVersion={version}")
    assert after["type"] == "ERROR"
    assert after["object"]["code"] == 410
    assert after["object"]["reason"] == "Expired"


def test_watch_resumes_after_an_apiserver_restart(
    control_plane: ControlPlane, namespace: str
) -> None:
    control_plane.kubectl("create", "configmap", "before", f"--namespace={namespace}")
    version = get_json(control_plane, "configmap", "before", f"--namespace={namespace}")[
        "metadata"
    ]["resourceVersion"]
    control_plane.restart_apiserver()
    control_plane.kubectl("create", "configmap", "after", f"--namespace={namespace}")
    path = f"/api/v1/namespaces/{namespace}/configmaps?watch=1&timeoutSeconds=2"
    event = _watch_first_event(control_plane, f"{path}&resourceVersion={version}")
    assert (event["type"], event["object"]["metadata"]["name"]) == ("ADDED", "after")


def test_service_account_kubeconfig_is_authorised_by_rbac_only(
    control_plane: ControlPlane, namespace: str
) -> None:
    kubeconfig = control_plane.mint_service_account_kubeconfig(namespace=namespace, name="op")
    as_sa = ["--kubeconfig", str(kubeconfig), f"--namespace={namespace}"]
    denied = control_plane.kubectl("get", "configmaps", *as_sa, check=False)
    assert denied.returncode != 0
    assert "forbidden" in denied.stderr.lower()

    control_plane.kubectl(
        "create",
        "role",
        "read-cm",
        "--verb=get,list",
        "--resource=configmaps",
        f"--namespace={namespace}",
    )
    control_plane.kubectl(
        "create",
        "rolebinding",
        "read-cm",
        "--role=read-cm",
        f"--serviceaccount={namespace}:op",
        f"--namespace={namespace}",
    )

    def allowed() -> bool:
        return control_plane.kubectl("get", "configmaps", *as_sa, check=False).returncode == 0

    eventually(allowed, what="RBAC grant to take effect")
    who = control_plane.kubectl("auth", "whoami", "-o", "json", *as_sa)
    assert json.loads(who.stdout)["status"]["userInfo"]["username"] == (
        f"system:serviceaccount:{namespace}:op"
    )


def test_admin_kubeconfig_is_in_system_masters(control_plane: ControlPlane) -> None:
    who = json.loads(control_plane.kubectl("auth", "whoami", "-o", "json").stdout)
    assert "system:masters" in who["status"]["userInfo"]["groups"]


def test_anonymous_requests_are_not_cluster_admin(control_plane: ControlPlane) -> None:
    context = ssl.create_default_context(cafile=str(control_plane.ca_path))
    with pytest.raises(urllib.error.HTTPError) as raised:
        urllib.request.urlopen(f"{control_plane.server}/api/v1/secrets", context=context)
    assert raised.value.code in (401, 403)


async def test_api_client_fixture_speaks_to_the_control_plane(api_client: ApiClient) -> None:
    version = await client.VersionApi(api_client).get_code()
    assert version.git_version.startswith("v1.")
    await asyncio.sleep(0)
