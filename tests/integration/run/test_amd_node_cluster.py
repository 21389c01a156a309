"""E14 on an AMD node, end to end: a simulated MI300X node is fingerprinted ``amd`` from
its labels and allocatable, a kind with a ROCm build here resolves its ``-rocm`` image
(no ``runner.image``, no ``imagesByVendor``), the runner reads the part through the
amdsmi adapter, and a kind with no ROCm build is an Error naming the fix, never the
NVIDIA image on an AMD part."""

from __future__ import annotations

from typing import Any

import pytest

from glimmer.controllers.fingerprint import vendor_of
from glimmer.controllers.kit.names import FINGERPRINTS, fingerprint_name
from glimmer.engine import ApiServerClient
from glimmer.plan.images import RUNNER_REPOSITORY, runner_image
from tests.integration.run.conftest import (
    FAST_RUN_OPTIONS,
    Operator,
    apply_profile,
    create_run,
    terminal_run,
)
from tests.integration.run.test_fabric_cluster_runs import REPO_ROOT, fingerprints, pod_images

pytestmark = [pytest.mark.controlplane, pytest.mark.timeout(300)]
__all__ = ["fingerprints"]  # the fixture, used by name

#: This project's images, ROCm siblings included, -> this checkout's runner modules.
ROCM_AWARE_IMAGES = (
    RUNNER_REPOSITORY.replace(".", r"\.") + r"-(?P<kind>[a-z0-9-]+?)(?:-rocm)?:[^@]*"
    "={python} -c \"import sys,runpy; sys.path.insert(0,'" + str(REPO_ROOT) + "'); "
    "runpy.run_module('runners.{kind_module}',None,'__main__',True)\""
)


def node_test(kind: str) -> dict[str, Any]:
    return {"kind": kind, "scope": "Node", "durationSeconds": 60}


async def test_E14_an_amd_node_runs_the_rocm_sibling_and_never_the_nvidia_image(
    operator: Operator,
    kube: ApiServerClient,
    namespace: str,
    sim_nodes: Any,
    fingerprints: None,
) -> None:
    nodes = sim_nodes(
        count=1,
        name_prefix="amd-",
        extra_args=[f"--image-map={ROCM_AWARE_IMAGES}", "--sim-gpu=mi300xx2"],
    )
    await apply_profile(kube, namespace, {"clock": node_test("clockprobe"),
                                          "dcgm": node_test("dcgm-diag")})  # fmt: skip
    async with pod_images(kube, namespace) as images:
        await create_run(kube, namespace, "amd", nodes.names)
        run = await terminal_run(kube, namespace, "amd", timeout=240)
    results = {r["name"]: r for r in run["status"]["results"]}
    clock, dcgm = results["clock"], results["dcgm"]
    assert clock["phase"] == "Passed", clock["message"]
    assert clock["metrics"].get("gfxTarget") == "gfx942", clock["metrics"]
    assert set(images.values()) == {runner_image("clockprobe", rocm=True)}, images
    # dcgm-diag has no ROCm build: an Error naming the fix, and no pod at all.
    assert dcgm["phase"] == "Error", dcgm
    assert "imagesByVendor" in dcgm["message"] and "amd" in dcgm["message"], dcgm["message"]
    fingerprint = await kube.get(
        FINGERPRINTS,
        fingerprint_name(nodes.names[0]),
        namespace=FAST_RUN_OPTIONS.operator_namespace,
    )
    assert vendor_of(fingerprint) == "amd", fingerprint.get("status")
