"""N16 against a real apiserver: a cluster profile covered as a file, its coverage on
``status.coverage`` and in ``kubectl get burninprofiles``; the writes that must not pass.

The coverage itself is ``glimmer coverage``'s: the cluster's profile is written out by
:func:`glimmer.cli.coverage_status.open_profile_ref`, planned by ``glimmer run
--dry-run`` and covered by :func:`glimmer.local.coverage.cover`, the steps the command
takes for a file.
"""

from __future__ import annotations

import asyncio
import copy
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
import pytest_asyncio
import yaml

from glimmer.api import API_VERSION, ProfileCoverage
from glimmer.api.crd import render_crds
from glimmer.cli.coverage_status import (
    CoverageStatusError,
    coverage_status,
    open_profile_ref,
    read_profile,
    write_coverage_status,
)
from glimmer.controllers.kit.names import PROFILES, TESTS
from glimmer.engine import ApiServerClient, ClientOptions, Resource
from glimmer.local.coverage import HEALTHY, Case, CaseOutcome, Coverage, PlannedTest
from glimmer.local.manifests import load_documents
from glimmer.testing.control_plane import ControlPlane

pytestmark = pytest.mark.controlplane

AT = datetime(2026, 12, 3, 11, 0, 0, tzinfo=UTC)


@pytest_asyncio.fixture(loop_scope="function")
async def kube(control_plane: ControlPlane, glimmer_crds: None) -> AsyncIterator[ApiServerClient]:
    client = await ApiServerClient.connect(
        str(control_plane.kubeconfig_path), options=ClientOptions(qps=200, burst=400)
    )
    try:
        yield client
    finally:
        await client.close()


def _test(name: str, kind: str, seconds: int) -> dict[str, Any]:
    return {
        "apiVersion": API_VERSION,
        "kind": "BurnInTest",
        "metadata": {"name": name},
        "spec": {
            "kind": kind,
            "durationSeconds": seconds,
            "thresholds": [
                {"metric": "sustainedClockPct", "comparison": "GreaterThanOrEqual", "value": "85"}
            ],
        },
    }


def _profile(name: str, tests: list[str]) -> dict[str, Any]:
    return {
        "apiVersion": API_VERSION,
        "kind": "BurnInProfile",
        "metadata": {"name": name},
        "spec": {"tests": [{"testRef": t} for t in tests]},
    }


def _outcome(fault: str, phase: str | None) -> CaseOutcome:
    return CaseOutcome(case=Case("h200x2", fault), phase=phase, exit_code=0, cells=())


def _coverage(control: str | None, faults: dict[str, str | None]) -> Coverage:
    return Coverage(
        profile="p",
        sims=("h200x2",),
        control=(_outcome(HEALTHY, control),),
        faults=tuple(_outcome(f, p) for f, p in faults.items()),
        tests=(PlannedTest(name="t", kind="gpu-burn", required=True),),
        seconds=0.0,
        jobs=1,
    )


def _kubectl_get(control_plane: ControlPlane, namespace: str, *extra: str) -> dict[str, str]:
    """``kubectl get burninprofiles`` as {column: value} of its one row."""
    out = control_plane.kubectl("get", "burninprofiles", "-n", namespace, *extra).stdout
    header, row = out.splitlines()[:2]
    starts = [i for i, c in enumerate(header) if c != " " and (i == 0 or header[i - 1] == " ")]
    # Column names may hold one space ("Last Phase"); none of BurnInProfile's does.
    cells = [row[a:b].strip() for a, b in zip(starts, [*starts[1:], None], strict=True)]
    names = [header[a:b].strip() for a, b in zip(starts, [*starts[1:], None], strict=True)]
    return dict(zip(names, cells, strict=True))


