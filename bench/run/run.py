"""BurnInRun reconciler at fleet size on KWOK. Prints figures; asserts nothing.

    .venv/bin/python bench/run/run.py [--nodes 1000] [--max-concurrent 100]

Starts its own control plane, KWOK (with the bench stage `kwok-stage-complete-runner.yaml`
added: every pod labelled `burnin.glimmer.ai/run` completes at once with exit 0) and
`glimmer manager` as a subprocess (`glimmer.testing.ManagerProcess`, serving only the
bench's namespace), then creates one BurnInRun of one `custom` test with no thresholds
over every node, and reports:

- wall time from run creation to the verdict, and to the finalizer's removal;
- apiserver requests per node-test: `apiserver_request_total` (all clients: manager,
  KWOK, the simulator's scheduler, this bench's watches) before vs after, and the
  manager's own `glimmer_apiserver_requests_total`;
- latency from container termination (`state.terminated.finishedAt`) to the result
  settling in the run status, sampled by a watch on the run: p50/p99/max;
- the manager's peak RSS (`VmHWM`).

Timestamps written by KWOK have one-second resolution, so the latency figures carry up to
a second of rounding (the bench reports the resolution it saw).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime
import shutil
import signal
import statistics
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from glimmer.api.kinds import KINDS
from glimmer.controllers.run.kube import PROFILES, RUNS, TESTS
from glimmer.engine import PODS, ApiServerClient, ClientOptions
from glimmer.testing import ManagerProcess
from glimmer.testing import kwok as kwok_module
from glimmer.testing.control_plane import ControlPlane
from glimmer.testing.kwok import Kwok

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
NAMESPACE = "bench"
RUN = "fleet"
TERMINAL = ("Passed", "Failed", "Error", "Cancelled")


def parse_time(text: str) -> float:
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def metric_by(text: str, family: str, *label_names: str) -> Counter[str]:
    """A counter family summed per combination of ``label_names``."""
    totals: Counter[str] = Counter()
    for metric in text_string_to_metric_families(text):
        if metric.name == family.removesuffix("_total"):
            for sample in metric.samples:
                if sample.name == family:
                    key = " ".join(sample.labels.get(n, "") for n in label_names)
                    totals[key] += int(sample.value)
    return totals


def apiserver_requests(plane: ControlPlane) -> Counter[str]:
    text = plane.kubectl("get", "--raw", "/metrics").stdout
    return metric_by(text, "apiserver_request_total", "verb", "resource", "subresource")


def manager_requests(port: int) -> Counter[str]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        text = response.read().decode()
    return metric_by(text, "glimmer_apiserver_requests_total", "verb")


def breakdown(after: Counter[str], before: Counter[str], *, per: int) -> str:
    delta = after - before
    return ", ".join(f"{k.strip()}={v / per:.2f}" for k, v in delta.most_common() if v)


def peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM in /proc status")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def start_kwok(plane: ControlPlane, stages: Path) -> Kwok:
    """KWOK with the shared stages plus the bench's completion stage.

    `Kwok.start` reads its stage directory from the module; the bench points it at a
    copy with one extra file rather than changing what every test's KWOK does.
    """
    for path in kwok_module.STAGES_DIR.glob("*.yaml"):
        shutil.copy(path, stages / path.name)
    shutil.copy(HERE / "kwok-stage-complete-runner.yaml", stages / "zz-bench-complete.yaml")
    kwok_module.STAGES_DIR = stages
    return Kwok(plane, start_timeout=300).start()


def start_manager(plane: ControlPlane, *, log_path: Path) -> ManagerProcess:
    """`glimmer manager` serving the bench's namespace, once its caches have synced.

    The manager honours runs only in the namespaces it serves (`--serve-namespaces`;
    by default its own, which is not `bench`), so the bench names its namespace.
    """
    manager = ManagerProcess(
        kubeconfig=plane.kubeconfig_path, log_path=log_path, serve_namespaces=NAMESPACE
    )
    manager.start()
    try:
        manager.wait_ready(timeout=120)
    except BaseException:
        manager.stop()
        raise
    return manager


class RunWatch:
    """Records when each result of the run first appears settled, and the verdict."""

    def __init__(self) -> None:
        self.settled_at: dict[tuple[str, str], float] = {}
        self.pod_of: dict[tuple[str, str], str] = {}
        self.verdict_at: float | None = None
        self.done_at: float | None = None
        self.last: dict[str, Any] = {}
        self.events = 0
        self.relists = 0

    def ingest(self, run: dict[str, Any]) -> None:
        now = time.time()
        self.events += 1
        self.last = run
        status = run.get("status") or {}
        for result in status.get("results") or []:
            key = (result["name"], ",".join(result.get("nodes") or []))
            if result.get("phase") not in (None, "", "Running") and key not in self.settled_at:
                self.settled_at[key] = now
                attempts = result.get("attempts") or []
                if attempts and attempts[-1].get("podName"):
                    self.pod_of[key] = attempts[-1]["podName"]
        if status.get("phase") in TERMINAL and self.verdict_at is None:
            self.verdict_at = now
        if self.verdict_at is not None and not run["metadata"].get("finalizers"):
            self.done_at = now

    async def follow(self, client: ApiServerClient, *, version: str) -> None:
        while self.done_at is None:
            expired = False
            async with contextlib.aclosing(
                client.watch(
                    RUNS,
                    namespace=NAMESPACE,
                    field_selector=f"metadata.name={RUN}",
                    resource_version=version,
                    timeout_seconds=600,
                )
            ) as stream:
                async for event in stream:
                    if event.type == "ERROR":
                        expired = True  # 410: our version was compacted away
                        break
                    version = event.object["metadata"]["resourceVersion"]
                    if event.type in ("ADDED", "MODIFIED"):
                        self.ingest(event.object)
                        if self.done_at is not None:
                            return
            if expired:
                # Catch up from a fresh list; a result settled during the gap is stamped
                # late, which can only overstate the latency.
                self.relists += 1
                listed = await client.list(
                    RUNS, namespace=NAMESPACE, field_selector=f"metadata.name={RUN}"
                )
                for run in listed["items"]:
                    self.ingest(run)
                version = str(listed["metadata"]["resourceVersion"])


async def create_profile(client: ApiServerClient) -> None:
    await client.create(
        TESTS,
        {
            "apiVersion": "burnin.glimmer.ai/v1alpha1",
            "kind": "BurnInTest",
            "metadata": {"name": "instant"},
            "spec": {
                "kind": "custom",
                "scope": "Node",
                "durationSeconds": 60,
                "runner": {"image": "example.com/instant:1", "command": ["true"]},
            },
        },
        namespace=NAMESPACE,
    )
    await client.create(
        PROFILES,
        {
            "apiVersion": "burnin.glimmer.ai/v1alpha1",
            "kind": "BurnInProfile",
            "metadata": {"name": "bench"},
            "spec": {"tests": [{"testRef": "instant"}]},
        },
        namespace=NAMESPACE,
    )


async def termination_times(client: ApiServerClient) -> dict[str, float]:
    """Pod name -> its runner's `finishedAt`, for every terminated pod of the run."""
    finished: dict[str, float] = {}
    token: str | None = None
    while True:
        page = await client.list(PODS, namespace=NAMESPACE, limit=500, continue_token=token)
        for pod in page["items"]:
            statuses = (pod.get("status") or {}).get("containerStatuses") or []
            terminated = (statuses[0].get("state") or {}).get("terminated") if statuses else None
            if terminated and terminated.get("finishedAt"):
                finished[pod["metadata"]["name"]] = parse_time(terminated["finishedAt"])
        token = page["metadata"].get("continue")
        if not token:
            return finished


