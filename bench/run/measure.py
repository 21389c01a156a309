"""What one trial measures, from sources no operator controls.

- the apiserver's audit log (one JSON event per request, written by the apiserver for
  the operator's own identity only): requests, verbs, 409 conflicts, the peak rate;
- ``/proc`` of the operator and apiserver processes: CPU seconds and peak RSS;
- a watch on the run (when each result first shows settled, and the verdict) and a
  watch on the nodes (when each was cordoned and uncordoned);
- the pods' own ``state.terminated.finishedAt``.

Nothing here asks an operator how it did: its metrics endpoint is never read, so the
figures compare any two operators the same way.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import os
import time
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import attrs

from glimmer.api import status_layout
from glimmer.controllers.kit.names import NODE_LABEL, RUNS, TEST_LABEL
from glimmer.engine import NODES, PODS, ApiServerClient
from glimmer.plan import label_value

TERMINAL = ("Passed", "Failed", "Error", "Cancelled")
_TICKS = os.sysconf("SC_CLK_TCK")

AUDIT_POLICY = """\
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived", "ResponseStarted"]
rules:
- level: Metadata
  users: ["{user}"]
- level: None
"""


def parse_time(text: str) -> float:
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile; NaN for no values (printed as "-")."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def cpu_seconds(pid: int) -> float:
    """User + system CPU of ``pid`` so far (its reaped children excluded)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICKS


def peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmHWM in /proc/{pid}/status")


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


@attrs.define
class AuditFigures:
    """The operator's own requests between two instants, from the audit log."""

    requests: int = 0
    by_verb: Counter[str] = attrs.field(factory=Counter)
    conflicts: Counter[str] = attrs.field(factory=Counter)
    """409 answers by resource/subresource."""
    status_conflicts: int = 0
    """409s on writes to a BurnInRun or its status: each one a write lost and redone, or
    lost for good (the audit log cannot tell which; the run's results can)."""
    peak_per_second: int = 0
    errors: Counter[str] = attrs.field(factory=Counter)
    """Other non-2xx answers by code."""


def read_audit(path: Path, *, user: str, start: float, end: float) -> AuditFigures:
    """Count ``user``'s requests received in [start, end]."""
    figures = AuditFigures()
    per_second: Counter[int] = Counter()
    if not path.exists():
        return figures
    with path.open() as lines:
        for line in lines:
            try:
                event = json.loads(line)
            except ValueError:
                continue  # a line cut by the apiserver's stop
            if (event.get("user") or {}).get("username") != user:
                continue
            received = parse_time(event["requestReceivedTimestamp"])
            if not start <= received <= end:
                continue
            ref = event.get("objectRef") or {}
            resource = ref.get("resource", "")
            if ref.get("subresource"):
                resource += "/" + ref["subresource"]
            code = int((event.get("responseStatus") or {}).get("code", 0))
            figures.requests += 1
            figures.by_verb[f"{event.get('verb')} {resource}"] += 1
            per_second[int(received)] += 1
            if code == 409:
                figures.conflicts[resource] += 1
                if resource == "burninruns/status" or (
                    resource == "burninruns" and event.get("verb") in ("update", "patch")
                ):
                    figures.status_conflicts += 1
            elif code >= 300:
                figures.errors[str(code)] += 1
    figures.peak_per_second = max(per_second.values(), default=0)
    return figures


class RunWatch:
    """When each result of the run first shows settled, and when the verdict came."""

    def __init__(self, *, namespace: str, name: str) -> None:
        self.namespace = namespace
        self.name = name
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
        for result in status_layout.status_results(status):  # packed records too
            key = (result.get("name", ""), ",".join(result.get("nodes") or []))
            if result.get("phase") not in (None, "", "Pending", "Running") and (
                key not in self.settled_at
            ):
                self.settled_at[key] = now
                attempts = result.get("attempts") or []
                if attempts and attempts[-1].get("podName"):
                    self.pod_of[key] = attempts[-1]["podName"]
                elif len(result.get("nodes") or []) == 1:
                    test = label_value(str(result.get("name", "")))
                    self.pod_of[key] = f"unit:{test}/{label_value(str(result['nodes'][0]))}"
        if status.get("phase") in TERMINAL and self.verdict_at is None:
            self.verdict_at = now
        if self.verdict_at is not None and not run["metadata"].get("finalizers"):
            self.done_at = now

    async def follow(self, client: ApiServerClient, *, version: str) -> None:
        selector = f"metadata.name={self.name}"
        while self.done_at is None:
            expired = False
            async with contextlib.aclosing(
                client.watch(
                    RUNS,
                    namespace=self.namespace,
                    field_selector=selector,
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
                # A result settled during the gap is stamped late: only overstates latency.
                self.relists += 1
                listed = await client.list(RUNS, namespace=self.namespace, field_selector=selector)
                for run in listed["items"]:
                    self.ingest(run)
                version = str(listed["metadata"]["resourceVersion"])


class CordonWatch:
    """Cordon hold per node: first ``unschedulable`` -> its clearing, from a node watch."""

    def __init__(self, nodes: Iterable[str]) -> None:
        self.nodes = set(nodes)
        self.cordoned_at: dict[str, float] = {}
        self.holds: list[float] = []
        self.cordons = 0

    def ingest(self, node: dict[str, Any]) -> None:
        name = node["metadata"]["name"]
        if name not in self.nodes:
            return
        now = time.time()
        cordoned = bool((node.get("spec") or {}).get("unschedulable"))
        if cordoned and name not in self.cordoned_at:
            self.cordoned_at[name] = now
            self.cordons += 1
        elif not cordoned and name in self.cordoned_at:
            self.holds.append(now - self.cordoned_at.pop(name))

    def still_cordoned(self) -> int:
        return len(self.cordoned_at)

    def holds_until(self, end: float) -> list[float]:
        """Every hold, a node still cordoned counted as held until ``end``."""
        return [*self.holds, *(end - t for t in self.cordoned_at.values())]

    async def follow(self, client: ApiServerClient, *, version: str) -> None:
        while True:
            async with contextlib.aclosing(
                client.watch(
                    NODES,
                    label_selector="type=kwok",
                    resource_version=version,
                    timeout_seconds=600,
                )
            ) as stream:
                async for event in stream:
                    if event.type == "ERROR":
                        listed = await client.list(NODES, label_selector="type=kwok")
                        for node in listed["items"]:
                            self.ingest(node)
                        version = str(listed["metadata"]["resourceVersion"])
                        break
                    version = event.object["metadata"]["resourceVersion"]
                    if event.type in ("ADDED", "MODIFIED"):
                        self.ingest(event.object)


async def termination_times(client: ApiServerClient, *, namespace: str) -> dict[str, float]:
    """Pod name -> its first container's ``finishedAt``, for every terminated pod."""
    finished: dict[str, float] = {}
    token: str | None = None
    while True:
        page = await client.list(PODS, namespace=namespace, limit=500, continue_token=token)
        for pod in page["items"]:
            statuses = (pod.get("status") or {}).get("containerStatuses") or []
            terminated = (statuses[0].get("state") or {}).get("terminated") if statuses else None
            if terminated and terminated.get("finishedAt"):
                at = parse_time(terminated["finishedAt"])
                finished[pod["metadata"]["name"]] = at
                # A result first seen compact or packed names no pod: find it by unit.
                labels = pod["metadata"].get("labels") or {}
                unit = f"unit:{labels.get(TEST_LABEL, '')}/{labels.get(NODE_LABEL, '')}"
                finished[unit] = max(at, finished.get(unit, at))
        token = page["metadata"].get("continue")
        if not token:
            return finished
