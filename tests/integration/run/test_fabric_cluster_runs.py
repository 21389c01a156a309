"""The fabric runners through the operator: real apiserver, simulated kubelets, default images.

Each run names no ``runner.image``: the operator resolves the kind's default (this
project's ``ghcr.io/glimmer-ai/glimmer-runner-<kind>``, E14), the simulated kubelet runs
it as this checkout's runner module, and the node's simulated NIC
(``GLIMMER_SIM_GPU``, one node's fault via ``--node-sim-gpu``) shapes what perftest and
nccl-tests' stand-ins report. Each cell asserted is one of
``runners.fault_matrix.FABRIC_FAULT_MATRIX``, on the side ``FABRIC_FAULT_SIDE`` names, so
the operator must reach the verdict the runners reach on loopback: a degraded link
Failed against the 90 % floor, memlock shrunk but still measured (ib-write-bw) or Error
naming RLIMIT_MEMLOCK (nccl), socket fallback Error, a flapping link Failed on
``linkErrorEvents``; and a Group reports once, from rank 0.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from glimmer.engine import NAMESPACES, PODS, ApiError, ApiServerClient, is_already_exists
from glimmer.plan.images import RUNNER_REPOSITORY, RUNNER_TAG
from runners.fault_matrix import FABRIC_FAULT_MATRIX, FABRIC_FAULT_SIDE
from tests.integration.run.conftest import (
    FAST_RUN_OPTIONS,
    Operator,
    apply_profile,
    create_run,
    terminal_run,
)

pytestmark = [pytest.mark.controlplane, pytest.mark.timeout(300)]

REPO_ROOT = Path(__file__).resolve().parents[3]
#: This project's runner images -> this checkout's runner modules (the kubelet gives a pod
#: only the pod's environment, so the interpreter alone would pick whichever ``runners``
#: it has installed).
OWN_RUNNER_IMAGES = (
    RUNNER_REPOSITORY.replace(".", r"\.") + r"-(?P<kind>[a-z0-9-]+):[^@]*"
    "={python} -c \"import sys,runpy; sys.path.insert(0,'" + str(REPO_ROOT) + "'); "
    "runpy.run_module('runners.{kind_module}',None,'__main__',True)\""
)
HEALTHY = "h200x8"
#: 90 % of the simulated ConnectX-7's 400 Gbit/s: the floor a degraded link must miss.
FLOOR_GBPS = "360"


@pytest_asyncio.fixture(loop_scope="function")
async def fingerprints(kube: ApiServerClient) -> None:
    """The operator's namespace, where the fingerprint controller records each node's
    NodeFingerprint: the default nccl image is built for NVIDIA, so E14 resolves it only
    once the node's vendor is known (a cluster installed from manifests/ has it)."""
    try:
        await kube.create(NAMESPACES, {"metadata": {"name": FAST_RUN_OPTIONS.operator_namespace}})
    except ApiError as error:
        if not is_already_exists(error):
            raise


def fabric_nodes(sim_nodes: Any, count: int, *, fault: str | None = None, on: int = 0) -> Any:
    """``count`` simulated H200x8 nodes; ``fault`` on node ``on`` only."""
    prefix = f"fab-{fault or 'ok'}-".replace(":", "-")[:20]
    args = [f"--image-map={OWN_RUNNER_IMAGES}", f"--sim-gpu={HEALTHY}"]
    if fault:
        args.append(f"--node-sim-gpu={prefix}{on}={HEALTHY}:{fault}")
    return sim_nodes(count=count, name_prefix=prefix, extra_args=args)


def side_index(fault: str) -> int:
    """The Pair node the fault matrix puts ``fault`` on (server = target 0)."""
    return 0 if FABRIC_FAULT_SIDE[fault] == "server" else 1


def pair_test(
    kind: str, prefix: str, *, env: dict[str, str] | None = None, **extra: Any
) -> dict[str, Any]:
    return {
        "kind": kind,
        "scope": "Pair",
        "durationSeconds": 90,
        "runner": {
            "env": [
                {"name": f"BURNIN_{prefix}_CONNECT_SECONDS", "value": "30"},
                {"name": f"BURNIN_{prefix}_TOOL_SECONDS", "value": "20"},
                *({"name": k, "value": v} for k, v in (env or {}).items()),
            ],
            "readinessProbe": {"tcpSocket": {"port": 18510}, "periodSeconds": 1},
        },
        **extra,
    }


