"""N1: reference-shaped profiles, two dispatchers, one verdict.

The Node-scope reference profiles of ``tests/fixtures/reference_profiles/`` go (a)
through the operator against a real apiserver and a simulated H200 kubelet running this
checkout's runners and (b) through ``glimmer run --sim h200`` on this host, given the
simulated node's name. Both reach the same run phase, the same phase for every test
both ran (a bare host reports a mixed profile's Pair/Group tests Skipped, N5; the
cluster runs them) and the same gates deciding (violations and unmeasurable names).

Every reference profile but the Pair-only one (pair network acceptance: a plain bare
run refuses it, N1; its two-ended bare run is in tests/local) runs here, the week-long
soak included.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from glimmer.controllers.kit.names import PROFILES, RUNS, TESTS
from glimmer.engine import ApiServerClient
from tests.integration.run.conftest import Operator, terminal_run
from tests.integration.run.test_fabric_cluster_runs import (
    OWN_RUNNER_IMAGES,
    REPO_ROOT,
    fingerprints,
)

pytestmark = [pytest.mark.controlplane, pytest.mark.timeout(600)]
__all__ = ["fingerprints"]  # the fixture, used by name

PROFILES_DIR = REPO_ROOT / "tests" / "fixtures" / "reference_profiles"
CLUSTER_PROFILES = [
    "smoke.yaml",
    "standard.yaml",
    "extended.yaml",
    "variant-sweep.yaml",
    "segmented-soak.yaml",
    "week-soak.yaml",
    "inference-readiness.yaml",
    "post-maintenance.yaml",
    "mixed-fleet.yaml",
    "periodic-reverification.yaml",
]
#: The mixed profiles (N5): their link tests need two nodes in the cluster.
MIXED = {"standard.yaml", "extended.yaml", "post-maintenance.yaml"}
RESOURCES = {"BurnInTest": TESTS, "BurnInProfile": PROFILES}


def documents(profile: str) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all((PROFILES_DIR / profile).read_text()) if doc]


def bare_run(profile: str, node: str, report: Path) -> dict[str, Any]:
    proc = subprocess.run(
        [
            sys.executable, "-c", "from glimmer.cli import main; main()", "run",
            str(PROFILES_DIR / profile), "--sim", "h200", "--node", node,
            "--runtime", "process", "--report-dir", str(report),
        ],
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert (report / "run.json").exists(), proc.stdout + proc.stderr
    doc: dict[str, Any] = json.loads((report / "run.json").read_text())
    return doc


def deciding(result: dict[str, Any]) -> tuple[str, list[str], list[str]]:
    """A result's phase and the gates that decided it."""
    violations = sorted(str(v.get("metric", v)) if isinstance(v, dict) else str(v)
                        for v in result.get("violations") or [])  # fmt: skip
    return result["phase"], violations, sorted(result.get("unmeasurable") or [])


async def cluster_run(
    kube: ApiServerClient, namespace: str, profile: str, nodes: list[str]
) -> dict[str, Any]:
    name = ""
    for doc in documents(profile):
        resource = RESOURCES.get(doc["kind"])
        if resource is None:
            continue
        await kube.create(resource, doc, namespace=namespace)
        if doc["kind"] == "BurnInProfile":
            name = doc["metadata"]["name"]
    await kube.create(
        RUNS,
        {
            "apiVersion": "burnin.glimmer.ai/v1alpha1",
            "kind": "BurnInRun",
            "metadata": {"name": name},
            # A Pair test holds both of its nodes at once: the run lets them run together.
            "spec": {
                "profileRef": name,
                "target": {"nodeNames": nodes},
                "maxConcurrentNodes": len(nodes),
            },
        },
        namespace=namespace,
    )
    run: dict[str, Any] = await terminal_run(kube, namespace, name, timeout=420)
    return run


@pytest.mark.parametrize("profile", CLUSTER_PROFILES)
async def test_N1_a_reference_profile_reaches_the_same_verdict_in_the_cluster_and_bare(
    operator: Operator,
    kube: ApiServerClient,
    namespace: str,
    sim_nodes: Any,
    fingerprints: None,
    profile: str,
    tmp_path: Path,
) -> None:
    nodes = sim_nodes(
        count=2 if profile in MIXED else 1,
        name_prefix="ref-",
        extra_args=[f"--image-map={OWN_RUNNER_IMAGES}", "--sim-gpu=h200"],
    )
    node = nodes.names[0]
    run = await cluster_run(kube, namespace, profile, list(nodes.names))
    bare = bare_run(profile, node, tmp_path / "r")
    cluster_results = {r["name"]: r for r in run["status"]["results"]}
    bare_results = {r["name"]: r for r in bare["results"]}
    assert run["status"]["phase"] == bare["phase"], (run["status"], bare)
    not_run_here = set(bare.get("notRunHere", []))
    both = (set(cluster_results) & set(bare_results)) - not_run_here
    assert both == set(bare_results) - not_run_here
    for test in sorted(both):
        assert deciding(cluster_results[test]) == deciding(bare_results[test]), test
    # N5: what the bare host skipped as another scope's, the cluster ran.
    for test in sorted(not_run_here):
        assert cluster_results[test]["phase"] != "Skipped", cluster_results[test]