async def test_N16_a_cluster_profile_is_covered_as_a_file_and_kubectl_get_shows_it(
    control_plane: ControlPlane,
    kube: ApiServerClient,
    namespace: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GLIMMER_RUNTIME", "process")  # this repository's runners, as tests/local
    for test in (_test("gpu-burn", "gpu-burn", 60), _test("clockprobe", "clockprobe", 30)):
        await kube.create(TESTS, test, namespace=namespace)
    await kube.create(
        PROFILES, _profile("with-gpu-burn", ["gpu-burn", "clockprobe"]), namespace=namespace
    )
    kubeconfig = str(control_plane.kubeconfig_path)
    ref = await asyncio.to_thread(
        open_profile_ref, f"{namespace}/with-gpu-burn", write_status=False, kubeconfig=kubeconfig
    )
    assert ref is not None and ref.profile.generation == 1
    documents = load_documents(ref.path)  # the shape glimmer coverage takes for a file
    assert [(d.kind, d.name) for d in documents] == [
        ("BurnInProfile", "with-gpu-burn"),
        ("BurnInTest", "gpu-burn"),
        ("BurnInTest", "clockprobe"),
    ]

    # End to end: the command itself, as a CI job runs it.
    done = await asyncio.to_thread(
        subprocess.run,
        [
            sys.executable, "-c", "from glimmer.cli import main; main()", "coverage",
            "--profile-ref", f"{namespace}/with-gpu-burn", "--write-status",
            "--kubeconfig", kubeconfig, "-o", "json",
        ],
        capture_output=True, text=True, timeout=600, check=False,
        env={**os.environ, "GLIMMER_RUNTIME": "process"},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    doc = json.loads(done.stdout)
    summary = f"{doc['summary']['line'].split(';')[0]} (generation 1)"
    stored = (await kube.get(PROFILES, "with-gpu-burn", namespace=namespace))["status"]["coverage"]
    assert stored["state"] == "Measured" and stored["summary"] == summary
    assert stored["missed"] == doc["summary"]["missed"]
    assert "sdc" not in stored["missed"]  # gpu-burn checks its results: it catches sdc
    assert (stored["profileGeneration"], stored["sims"]) == (1, ["h200x2"])
    assert _kubectl_get(control_plane, namespace)["COVERAGE"] == summary

    # The spec moves on: the coverage still names generation 1, beside generation 2.
    await kube.patch(PROFILES, "with-gpu-burn", {"spec": {"failFast": True}}, namespace=namespace)
    wide = _kubectl_get(control_plane, namespace, "-o", "wide")
    assert (wide["COVERAGE"], wide["GENERATION"]) == (summary, "2")


async def test_N16_a_void_coverage_written_over_a_measured_one_keeps_no_catch(
    kube: ApiServerClient, namespace: str
) -> None:
    await kube.create(PROFILES, _profile("p", ["t"]), namespace=namespace)
    measured = coverage_status(
        _coverage("Passed", {"sdc": "Passed", "crash": "Error"}), generation=1, computed_at=AT
    )
    await write_coverage_status(kube, namespace=namespace, name="p", status=measured)
    void = coverage_status(
        _coverage("Failed", {"sdc": "Failed", "crash": "Error"}), generation=1, computed_at=AT
    )
    await write_coverage_status(kube, namespace=namespace, name="p", status=void)
    stored = (await kube.get(PROFILES, "p", namespace=namespace))["status"]["coverage"]
    assert stored["state"] == "Void"
    assert "caught" not in stored and "missed" not in stored
    assert stored["summary"] == "void: the healthy control did not Pass (generation 1)"
    assert stored["unjudged"] == ["healthy"]


async def test_N16_the_apiserver_refuses_a_coverage_that_is_void_yet_claims_catches(
    kube: ApiServerClient, namespace: str
) -> None:
    await kube.create(PROFILES, _profile("p", ["t"]), namespace=namespace)
    lying = ProfileCoverage(
        state="Void",
        summary="catches 2 of 2 modelled faults (generation 1)",
        profile_generation=1,
        modelled=2,
        caught=2,
        missed=[],
        sims=["h200x2"],
        computed_at=AT,
        glimmer_version="0",
    )
    with pytest.raises(CoverageStatusError, match=r"refused.*only a Measured coverage"):
        await write_coverage_status(kube, namespace=namespace, name="p", status=lying)
    counted_wrong = ProfileCoverage(
        state="Measured",
        summary="catches 2 of 3 modelled faults (generation 1)",
        profile_generation=1,
        modelled=3,
        caught=2,
        missed=[],
        sims=["h200x2"],
        computed_at=AT,
        glimmer_version="0",
    )
    with pytest.raises(CoverageStatusError, match="caught plus the missed faults"):
        await write_coverage_status(kube, namespace=namespace, name="p", status=counted_wrong)
    assert "status" not in await kube.get(PROFILES, "p", namespace=namespace)


async def test_N16_a_missing_profile_is_a_usage_error_naming_it(
    kube: ApiServerClient, namespace: str
) -> None:
    with pytest.raises(CoverageStatusError) as refused:
        await read_profile(kube, namespace=namespace, name="nope")
    assert refused.value.code == 2
    assert f"BurnInProfile {namespace}/nope not found" in str(refused.value)
    assert f"kubectl get burninprofiles -n {namespace}" in str(refused.value)


async def test_N16_a_status_write_without_the_permission_names_it_and_the_fix(
    control_plane: ControlPlane, kube: ApiServerClient, namespace: str
) -> None:
    await kube.create(TESTS, _test("t", "clockprobe", 30), namespace=namespace)
    await kube.create(PROFILES, _profile("p", ["t"]), namespace=namespace)
    reader = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": {"name": "profile-reader", "namespace": namespace},
        "rules": [
            {
                "apiGroups": ["burnin.glimmer.ai"],
                "resources": ["burninprofiles", "burnintests"],
                "verbs": ["get"],
            }
        ],
    }
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": "profile-reader", "namespace": namespace},
        "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "Role",
            "name": "profile-reader",
        },
        "subjects": [{"kind": "ServiceAccount", "name": "ci", "namespace": namespace}],
    }
    control_plane.kubectl("apply", "-f", "-", input=yaml.safe_dump_all([reader, binding]))
    kubeconfig = control_plane.mint_service_account_kubeconfig(namespace=namespace, name="ci")
    client = await ApiServerClient.connect(str(kubeconfig))
    try:
        profile = await read_profile(client, namespace=namespace, name="p")
        assert [d["kind"] for d in profile.documents] == ["BurnInProfile", "BurnInTest"]
        status = coverage_status(_coverage("Passed", {"sdc": "Failed"}), generation=1)
        with pytest.raises(CoverageStatusError) as refused:
            await write_coverage_status(client, namespace=namespace, name="p", status=status)
    finally:
        await client.close()
    message = str(refused.value)
    assert f"BurnInProfile {namespace}/p: forbidden" in message
    assert f"patch on burninprofiles/status in namespace {namespace}" in message
    assert "bind a Role with patch on burninprofiles/status" in message
    assert refused.value.code == 3


