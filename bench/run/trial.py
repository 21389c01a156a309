"""One trial: a fresh control plane, N KWOK nodes, one operator, one run to its verdict.

The operator acts as its own ServiceAccount (bound to cluster-admin, the same for every
operator), so the apiserver's audit log - which records only that identity - counts its
requests and nothing else's: not KWOK's heartbeats, not the scheduler's bindings, not
this bench's watches.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs
import yaml
from measure import (
    AUDIT_POLICY,
    AuditFigures,
    CordonWatch,
    RunWatch,
    cpu_seconds,
    load_average,
    peak_rss_mib,
    percentile,
    read_audit,
    termination_times,
)
from prometheus_client.parser import text_string_to_metric_families

from glimmer.api import status_layout
from glimmer.controllers.kit.names import RUNS
from glimmer.engine import NODES, ApiServerClient, ClientOptions, Resource
from glimmer.testing import _process
from glimmer.testing.control_plane import ControlPlane
from glimmer.testing.kwok import Kwok

HERE = Path(__file__).resolve().parent
NAMESPACE = "bench"
OPERATOR_NAMESPACE = "glimmer-system"
OPERATOR_ACCOUNT = "operator"
OPERATOR_USER = f"system:serviceaccount:{OPERATOR_NAMESPACE}:{OPERATOR_ACCOUNT}"
RUNNER_LOG = "elapsed_ms=1\nBENCH_INSTANT_DONE\n"

_GROUP = "burnin.glimmer.ai"
_KIND_RESOURCES = {
    "BurnInTest": Resource(_GROUP, "v1alpha1", "burnintests", namespaced=True),
    "BurnInProfile": Resource(_GROUP, "v1alpha1", "burninprofiles", namespaced=True),
    "BurnInRun": RUNS,
}


@attrs.frozen
class Operator:
    """An operator command line; ``{kubeconfig}``, ``{metrics}``, ``{health}`` (host:port)
    and ``{namespace}`` (the bench's) are filled in. ``crds``: a directory or kustomization
    applied before it starts."""

    name: str
    command: str
    crds: Path
    kustomize: bool = False

    def argv(self, *, kubeconfig: Path, metrics: str, health: str) -> list[str]:
        text = self.command.format(
            kubeconfig=kubeconfig, metrics=metrics, health=health, namespace=NAMESPACE,
            python=sys.executable,
        )  # fmt: skip
        return shlex.split(text)


@attrs.define
class Figures:
    """One trial's results (NaN where a figure could not be measured)."""

    operator: str
    nodes: int
    trial: int
    phase: str = ""
    passed: int = 0
    node_tests: int = 0
    wall_verdict: float = float("nan")
    wall_done: float = float("nan")
    audit: AuditFigures = attrs.field(factory=AuditFigures)
    operator_cpu: float = float("nan")
    peak_rss: float = float("nan")
    exit_to_status_p50: float = float("nan")
    exit_to_status_p99: float = float("nan")
    exit_to_status_n: int = 0
    cordon_p90: float = float("nan")
    cordon_max: float = float("nan")
    still_cordoned: int = 0
    apiserver_cpu_pct: float = float("nan")
    etcd_cpu_pct: float = float("nan")
    apiserver_rps: float = float("nan")
    load_before: str = ""
    load_after: str = ""
    setup_seconds: float = 0.0
    note: str = ""

    @property
    def requests_per_node_test(self) -> float:
        return self.audit.requests / self.node_tests if self.node_tests else float("nan")

    @property
    def operator_rps(self) -> float:
        return self.audit.requests / self.wall_done if self.wall_done else float("nan")


def default_scenario(nodes: list[str], *, cap: int) -> list[dict[str, Any]]:
    """The README's instant custom test over every node."""
    return [
        {
            "apiVersion": f"{_GROUP}/v1alpha1",
            "kind": "BurnInTest",
            "metadata": {"name": "instant"},
            "spec": {
                "kind": "custom",
                "scope": "Node",
                "durationSeconds": 60,
                "runner": {"image": "example.com/instant:1", "command": ["true"]},
            },
        },
        {
            "apiVersion": f"{_GROUP}/v1alpha1",
            "kind": "BurnInProfile",
            "metadata": {"name": "bench"},
            "spec": {"tests": [{"testRef": "instant"}]},
        },
        {
            "apiVersion": f"{_GROUP}/v1alpha1",
            "kind": "BurnInRun",
            "metadata": {"name": "fleet"},
            "spec": {
                "profileRef": "bench",
                "target": {"nodeNames": nodes},
                "maxConcurrentNodes": cap,
            },
        },
    ]


def load_scenario(path: Path, nodes: list[str], *, cap: int) -> list[dict[str, Any]]:
    """A scenario file (the Pair/Group hook): BurnInTest/Profile/Run documents.

    The one BurnInRun gets ``spec.target.nodeNames`` = the fleet unless it names a
    target, and ``maxConcurrentNodes`` = ``cap`` unless it sets one.
    """
    documents = [d for d in yaml.safe_load_all(path.read_text()) if d]
    runs = [d for d in documents if d.get("kind") == "BurnInRun"]  # the loaded objects
    if len(runs) != 1:
        raise SystemExit(f"{path}: a scenario holds exactly one BurnInRun, found {len(runs)}")
    unknown = {d.get("kind") for d in documents} - set(_KIND_RESOURCES)
    if unknown:
        raise SystemExit(f"{path}: unsupported kinds {sorted(map(str, unknown))}")
    spec = runs[0].setdefault("spec", {})
    spec.setdefault("target", {"nodeNames": nodes})
    spec.setdefault("maxConcurrentNodes", cap)
    return documents


def _apiserver_requests(plane: ControlPlane) -> float:
    text = plane.kubectl("get", "--raw", "/metrics").stdout
    total = 0.0
    for family in text_string_to_metric_families(text):
        if family.name == "apiserver_request":
            total += sum(s.value for s in family.samples if s.name == "apiserver_request_total")
    return total


def _http_ok(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def _install(plane: ControlPlane, operator: Operator) -> None:
    if operator.kustomize:
        plane.kubectl("apply", "--server-side", "-k", str(operator.crds))
    else:
        plane.kubectl("apply", "--server-side", "-f", str(operator.crds))
    plane.kubectl("wait", "--for=condition=Established", "--timeout=120s", "crd", "--all")
    for namespace in (NAMESPACE, OPERATOR_NAMESPACE):
        plane.kubectl("create", "namespace", namespace)


def _operator_kubeconfig(plane: ControlPlane) -> Path:
    path = plane.mint_service_account_kubeconfig(
        namespace=OPERATOR_NAMESPACE, name=OPERATOR_ACCOUNT
    )
    plane.kubectl(
        "create", "clusterrolebinding", "bench-operator", "--clusterrole=cluster-admin",
        f"--serviceaccount={OPERATOR_NAMESPACE}:{OPERATOR_ACCOUNT}",
    )  # fmt: skip
    return path


class Trial:
    """Set up, run, measure and tear down one (operator, fleet size) pair."""

    def __init__(
        self,
        *,
        operator: Operator,
        nodes: int,
        trial: int,
        cap: int,
        timeout: float,
        work: Path,
        scenario: Path | None,
        profile: Path | None = None,
        stages: Sequence[Path] = (HERE / "kwok-stage-complete-runner.yaml",),
    ) -> None:
        self.operator = operator
        self.count = nodes
        self.cap = cap
        self.timeout = timeout
        self.work = work
        self.scenario = scenario
        self.profile = profile
        """Where py-spy writes the operator's sampled stacks (collapsed), if anywhere."""
        self.stages = tuple(stages)
        """The KWOK stages that end the bench's pods (read when KWOK starts)."""
        self.figures = Figures(operator=operator.name, nodes=nodes, trial=trial)
        self.audit_log = work / "audit.log"

    def run(self) -> Figures:
        self.work.mkdir(parents=True, exist_ok=True)
        policy = self.work / "audit-policy.yaml"
        policy.write_text(AUDIT_POLICY.format(user=OPERATOR_USER))
        plane = ControlPlane(
            work_dir=self.work / "plane",
            start_timeout=180,
            extra_apiserver_args=(
                f"--audit-policy-file={policy}",
                f"--audit-log-path={self.audit_log}",
                "--audit-log-format=json",
                "--audit-log-maxsize=0",
            ),
        )
        kwok: Kwok | None = None
        began = time.monotonic()
        try:
            plane.start()
            _install(plane, self.operator)
            kubeconfig = _operator_kubeconfig(plane)
            kwok = Kwok(
                plane,
                start_timeout=600,
                extra_stages=self.stages,
            ).start()
            kwok.set_namespace_log(namespaces=[NAMESPACE], text=RUNNER_LOG)
            nodes = kwok.create_nodes(self.count, name_prefix="fleet-")
            self.figures.setup_seconds = time.monotonic() - began
            asyncio.run(self._measure(plane, kubeconfig=kubeconfig, nodes=nodes))
        finally:
            if kwok is not None:
                kwok.stop()
            plane.stop()
        return self.figures

    def _start_operator(self, kubeconfig: Path) -> subprocess.Popen[bytes]:
        metrics, health = _process.free_port(), _process.free_port()
        argv = self.operator.argv(
            kubeconfig=kubeconfig, metrics=f"127.0.0.1:{metrics}", health=f"127.0.0.1:{health}"
        )
        log_path = self.work / "operator.log"
        # Both operators read their own namespace from POD_NAMESPACE, as in a pod.
        env = {**os.environ, "POD_NAMESPACE": OPERATOR_NAMESPACE}
        process = _process.spawn(argv, log_path=log_path, env=env)
        try:
            _process.wait_for(
                f"{self.operator.name} /readyz",
                lambda: _http_ok(f"http://127.0.0.1:{health}/readyz"),
                timeout=180,
                process=process,
                log_path=log_path,
            )
        except BaseException:
            _process.stop(process)
            raise
        return process

    def _start_profiler(self, pid: int) -> subprocess.Popen[bytes] | None:
        if self.profile is None:
            return None
        self.profile.parent.mkdir(parents=True, exist_ok=True)
        py_spy = Path(sys.executable).parent / "py-spy"
        return _process.spawn(
            [
                str(py_spy), "record", "--pid", str(pid), "--format", "raw", "--rate", "50",
                "--nonblocking", "--output", str(self.profile),
            ],
            log_path=self.work / "py-spy.log",
        )  # fmt: skip

    async def _measure(self, plane: ControlPlane, *, kubeconfig: Path, nodes: list[str]) -> None:
        figures = self.figures
        client = await ApiServerClient.connect(
            str(plane.kubeconfig_path),
            options=ClientOptions(qps=1000, burst=1000, watch_inactivity_timeout=1800),
        )
        process: subprocess.Popen[bytes] | None = None
        spy: subprocess.Popen[bytes] | None = None
        cordons: asyncio.Task[None] | None = None
        try:
            documents = (
                load_scenario(self.scenario, nodes, cap=self.cap)
                if self.scenario is not None
                else default_scenario(nodes, cap=self.cap)
            )
            run_doc = next(d for d in documents if d["kind"] == "BurnInRun")
            for document in documents:
                if document["kind"] != "BurnInRun":
                    await client.create(
                        _KIND_RESOURCES[document["kind"]], document, namespace=NAMESPACE
                    )
            process = self._start_operator(kubeconfig)
            watch = RunWatch(namespace=NAMESPACE, name=run_doc["metadata"]["name"])
            listed = await client.list(RUNS, namespace=NAMESPACE)
            follower = asyncio.create_task(
                watch.follow(client, version=str(listed["metadata"]["resourceVersion"]))
            )
            cordon = CordonWatch(nodes)
            node_list = await client.list(NODES, label_selector="type=kwok", limit=1)
            cordons = asyncio.create_task(
                cordon.follow(client, version=str(node_list["metadata"]["resourceVersion"]))
            )
            spy = self._start_profiler(process.pid)
            pids = plane.pids  # [etcd, apiserver]
            figures.load_before = load_average()
            api_before = _apiserver_requests(plane)
            cpu_before = cpu_seconds(process.pid)
            server_before = [cpu_seconds(pid) for pid in pids]
            created = time.time()
            await client.create(RUNS, run_doc, namespace=NAMESPACE)
            try:
                await asyncio.wait_for(follower, timeout=self.timeout)
            except TimeoutError:
                figures.note = f"no verdict within {self.timeout:.0f} s"
            ended = time.time()
            span = ended - created
            figures.load_after = load_average()
            figures.operator_cpu = cpu_seconds(process.pid) - cpu_before
            figures.peak_rss = peak_rss_mib(process.pid)
            etcd_cpu, api_cpu = (
                cpu_seconds(p) - b for p, b in zip(pids, server_before, strict=True)
            )
            figures.apiserver_cpu_pct = 100 * api_cpu / span
            figures.etcd_cpu_pct = 100 * etcd_cpu / span
            figures.apiserver_rps = (_apiserver_requests(plane) - api_before) / span
            finished = await termination_times(client, namespace=NAMESPACE)
        finally:
            if cordons is not None:
                cordons.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await cordons
            if spy is not None:
                spy.send_signal(signal.SIGINT)  # py-spy writes its file on SIGINT
                with contextlib.suppress(subprocess.TimeoutExpired):
                    spy.wait(timeout=60)
            if process is not None:
                _process.stop(process, grace=35)
            await client.close()
        status = watch.last.get("status") or {}
        results = status_layout.status_results(status)  # packed records too
        figures.phase = str(status.get("phase", ""))
        figures.passed = int(status.get("passed") or 0)
        figures.node_tests = sum(len(r.get("nodes") or []) or 1 for r in results)
        if watch.verdict_at is not None:
            figures.wall_verdict = watch.verdict_at - created
        figures.wall_done = (watch.done_at or ended) - created
        # Let the apiserver flush the last audit lines before reading them.
        await asyncio.sleep(1.0)
        figures.audit = read_audit(
            self.audit_log, user=OPERATOR_USER, start=created - 1.0, end=ended + 1.0
        )
        latencies = [
            watch.settled_at[key] - finished[pod]
            for key, pod in watch.pod_of.items()
            if pod in finished
        ]
        figures.exit_to_status_n = len(latencies)
        figures.exit_to_status_p50 = percentile(latencies, 0.5)
        figures.exit_to_status_p99 = percentile(latencies, 0.99)
        holds = cordon.holds_until(ended)
        figures.cordon_p90 = percentile(holds, 0.9)
        figures.cordon_max = max(holds, default=float("nan"))
        figures.still_cordoned = cordon.still_cordoned()


def operators_from(specs: Sequence[str], *, builtin: dict[str, Operator]) -> list[Operator]:
    """``NAME`` (a built-in) or ``NAME=COMMAND`` (CRDs: ``--crds NAME=PATH``)."""
    chosen = []
    for spec in specs:
        name, _, command = spec.partition("=")
        if not command:
            if name not in builtin:
                raise SystemExit(f"unknown operator {name!r}; built-in: {sorted(builtin)}")
            chosen.append(builtin[name])
        else:
            base = builtin.get(name)
            crds = base.crds if base is not None else builtin["glimmer"].crds
            kustomize = base.kustomize if base is not None else True
            chosen.append(Operator(name=name, command=command, crds=crds, kustomize=kustomize))
    return chosen
