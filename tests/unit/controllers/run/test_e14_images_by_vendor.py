"""E14: an execution whose image turns on the node's GPU vendor learns the vendor from
the node's captured NodeFingerprint, and a node without one is a clear, retryable state,
never the NVIDIA default by accident (an AMD node running the CUDA image reads as a
broken GPU)."""

from __future__ import annotations

from typing import Any

from glimmer.controllers.kit import names
from glimmer.controllers.run.sweep import FINGERPRINT_GRACE_SECONDS
from glimmer.plan import default_image
from tests.unit.controllers.run.harness import Cluster

ROCM = "registry.example/compute-smoke-rocm:1"


def smoke(**runner: Any) -> dict[str, Any]:
    """A built-in NVIDIA kind with no runner.image: its image depends on the vendor."""
    return {"kind": "compute-smoke", "scope": "Node", "durationSeconds": 5, "runner": runner}


async def fingerprint(cluster: Cluster, node: str, *, vendor: str, captured: bool = True) -> None:
    status: dict[str, Any] = {"gpus": [{"vendor": vendor}]}
    if captured:
        status["digest"] = f"glimmer-v1:{node}"
    await cluster.client.create(
        names.FINGERPRINTS,
        {"metadata": {"name": node}, "spec": {"nodeName": node}, "status": status},
        namespace="glimmer-system",
    )


def cordoned(cluster: Cluster) -> list[str]:
    return [n for n in cluster.node_names if cluster.node(n).get("spec", {}).get("unschedulable")]


async def test_E14_a_node_without_a_captured_fingerprint_waits_then_errors_never_the_default() -> (
    None
):
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": smoke(imagesByVendor=[{"vendor": "amd", "image": ROCM}])})
    await fingerprint(cluster, "n0", vendor="amd", captured=False)
    await cluster.create_run(retryOnErrorLimit=0)
    await cluster.reconcile()
    assert cluster.pods() == [] and cordoned(cluster) == []  # waiting, nothing held
    assert (await cluster.run())["status"]["phase"] == "Running"
    cluster.advance(FINGERPRINT_GRACE_SECONDS + 1)
    await cluster.reconcile()
    run = await cluster.run()
    [result] = run["status"]["results"]
    assert result["phase"] == "Error"
    assert "FingerprintPending" in result["message"]
    assert cluster.pods() == [] and cordoned(cluster) == []


async def test_E14_an_amd_node_gets_its_imagesByVendor_image() -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": smoke(imagesByVendor=[{"vendor": "amd", "image": ROCM}])})
    await fingerprint(cluster, "n0", vendor="amd")
    await cluster.create_run()
    await cluster.reconcile()
    [pod] = cluster.pods()
    assert pod["spec"]["containers"][0]["image"] == ROCM


async def test_E14_an_nvidia_node_gets_the_nvidia_default() -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": smoke()})
    await fingerprint(cluster, "n0", vendor="nvidia")
    await cluster.create_run()
    await cluster.reconcile()
    [pod] = cluster.pods()
    assert pod["spec"]["containers"][0]["image"] == default_image("compute-smoke")


async def test_E14_an_explicit_image_needs_no_fingerprint() -> None:
    cluster = Cluster(nodes=1)
    await cluster.setup(tests={"t": smoke(image="example.com/mine:1")})
    await cluster.create_run()
    await cluster.reconcile()
    [pod] = cluster.pods()
    assert pod["spec"]["containers"][0]["image"] == "example.com/mine:1"