OLD_GROUP = "old.glimmer.test"


@pytest.fixture
def crd_without_coverage(control_plane: ControlPlane) -> Iterator[Resource]:
    """The BurnInProfile CRD as a glimmer before status.coverage shipped it, served under
    another group so the session's CRDs stay as they are."""
    crd = copy.deepcopy(yaml.safe_load(render_crds()["burnin.glimmer.ai_burninprofiles.yaml"]))
    crd["metadata"]["name"] = f"burninprofiles.{OLD_GROUP}"
    crd["spec"]["group"] = OLD_GROUP
    for version in crd["spec"]["versions"]:
        status = version["schema"]["openAPIV3Schema"]["properties"]["status"]
        del status["properties"]["coverage"]
    control_plane.kubectl("apply", "-f", "-", input=json.dumps(crd))
    control_plane.kubectl(
        "wait", "--for=condition=Established", "--timeout=60s", f"crd/burninprofiles.{OLD_GROUP}"
    )
    try:
        yield Resource(OLD_GROUP, "v1alpha1", "burninprofiles", True, "BurnInProfile")
    finally:
        control_plane.kubectl("delete", "crd", f"burninprofiles.{OLD_GROUP}", "--wait=false")


async def test_N16_a_crd_that_prunes_the_coverage_is_an_error_not_a_success(
    kube: ApiServerClient, namespace: str, crd_without_coverage: Resource
) -> None:
    profile = {**_profile("p", ["t"]), "apiVersion": f"{OLD_GROUP}/v1alpha1"}
    await kube.create(crd_without_coverage, profile, namespace=namespace)
    status = coverage_status(_coverage("Passed", {"sdc": "Failed"}), generation=1)
    with pytest.raises(CoverageStatusError, match="predates the field and pruned it"):
        await write_coverage_status(
            kube, namespace=namespace, name="p", status=status, resource=crd_without_coverage
        )
