"""Engine benchmark: informer memory/CPU with and without the ingest transform,
list+sync time, and workqueue throughput with a no-op reconciler.

It prints figures; it asserts nothing about time (a bench is a measurement,
not a test). Each informer variant is measured in a fresh child process, so
one variant's heap does not inflate the next one's RSS.

    .venv/bin/python bench/engine/run.py                      # 5,000 nodes / 50,000 pods
    .venv/bin/python bench/engine/run.py --nodes 500 --pods 5000
    .venv/bin/python bench/engine/run.py --kwok               # KWOK plays kubelet
    .venv/bin/python bench/engine/run.py --kubeconfig K       # use an existing cluster
    .venv/bin/python bench/engine/run.py --queue-only         # no apiserver needed

Without `--kubeconfig` it starts its own etcd + kube-apiserver from the
`hack/envtest` binaries. Without `--kwok`, Node and Pod objects are created
directly through the API (pods bound by `spec.nodeName`, never run); the
informer sees the same object shapes either way, minus kubelet status churn.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from glimmer.controllers.kit.indexes import nodes_by_cordon_owner, pods_by_run
from glimmer.controllers.kit.names import RUN_LABEL, TEST_LABEL
from glimmer.engine import (
    NAMESPACES,
    NODES,
    PODS,
    ApiServerClient,
    ClientOptions,
    Controller,
    ControllerOptions,
    EngineMetrics,
    InformerFactory,
    Result,
    WorkQueue,
    configure_logging,
    is_already_exists,
    keep_fields,
    strip_managed_fields,
)
from glimmer.engine.transforms import compact_node, compact_pod

NAMESPACE = "glimmer-bench"
TRANSFORMS: dict[str, dict[str, Callable[[dict[str, Any]], dict[str, Any]] | None]] = {
    "none": {"pods": None, "nodes": None},
    "strip-managed-fields": {"pods": strip_managed_fields, "nodes": strip_managed_fields},
    "compact": {"pods": compact_pod, "nodes": compact_node},
    "keep-fields": {
        "pods": keep_fields("spec.nodeName", "status.phase", "status.containerStatuses"),
        "nodes": keep_fields("spec.unschedulable", "spec.taints", "status.conditions"),
    },
}


def rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


# --- population ------------------------------------------------------------------


def node_body(name: str) -> dict[str, Any]:
    resources = {"cpu": "64", "memory": "512Gi", "pods": "110", "nvidia.com/gpu": "8"}
    return {
        "metadata": {
            "name": name,
            "labels": {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "type": "kwok",
                "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
            },
            "annotations": {"kwok.x-k8s.io/node": "fake"},
        },
        "status": {"allocatable": resources, "capacity": resources},
    }


def pod_body(index: int, node: str) -> dict[str, Any]:
    run = f"run-{index % 100}"
    return {
        "metadata": {
            "name": f"burnin-{index:06d}",
            "labels": {RUN_LABEL: run, TEST_LABEL: "gpu-burn",
                       "app.kubernetes.io/managed-by": "glimmer"},
            "annotations": {"burnin.glimmer.ai/plan-hash": f"{index:064x}"},
        },
        "spec": {
            "nodeName": node,
            "restartPolicy": "Never",
            "automountServiceAccountToken": False,
            "tolerations": [{"operator": "Exists"}],
            "containers": [
                {
                    "name": "runner",
                    "image": "ghcr.io/glimmer/runners/gpu-burn:v0.1.0",
                    "command": ["/runner", "--duration=600s"],
                    "env": [{"name": f"BURNIN_VAR_{i}", "value": f"value-{i}-{run}"}
                            for i in range(8)],
                    "resources": {"limits": {"nvidia.com/gpu": "8", "cpu": "4",
                                             "memory": "16Gi"}},
                }
            ],
        },
    }  # fmt: skip


async def create_all(
    client: ApiServerClient, bodies: list[dict[str, Any]], *, namespace: str | None, kind: str
) -> float:
    resource_ = PODS if kind == "pods" else NODES
    gate = asyncio.Semaphore(64)

    async def one(body: dict[str, Any]) -> None:
        async with gate:
            try:
                await client.create(resource_, body, namespace=namespace)
            except Exception as exc:
                if not is_already_exists(exc):
                    raise

    began = time.perf_counter()
    await asyncio.gather(*(one(b) for b in bodies))
    return time.perf_counter() - began


async def populate(
    kubeconfig: str, *, nodes: int, pods: int, kwok_nodes: list[str] | None
) -> dict[str, float]:
    client = await ApiServerClient.connect(
        kubeconfig, options=ClientOptions(qps=2000, burst=2000, request_timeout=120)
    )
    try:
        try:
            await client.create(NAMESPACES, {"metadata": {"name": NAMESPACE}})
        except Exception as exc:
            if not is_already_exists(exc):
                raise
        node_names = kwok_nodes or [f"bench-node-{i:05d}" for i in range(nodes)]
        node_s = 0.0
        if kwok_nodes is None:
            node_s = await create_all(client, [node_body(n) for n in node_names],
                                      namespace=None, kind="nodes")  # fmt: skip
        pod_bodies = [pod_body(i, node_names[i % len(node_names)]) for i in range(pods)]
        pod_s = await create_all(client, pod_bodies, namespace=NAMESPACE, kind="pods")
        return {"create_nodes_s": node_s, "create_pods_s": pod_s}
    finally:
        await client.close()


# --- informer measurement (child process) ---------------------------------------


async def measure_informer(kubeconfig: str, variant: str, idle_s: float) -> dict[str, Any]:
    gc.collect()
    base_rss = rss_kib()
    client = await ApiServerClient.connect(
        kubeconfig, options=ClientOptions(qps=1000, burst=1000, request_timeout=300)
    )
    transforms = TRANSFORMS[variant]
    factory = InformerFactory(client)
    pod_informer = factory.informer(
        PODS, transform=transforms["pods"], indexers={"run": pods_by_run}
    )
    node_informer = factory.informer(
        NODES, transform=transforms["nodes"], indexers={"owner": nodes_by_cordon_owner}
    )
    cpu0, wall0 = cpu_seconds(), time.perf_counter()
    factory.start()
    await factory.wait_for_sync()
    sync_s = time.perf_counter() - wall0
    sync_cpu = cpu_seconds() - cpu0
    gc.collect()
    synced_rss = rss_kib()
    cpu1 = cpu_seconds()
    await asyncio.sleep(idle_s)
    idle_cpu = cpu_seconds() - cpu1
    sample = pod_informer.store.values()[:200]
    cached_bytes = sum(len(json.dumps(o)) for o in sample) / max(1, len(sample))
    by_run = len(pod_informer.store.by_index("run", "run-7"))
    result = {
        "variant": variant,
        "pods": len(pod_informer.store),
        "nodes": len(node_informer.store),
        "list_sync_s": round(sync_s, 3),
        "sync_cpu_s": round(sync_cpu, 3),
        "rss_delta_mib": round((synced_rss - base_rss) / 1024, 1),
        "rss_mib": round(synced_rss / 1024, 1),
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "idle_cpu_pct": round(100 * idle_cpu / idle_s, 2),
        "cached_pod_json_bytes": round(cached_bytes),
        "pods_in_run_7": by_run,
    }
    await factory.stop()
    await client.close()
    return result


# --- workqueue ---------------------------------------------------------------------


async def measure_queue(*, keys: int, adds: int, workers: int) -> dict[str, Any]:
    metrics = EngineMetrics()
    queue: WorkQueue[str] = WorkQueue(name="raw", metrics=metrics.queue("raw"))
    names = [f"ns/obj-{i}" for i in range(keys)]
    began = time.perf_counter()
    for i in range(adds):
        queue.add(names[i % keys])
    add_s = time.perf_counter() - began
    began = time.perf_counter()
    drained = 0
    while len(queue):
        key = await queue.get()
        queue.done(key)
        drained += 1
    drain_s = time.perf_counter() - began

    reconciled = 0

    class NoOp:
        async def reconcile(self, key: str) -> Result:
            nonlocal reconciled
            reconciled += 1
            return Result()

    options = ControllerOptions(max_concurrent_reconciles=workers)
    # Burst: every add lands before the workers start, so they collapse to `keys`.
    burst = Controller("burst", NoOp(), metrics=metrics, options=options)
    for i in range(adds):
        burst.queue.add(names[i % keys])
    began = time.perf_counter()
    burst.start()
    while len(burst.queue) or burst.queue.processing:
        await asyncio.sleep(0.001)
    burst_s = time.perf_counter() - began
    burst_reconciles = reconciled
    await burst.stop()

    # Streaming: adds interleave with reconciles (the add/get/done hot path).
    reconciled = 0
    controller = Controller("noop", NoOp(), metrics=metrics, options=options)
    began = time.perf_counter()
    controller.start()
    for i in range(adds):
        controller.queue.add(names[i % keys])
        if i % 1000 == 0:
            await asyncio.sleep(0)
    while len(controller.queue) or controller.queue.processing:
        await asyncio.sleep(0.001)
    controller_s = time.perf_counter() - began
    await controller.stop()
    return {
        "keys": keys,
        "adds": adds,
        "workers": workers,
        "raw_adds_per_s": round(adds / add_s),
        "raw_get_done_per_s": round(drained / drain_s),
        "collapsed_to": drained,
        "burst_reconciles": burst_reconciles,
        "burst_reconciles_per_s": round(burst_reconciles / burst_s),
        "stream_reconciles": reconciled,
        "stream_reconciles_per_s": round(reconciled / controller_s),
    }


# --- orchestration -----------------------------------------------------------------


def run_child(kubeconfig: str, variant: str, idle_s: float) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, __file__, "measure-informer", "--kubeconfig", kubeconfig,
         "--variant", variant, "--idle", str(idle_s)],
        capture_output=True, text=True, timeout=1800, check=True,
    )  # fmt: skip
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def print_table(rows: list[dict[str, Any]]) -> None:
    columns = list(rows[0])
    widths = {c: max(len(c), *(len(str(r[c])) for r in rows)) for c in columns}
    print("  ".join(c.ljust(widths[c]) for c in columns))
    for row in rows:
        print("  ".join(str(row[c]).ljust(widths[c]) for c in columns))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", nargs="?", default="all", choices=["all", "measure-informer"])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=50000)
    parser.add_argument("--kubeconfig")
    parser.add_argument("--kwok", action="store_true", help="register nodes through KWOK")
    parser.add_argument("--variant", default="none", choices=sorted(TRANSFORMS))
    parser.add_argument("--idle", type=float, default=10.0, help="seconds of idle watch")
    parser.add_argument("--queue-keys", type=int, default=10000)
    parser.add_argument("--queue-adds", type=int, default=200000)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--queue-only", action="store_true")
    args = parser.parse_args()

    configure_logging(level="warning")
    if args.mode == "measure-informer":
        result = asyncio.run(measure_informer(args.kubeconfig, args.variant, args.idle))
        print(json.dumps(result))
        return

    print(f"# glimmer engine bench  python {sys.version.split()[0]}")
    queue = asyncio.run(
        measure_queue(keys=args.queue_keys, adds=args.queue_adds, workers=args.workers)
    )
    print("\n## workqueue (no-op reconciler)")
    print_table([queue])
    if args.queue_only:
        return

    control_plane = None
    kwok = None
    kubeconfig = args.kubeconfig
    try:
        if kubeconfig is None:
            from glimmer.testing.control_plane import ControlPlane

            control_plane = ControlPlane()
            control_plane.start()
            kubeconfig = str(control_plane.kubeconfig_path)
            print(f"\ncontrol plane started in {control_plane.startup_seconds:.1f} s")
        kwok_nodes = None
        if args.kwok:
            from glimmer.testing.kwok import Kwok

            assert control_plane is not None, "--kwok needs the bench's own control plane"
            kwok = Kwok(control_plane, start_timeout=600).start()
            began = time.perf_counter()
            kwok_nodes = kwok.create_nodes(args.nodes, name_prefix="bench-node-")
            print(f"kwok: {args.nodes} nodes Ready in {time.perf_counter() - began:.1f} s")
        timing = asyncio.run(
            populate(kubeconfig, nodes=args.nodes, pods=args.pods, kwok_nodes=kwok_nodes)
        )
        print(
            f"created {args.nodes} nodes in {timing['create_nodes_s']:.1f} s, "
            f"{args.pods} pods in {timing['create_pods_s']:.1f} s "
            f"({args.pods / max(timing['create_pods_s'], 1e-9):.0f} pods/s)"
        )
        rows = [run_child(kubeconfig, variant, args.idle) for variant in TRANSFORMS]
        print(f"\n## informers (pods + nodes, one child process each, idle {args.idle:.0f} s)")
        print_table(rows)
    finally:
        if kwok is not None:
            kwok.stop()
        if control_plane is not None:
            control_plane.stop()


if __name__ == "__main__":
    main()