async def bench(
    plane: ControlPlane, *, nodes: list[str], cap: int, timeout: float, log_path: Path
) -> None:
    # The run may not change for minutes while the manager works through a wave, and
    # this apiserver (no watch cache) sends no bookmarks: allow a long silence.
    client = await ApiServerClient.connect(
        str(plane.kubeconfig_path), options=ClientOptions(watch_inactivity_timeout=1800)
    )
    manager: ManagerProcess | None = None
    try:
        await create_profile(client)
        manager = start_manager(plane, log_path=log_path)
        metrics_port = manager.metrics_port
        listed = await client.list(RUNS, namespace=NAMESPACE)
        watch = RunWatch()
        follower = asyncio.create_task(
            watch.follow(client, version=str(listed["metadata"]["resourceVersion"]))
        )
        api_before = apiserver_requests(plane)
        manager_before = manager_requests(metrics_port)
        created = time.time()
        await client.create(
            RUNS,
            {
                "apiVersion": "burnin.glimmer.ai/v1alpha1",
                "kind": "BurnInRun",
                "metadata": {"name": RUN},
                "spec": {
                    "profileRef": "bench",
                    "target": {"nodeNames": nodes},
                    "maxConcurrentNodes": cap,
                },
            },
            namespace=NAMESPACE,
        )
        await asyncio.wait_for(follower, timeout=timeout)
        api_after = apiserver_requests(plane)
        manager_after = manager_requests(metrics_port)
        assert manager.pid is not None, "the manager is not running"
        rss = peak_rss_mib(manager.pid)
        finished = await termination_times(client)
    finally:
        if manager is not None:
            manager.stop(grace=35)
        await client.close()

    status = watch.last.get("status") or {}
    assert watch.verdict_at is not None and watch.done_at is not None
    node_tests = len(nodes)
    latencies = [
        watch.settled_at[key] - finished[pod]
        for key, pod in watch.pod_of.items()
        if pod in finished
    ]
    fractional = any(f != int(f) for f in finished.values())
    print(f"nodes={len(nodes)} maxConcurrentNodes={cap} node-tests={node_tests}")
    print(
        f"verdict: phase={status.get('phase')} passed={status.get('passed')} "
        f"failed={status.get('failed')} errored={status.get('errored')} "
        f"results={len(status.get('results') or [])}"
    )
    print(f"wall time, run creation -> verdict: {watch.verdict_at - created:.1f} s")
    print(f"wall time, run creation -> finalizer removed: {watch.done_at - created:.1f} s")
    api_total = (api_after - api_before).total()
    manager_total = (manager_after - manager_before).total()
    print(
        f"apiserver requests (all clients) per node-test: {api_total / node_tests:.2f} "
        f"({api_total:.0f} total)"
    )
    print(f"  by verb/resource: {breakdown(api_after, api_before, per=node_tests)}")
    print(
        f"manager requests per node-test: {manager_total / node_tests:.2f} "
        f"({manager_total:.0f} total)"
    )
    print(f"  by verb: {breakdown(manager_after, manager_before, per=node_tests)}")
    if latencies:
        print(
            f"termination -> result settled in status (n={len(latencies)}, "
            f"finishedAt resolution {'sub-second' if fractional else '1 s'}): "
            f"p50={percentile(latencies, 0.5):.2f} s p99={percentile(latencies, 0.99):.2f} s "
            f"max={max(latencies):.2f} s mean={statistics.fmean(latencies):.2f} s"
        )
    else:
        print("termination -> result settled: no terminated pod matched a settled result")
    print(f"manager peak RSS (VmHWM): {rss:.1f} MiB")
    print(f"run status watch events: {watch.events} (relists after 410: {watch.relists})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--max-concurrent", type=int, default=100)
    parser.add_argument("--timeout", type=float, default=1800, help="seconds for the run")
    parser.add_argument("--keep", action="store_true", help="keep the work dir (logs)")
    args = parser.parse_args()
    # SIGTERM (e.g. from `timeout`) unwinds through the `finally` below, so the control
    # plane and KWOK are stopped and the work dir removed.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    work = Path(tempfile.mkdtemp(prefix="glimmer-bench-run-"))
    stages = work / "stages"
    stages.mkdir()
    plane = ControlPlane(work_dir=work / "plane")
    kwok: Kwok | None = None
    try:
        plane.start()
        plane.kubectl("apply", "--server-side", "-k", str(REPO / "manifests/crd"))
        plane.kubectl(
            "wait",
            "--for=condition=Established",
            "--timeout=60s",
            *[f"crd/{info.crd_name}" for info in KINDS],
        )
        plane.kubectl("create", "namespace", NAMESPACE)
        kwok = start_kwok(plane, stages)
        started = time.monotonic()
        nodes = kwok.create_nodes(args.nodes, name_prefix="fleet-")
        print(f"setup: {args.nodes} KWOK nodes ready in {time.monotonic() - started:.1f} s")
        asyncio.run(
            bench(
                plane,
                nodes=nodes,
                cap=args.max_concurrent,
                timeout=args.timeout,
                log_path=work / "manager.log",
            )
        )
    finally:
        if kwok is not None:
            kwok.stop()
        plane.stop()
        if args.keep:
            print(f"work dir kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