@contextlib.asynccontextmanager
async def pod_images(kube: ApiServerClient, namespace: str) -> AsyncIterator[dict[str, str]]:
    """Pod name -> runner image of every pod created in ``namespace`` while open."""
    seen: dict[str, str] = {}
    version = str((await kube.list(PODS, namespace=namespace))["metadata"]["resourceVersion"])

    async def watch() -> None:
        stream = kube.watch(PODS, namespace=namespace, resource_version=version,
                            timeout_seconds=300)  # fmt: skip
        async with contextlib.aclosing(stream) as events:
            async for event in events:
                if event.type == "ADDED":
                    pod = event.object
                    seen[pod["metadata"]["name"]] = pod["spec"]["containers"][0]["image"]

    task = asyncio.create_task(watch())
    try:
        yield seen
    finally:
        assert not task.done(), task.exception() if task.done() else None
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def only_result(run: dict[str, Any]) -> dict[str, Any]:
    [result] = run["status"]["results"]
    return dict(result)


async def run_to_verdict(
    kube: ApiServerClient, namespace: str, name: str, nodes: list[str], test: dict[str, Any]
) -> dict[str, Any]:
    await apply_profile(kube, namespace, {name: test})
    await create_run(kube, namespace, name, nodes, maxConcurrentNodes=len(nodes))
    run = await terminal_run(kube, namespace, name, timeout=200)
    result = only_result(run)
    assert result["nodes"] == nodes, result
    return result


BANDWIDTH_GATE = [
    {"metric": "bandwidthGbps", "comparison": "GreaterThanOrEqual", "value": FLOOR_GBPS}
]


async def test_ib_write_bw_pair_healthy_passes_on_the_default_image(
    operator: Operator, kube: ApiServerClient, namespace: str, sim_nodes: Any
) -> None:
    nodes = fabric_nodes(sim_nodes, 2)
    test = pair_test("ib-write-bw", "IB_WRITE_BW", thresholds=BANDWIDTH_GATE)
    async with pod_images(kube, namespace) as images:
        result = await run_to_verdict(kube, namespace, "ibw-ok", nodes.names, test)
    assert FABRIC_FAULT_MATRIX["ib-write-bw"]["healthy"] == "Passed"
    assert result["phase"] == "Passed", result["message"]
    assert float(result["metrics"]["bandwidthGbps"]) >= float(FLOOR_GBPS)
    assert "peakBandwidthGbps" not in result["metrics"]
    assert result["metrics"]["memlockShrunk"] == "false"
    # E14 resolved this project's default image for both pods (watched from before the
    # run: the server pod is deleted once the verdict is written).
    assert sorted(images.values()) == [f"{RUNNER_REPOSITORY}-ib-write-bw:{RUNNER_TAG}"] * 2


async def test_ib_write_bw_pair_degraded_link_fails_against_the_90pct_floor(
    operator: Operator, kube: ApiServerClient, namespace: str, sim_nodes: Any
) -> None:
    fault = "degraded-link"
    nodes = fabric_nodes(sim_nodes, 2, fault=fault, on=side_index(fault))
    test = pair_test("ib-write-bw", "IB_WRITE_BW", thresholds=BANDWIDTH_GATE)
    result = await run_to_verdict(kube, namespace, "ibw-degraded", nodes.names, test)
    assert FABRIC_FAULT_MATRIX["ib-write-bw"][fault] == "Failed"
    assert result["phase"] == "Failed", result
    assert float(result["metrics"]["bandwidthGbps"]) < float(FLOOR_GBPS)
    # The runner's own floor (BURNIN_LINK_FLOOR_PCT, default 90) fails it: a measured
    # shortfall, exit 1, whose line names the floor and the port.
    assert "below the floor" in result["message"], result["message"]


async def test_ib_write_bw_pair_memlock_8mib_is_a_shrunk_still_measured_pass(
    operator: Operator, kube: ApiServerClient, namespace: str, sim_nodes: Any
) -> None:
    fault = "memlock-8mib"
    nodes = fabric_nodes(sim_nodes, 2, fault=fault, on=side_index(fault))
    gate = [{"metric": "bandwidthGbps", "comparison": "GreaterThanOrEqual", "value": "1"}]
    test = pair_test("ib-write-bw", "IB_WRITE_BW", thresholds=gate)
    result = await run_to_verdict(kube, namespace, "ibw-memlock", nodes.names, test)
    assert FABRIC_FAULT_MATRIX["ib-write-bw"][fault] == "Passed"
    assert result["phase"] == "Passed", result["message"]
    metrics = result["metrics"]
    assert metrics["memlockShrunk"] == "true" and metrics["memlockLimit"] == "8388608"
    assert int(metrics["rdmaMessageBytes"]) * int(metrics["rdmaQueuePairs"]) * 2 <= 8388608
    assert float(metrics["bandwidthGbps"]) > 0


SOAK_ENV = {"BURNIN_FABRIC_SOAK_ITERATIONS": "5"}


async def test_fabric_soak_pair_healthy_passes(
    operator: Operator, kube: ApiServerClient, namespace: str, sim_nodes: Any
) -> None:
    nodes = fabric_nodes(sim_nodes, 2)
    gate = [
        {"metric": "minBandwidthGbps", "comparison": "GreaterThanOrEqual", "value": FLOOR_GBPS},
        {"metric": "linkErrorEvents", "comparison": "Equal", "value": "0"},
    ]
    test = pair_test("fabric-soak", "FABRIC_SOAK", env=SOAK_ENV, thresholds=gate)
    result = await run_to_verdict(kube, namespace, "soak-ok", nodes.names, test)
    assert FABRIC_FAULT_MATRIX["fabric-soak"]["healthy"] == "Passed"
    assert result["phase"] == "Passed", result["message"]
    assert result["metrics"]["linkErrorEvents"] == "0"
    assert int(result["metrics"]["soakIterations"]) >= 1


async def test_fabric_soak_pair_flapping_link_fails_on_link_error_events(
    operator: Operator, kube: ApiServerClient, namespace: str, sim_nodes: Any
) -> None:
    fault = "flapping-link"
    nodes = fabric_nodes(sim_nodes, 2, fault=fault, on=side_index(fault))
    gate = [{"metric": "linkErrorEvents", "comparison": "Equal", "value": "0"}]
    test = pair_test("fabric-soak", "FABRIC_SOAK", env=SOAK_ENV, thresholds=gate)
    result = await run_to_verdict(kube, namespace, "soak-flap", nodes.names, test)
    assert FABRIC_FAULT_MATRIX["fabric-soak"][fault] == "Failed"
    assert result["phase"] == "Failed", result
    assert "linkErrorEvents" in result["message"], result["message"]


def nccl_group(**extra: Any) -> dict[str, Any]:
    return {
        "kind": "nccl",
        "scope": "Group",
        "durationSeconds": 90,
        "runner": {
            "env": [
                {"name": "BURNIN_NCCL_MAX_BYTES", "value": "64M"},
                {"name": "BURNIN_NCCL_RENDEZVOUS_SECONDS", "value": "60"},
            ],
            "readinessProbe": {"tcpSocket": {"port": 18540}, "periodSeconds": 1},
        },
        **extra,
    }


async def pod_log(kube: ApiServerClient, namespace: str, name: str) -> str:
    chunks = [c async for c in kube.stream_pod_log(name, namespace=namespace, container="runner")]
    return b"".join(chunks).decode()


async def test_nccl_group_of_four_passes_reported_once_from_rank_0(
    operator: Operator, kube: ApiServerClient, namespace: str, sim_nodes: Any, fingerprints: None
) -> None:
    nodes = fabric_nodes(sim_nodes, 4)
    gate = [{"metric": "miscompares", "comparison": "Equal", "value": "0"}]
    result = await run_to_verdict(
        kube, namespace, "nccl-4", nodes.names, nccl_group(thresholds=gate)
    )
    assert FABRIC_FAULT_MATRIX["nccl"]["healthy"] == "Passed"
    assert result["phase"] == "Passed", result["message"]
    metrics = result["metrics"]
    assert metrics["ranks"] == "32" and metrics["ncclTransport"] == "IB", metrics
    assert float(metrics["busBandwidthGBs"]) > 0
    pods = {
        p["spec"]["hostname"]: p["metadata"]["name"]
        for p in (await kube.list(PODS, namespace=namespace))["items"]
    }
    assert sorted(pods) == ["rank-0", "rank-1", "rank-2", "rank-3"], pods
    logs = {host: await pod_log(kube, namespace, name) for host, name in pods.items()}
    reporting = sorted(h for h, text in logs.items() if "\nbusBandwidthGBs=" in "\n" + text)
    assert reporting == ["rank-0"], logs
    assert f"busBandwidthGBs={metrics['busBandwidthGBs']}" in logs["rank-0"]


@pytest.mark.parametrize(
    ("fault", "says"),
    [("memlock-8mib", "RLIMIT_MEMLOCK"), ("nccl-socket-fallback", "TCP sockets")],
)
async def test_nccl_group_memlock_or_socket_fallback_is_error_never_a_number(
    operator: Operator,
    kube: ApiServerClient,
    namespace: str,
    sim_nodes: Any,
    fingerprints: None,
    fault: str,
    says: str,
) -> None:
    # The conformance cases put these nccl faults on rank 0, whose tool runs the job.
    nodes = fabric_nodes(sim_nodes, 4, fault=fault, on=0)
    gate = [{"metric": "busBandwidthGBs", "comparison": "GreaterThanOrEqual", "value": "1"}]
    name = f"nccl-{fault}"[:30]
    result = await run_to_verdict(kube, namespace, name, nodes.names, nccl_group(thresholds=gate))
    assert FABRIC_FAULT_MATRIX["nccl"][fault] == "Error"
    assert result["phase"] == "Error", result
    assert says in result["message"], result["message"]
    assert "busBandwidthGBs" not in (result.get("metrics") or {}), result
