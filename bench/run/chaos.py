"""Chaos at fleet scale: one run over a KWOK fleet, its manager SIGKILLed at random instants.

    flock /tmp/glimmer-controlplane.lock .venv/bin/python bench/run/chaos.py \\
        [--case node --case pairrun] [--nodes 1000] [--pairs 500] [--kills 20] \\
        [--seed N] [--out results.md]

The chaos suite of tests/e2e (rule H) at fleet size, as a benchmark: it reports, it
asserts nothing, and it exits 0 even when a check fails (each failure is a ``FAIL`` line).

Cases, each set up as bench/run/trial.py sets up a trial (etcd + kube-apiserver with the
operator's audit log, KWOK, the bench pods' runner log):

- ``node``: one Node-scope BurnInRun over ``--nodes`` KWOK nodes, run.py's default scenario
  (one instant custom test, ``maxConcurrentNodes`` ``--node-cap``), the instant stage.
- ``pairrun``: ONE BurnInRun of ``--pairs`` pairs over twice as many nodes:
  scenarios/pair.yaml's profile with ``spec.linkBlame`` set, so the Pair test over every
  target is paired in order (F10), ``maxConcurrentNodes`` ``--pair-cap``, and the link
  stages (scenarios/kwok-stage-links-complete.yaml, read when KWOK starts).

Each case runs twice, on a fresh control plane each time: undisturbed (the reference
verdicts and time to verdict), then the same run with ``glimmer manager``
(glimmer.testing.ManagerProcess) SIGKILLed ``--kills`` times and restarted at once after
each, then left to finish. The kill schedule: the gap from a manager's start (the first:
from the run's creation) to its kill is ``--min-gap`` (0.5 s) plus an exponential draw of
mean ``--mean-gap``, from a ``random.Random`` seeded by ``--seed`` and the case name. The
default mean makes the expected gap the reference's time to verdict over the kill count,
so the kills spread over about the undisturbed run's span, most while it is open (the
table counts those that landed after the verdict). The exponential gives short and long
lives alike; the minimum is under a manager's time from start to ``/readyz`` (its caches
synced; the table gives the median), so some kills land before the caches sync and most
after. The seed is printed first; ``--seed`` replays the schedule (the instants the
manager meets depend on the host's load).

Checks (chaos run against reference; the same run-independent ones on the reference too):

- verdicts: the run's phase and counters, every result's phase per unit (test, nodes),
  ``status.linkBlame``, and every result's attempt history (attempt, trigger, phase; from
  the evidence shards where the status is compact): with instant KWOK stages each attempt
  is deterministic;
- pods: a pod watch (glimmer.testing.pod_audit) started before the first manager start:
  no name created twice, and one pod per member per recorded attempt;
- nodes: none left ``unschedulable``, with the unschedulable taint, or with the operator's
  cordon-owner / prior-unschedulable / heat-expected annotations; no rendezvous Service;
- status writes: a watch on the run records, in every version it delivers, the settled
  results (terminal phase, per unit). A result once settled must be settled with the same
  phase in every later version, and the final status must hold every planned unit settled,
  each once. That catches a write from a stale view (a restarted manager overwriting what
  the killed one wrote: a settled result gone or back to Running), a settled result
  re-judged to another phase, compaction or packing dropping a unit, and a result never
  written. It sees only the versions the watch delivers (a 410 relist skips some: counted);
- time to verdict disturbed over undisturbed, kills landed (before /readyz, before the
  verdict), manager starts, a manager that exited by itself (a crash, not a kill).

``--break CHECK`` makes one check see a real fault, to show that it can fail: ``pod-twice``
(after the run, one pod name is deleted and created again), ``node-stamp`` (after the run,
one node is cordoned and stamped), ``status-write`` (while the run is open, a status write
from this script drops one settled result), ``restart`` (the last kill is not followed by
a restart: no verdict within ``--timeout``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime
import math
import os
import random
import shlex
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs
from measure import RunWatch, load_average, read_audit
from run import builtin_operators
from trial import (
    _KIND_RESOURCES,
    HERE,
    NAMESPACE,
    OPERATOR_NAMESPACE,
    OPERATOR_USER,
    Trial,
    default_scenario,
    load_scenario,
)

from glimmer.api import status_layout
from glimmer.controllers.kit import names
from glimmer.engine import NODES, PODS, ApiError, ApiServerClient, ClientOptions, is_not_found
from glimmer.sinks.build import expand_run, read_evidence
from glimmer.testing.control_plane import ControlPlane
from glimmer.testing.manager_process import ManagerProcess
from glimmer.testing.pod_audit import PodAudit
from glimmer.verdict import Phase

PAIR_SCENARIO = HERE / "scenarios" / "pair.yaml"
LINK_STAGES = HERE / "scenarios" / "kwok-stage-links-complete.yaml"
NODE_STAGES = HERE / "kwok-stage-complete-runner.yaml"
BREAKS = ("pod-twice", "node-stamp", "status-write", "restart")
NODE_STAMPS = (names.CORDON_OWNER, names.PRIOR_UNSCHEDULABLE, names.HEAT_EXPECTED)

Unit = tuple[str, tuple[str, ...], tuple[tuple[str, str], ...]]
History = list[tuple[int, str, str]]


def show(unit: Unit) -> str:
    return f"{unit[0]}@{','.join(unit[1])}"


@attrs.frozen
class Case:
    """``node``: ``size`` nodes, one unit each; ``pairrun``: ``size`` pairs, 2x nodes."""

    kind: str
    size: int
    cap: int

    @property
    def name(self) -> str:
        return f"{self.kind}:{self.size}"

    @property
    def nodes(self) -> int:
        return self.size if self.kind == "node" else 2 * self.size

    @property
    def members(self) -> int:
        """Pods per attempt."""
        return 1 if self.kind == "node" else 2

    @property
    def stages(self) -> tuple[Path, ...]:
        return (NODE_STAGES,) if self.kind == "node" else (LINK_STAGES,)

    def documents(self, nodes: list[str]) -> list[dict[str, Any]]:
        if self.kind == "node":
            return default_scenario(nodes, cap=self.cap)
        documents = load_scenario(PAIR_SCENARIO, nodes, cap=self.cap)
        run = next(d for d in documents if d["kind"] == "BurnInRun")
        run["spec"]["linkBlame"] = {"maxExtraPairs": 2}
        return documents

    def planned(self, documents: list[dict[str, Any]], nodes: list[str]) -> set[Unit]:
        """Every unit the run must settle (F10: a Pair over the fleet, paired in order)."""
        [test] = [d["metadata"]["name"] for d in documents if d["kind"] == "BurnInTest"]
        if self.kind == "node":
            return {(test, (n,), ()) for n in nodes}
        return {(test, (nodes[i], nodes[i + 1]), ()) for i in range(0, len(nodes), 2)}


@attrs.define
class Kill:
    at: float
    """Seconds from the run's creation."""
    gap: float
    ready_s: float | None
    """Seconds from the manager's start to its first /readyz 200 (caches synced); None:
    killed before that."""
    open: bool
    """The run had no verdict yet."""
    undone: bool
    """The run still held its finalizer (cordons not all released)."""


@attrs.define
class Outcome:
    """What one run (reference or chaos) ended with, and what the watches saw."""

    label: str
    phase: str = ""
    counts: tuple[int, int, int, int] = (0, 0, 0, 0)
    results: dict[Unit, str] = attrs.Factory(dict)
    histories: dict[Unit, History] = attrs.Factory(dict)
    blame: list[Any] = attrs.Factory(list)
    pods_created: int = 0
    duplicates: dict[str, int] = attrs.Factory(dict)
    audit_relists: int = 0
    cordoned: list[str] = attrs.Factory(list)
    stamped: list[str] = attrs.Factory(list)
    services: int = 0
    versions: int = 0
    watch_relists: int = 0
    lost: list[str] = attrs.Factory(list)
    final_missing: list[str] = attrs.Factory(list)
    kills: list[Kill] = attrs.Factory(list)
    starts: int = 0
    crashes: list[str] = attrs.Factory(list)
    status_conflicts: int = 0
    verdict_s: float = float("nan")
    done_s: float = float("nan")
    load_before: str = ""
    load_after: str = ""
    notes: list[str] = attrs.Factory(list)

    @property
    def attempts(self) -> int:
        return sum(len(h) for h in self.histories.values())


class StatusLedger(RunWatch):
    """The run watch of bench/run, also keeping the settled results of every version it
    sees: a settled result that is gone, or has another phase, in a later version is a
    lost status write."""

    def __init__(self, *, namespace: str, name: str) -> None:
        super().__init__(namespace=namespace, name=name)
        self.settled: dict[Unit, tuple[str, str]] = {}
        """unit -> (phase, resourceVersion it was first seen settled in)"""
        self.lost: list[str] = []
        self.lost_count = 0

    def _lose(self, text: str) -> None:
        self.lost_count += 1
        if len(self.lost) < 20:
            self.lost.append(text)

    def ingest(self, run: dict[str, Any]) -> None:
        super().ingest(run)
        version = str(run["metadata"].get("resourceVersion", "?"))
        now: dict[Unit, str] = {}
        for result in status_layout.status_results(run.get("status") or {}):
            unit = status_layout.unit_key(result)
            if unit in now:
                self._lose(f"{show(unit)} twice in version {version}")
            phase = str(result.get("phase", ""))
            if Phase.is_terminal_text(phase):
                now[unit] = phase
        for unit, (phase, first) in self.settled.items():
            if unit not in now:
                self._lose(f"{show(unit)} settled {phase} in version {first}, not in {version}")
            elif now[unit] != phase:
                self._lose(f"{show(unit)} settled {phase} in {first}, {now[unit]} in {version}")
        for unit, phase in now.items():
            self.settled.setdefault(unit, (phase, version))


def _glimmer() -> Any:
    """bench/run's operator entry, for its CRDs (the process is a ManagerProcess)."""
    missing = Path("/nonexistent")
    return builtin_operators(go_binary=missing, go_crds=missing, glimmer_args="")["glimmer"]


class ChaosTrial(Trial):
    """Trial's control plane, KWOK and install; its measuring step replaced by one run
    under a ManagerProcess, killed ``kills`` times."""

    def __init__(
        self,
        *,
        case: Case,
        label: str,
        kills: int,
        rng: random.Random,
        min_gap: float,
        mean_gap: float,
        timeout: float,
        work: Path,
        breaks: Sequence[str] = (),
    ) -> None:
        super().__init__(
            operator=_glimmer(),
            nodes=case.nodes,
            trial=1,
            cap=case.cap,
            timeout=timeout,
            work=work,
            scenario=None,
            stages=case.stages,
        )
        self.case = case
        self.kills = kills
        self.rng = rng
        self.min_gap = min_gap
        self.mean_gap = mean_gap
        self.breaks = tuple(breaks)
        self.outcome = Outcome(label=label)

    def run_chaos(self) -> Outcome:
        try:
            self.run()
        except Exception as exc:  # a broken trial is reported, not raised
            self.outcome.notes.append(f"trial failed: {type(exc).__name__}: {exc}"[:300])
        return self.outcome

    async def _measure(self, plane: ControlPlane, *, kubeconfig: Path, nodes: list[str]) -> None:
        out = self.outcome
        client = await ApiServerClient.connect(
            str(plane.kubeconfig_path),
            options=ClientOptions(qps=1000, burst=1000, watch_inactivity_timeout=1800),
        )
        audit = PodAudit(kubeconfig=str(plane.kubeconfig_path), namespace=NAMESPACE)
        manager = ManagerProcess(
            kubeconfig=kubeconfig,
            log_path=self.work / "manager.log",
            serve_namespaces=NAMESPACE,
            extra_args=("--log-level=warning",),
            env={**os.environ, "POD_NAMESPACE": OPERATOR_NAMESPACE},
        )
        follower: asyncio.Task[None] | None = None
        rogue: asyncio.Task[None] | None = None
        try:
            documents = self.case.documents(nodes)
            run_doc = next(d for d in documents if d["kind"] == "BurnInRun")
            for document in documents:
                if document["kind"] != "BurnInRun":
                    await client.create(
                        _KIND_RESOURCES[document["kind"]], document, namespace=NAMESPACE
                    )
            await audit.start()  # before the first manager start
            watch = StatusLedger(namespace=NAMESPACE, name=run_doc["metadata"]["name"])
            listed = await client.list(names.RUNS, namespace=NAMESPACE)
            follower = asyncio.create_task(
                watch.follow(client, version=str(listed["metadata"]["resourceVersion"]))
            )
            manager.start()
            await asyncio.to_thread(manager.wait_ready, timeout=180)
            out.load_before = load_average()
            created = time.time()
            await client.create(names.RUNS, run_doc, namespace=NAMESPACE)
            if "status-write" in self.breaks:
                rogue = asyncio.create_task(self._drop_one_settled(client, watch))
            await self._kill_and_finish(manager, audit, watch, follower, created)
            ended = time.time()
            out.load_after = load_average()
            out.starts = manager.starts
            if watch.verdict_at is not None:
                out.verdict_s = watch.verdict_at - created
            if watch.done_at is not None:
                out.done_s = watch.done_at - created
            manager.stop(grace=35)
            if "pod-twice" in self.breaks:
                await self._create_a_pod_twice(client, audit)
            if "node-stamp" in self.breaks:
                await client.patch(
                    NODES,
                    nodes[0],
                    {
                        "spec": {"unschedulable": True},
                        "metadata": {"annotations": {names.CORDON_OWNER: "chaos-break"}},
                    },
                )
            await self._tally(client, audit, watch, documents, nodes)
            await asyncio.sleep(1.0)  # the apiserver flushes its last audit lines
            out.status_conflicts = read_audit(
                self.audit_log, user=OPERATOR_USER, start=created - 1.0, end=ended + 1.0
            ).status_conflicts
        finally:
            for task in (follower, rogue):
                if task is not None:
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError, Exception):
                        await task
            manager.kill()
            try:
                await audit.stop()  # raises if the audit's watch crashed
            except Exception as exc:
                out.notes.append(f"pod audit failed: {type(exc).__name__}: {exc}"[:300])
            await client.close()

    async def _ready_within(self, manager: ManagerProcess, seconds: float) -> float | None:
        """Wait ``seconds`` from now (the manager's start); when /readyz first answered
        200 meanwhile (polled every 0.1 s), or None."""
        began = time.monotonic()
        end = began + seconds
        ready: float | None = None
        while time.monotonic() < end:
            if ready is None and (await asyncio.to_thread(manager.get, "/readyz"))[0] == 200:
                ready = time.monotonic() - began
            await asyncio.sleep(min(0.1, max(0.0, end - time.monotonic())))
        return ready

    def _crashed(self, manager: ManagerProcess, *, at: float) -> bool:
        code = manager.exited()
        if code is None:
            return False
        self.outcome.crashes.append(f"exited by itself ({code}) at +{at:.1f} s")
        print(f"FAIL manager exited by itself ({code}):\n{manager.log_tail()}", flush=True)
        manager.kill()  # reaps it
        return True

    async def _kill_and_finish(
        self,
        manager: ManagerProcess,
        audit: PodAudit,
        watch: StatusLedger,
        follower: asyncio.Task[None],
        created: float,
    ) -> None:
        out = self.outcome
        deadline = time.monotonic() + self.timeout
        while len(out.kills) < self.kills and time.monotonic() < deadline:
            gap = self.min_gap + self.rng.expovariate(1 / self.mean_gap)
            ready = await self._ready_within(manager, gap)
            at = time.time() - created
            if not self._crashed(manager, at=at):
                manager.kill()
                kill = Kill(
                    at=at, gap=gap, ready_s=ready, open=watch.verdict_at is None,
                    undone=watch.done_at is None,
                )  # fmt: skip
                out.kills.append(kill)
                print(
                    f"  kill {len(out.kills)}/{self.kills} at +{at:.1f} s, {gap:.1f} s after "
                    f"start ("
                    + ("before /readyz" if ready is None else f"ready after {ready:.1f} s")
                    + (", run open" if kill.open else ", after the verdict")
                    + ("" if kill.undone else ", run done")
                    + ")",
                    flush=True,
                )
            try:
                audit.check_alive()
            except AssertionError:
                out.notes.append("pod audit stopped watching")
            if "restart" in self.breaks and len(out.kills) == self.kills:
                print("  (break restart: the manager is not restarted)", flush=True)
                break
            manager.start()
        while not follower.done() and time.monotonic() < deadline:
            if self._crashed(manager, at=time.time() - created):
                manager.start()
            await asyncio.wait({follower}, timeout=min(1.0, max(0.0, deadline - time.monotonic())))
        if not follower.done():
            out.notes.append(f"not done within {self.timeout:.0f} s")
        elif follower.exception() is not None:
            out.notes.append(f"run watch failed: {follower.exception()!r}"[:300])

    async def _drop_one_settled(self, client: ApiServerClient, watch: StatusLedger) -> None:
        """--break status-write: once a result has settled, write the run's status
        without it (as a write from a stale view would)."""
        while not watch.settled:
            await asyncio.sleep(0.2)
        for _ in range(20):
            run = await client.get(names.RUNS, watch.name, namespace=NAMESPACE)
            status = run.get("status") or {}
            settled = [
                r for r in status.get("results") or [] if Phase.is_terminal_text(r.get("phase"))
            ]
            if settled:
                status["results"].remove(settled[0])
                dropped = show(status_layout.unit_key(settled[0]))
            elif status.get(status_layout.PACKED_KEY):
                group = status[status_layout.PACKED_KEY][0]
                dropped = f"{group.get('name')}@{group['nodes'][0]}"
                group["nodes"], group["indexes"] = group["nodes"][1:], group["indexes"][1:]
            else:
                await asyncio.sleep(0.2)
                continue
            try:
                await client.replace(names.RUNS, run, namespace=NAMESPACE, subresource="status")
            except ApiError as error:
                if error.status == 409:
                    continue
                raise
            print(f"  (break status-write: dropped {dropped} from the status)", flush=True)
            return

    async def _create_a_pod_twice(self, client: ApiServerClient, audit: PodAudit) -> None:
        """--break pod-twice: delete one pod the audit saw and create its name again."""
        name = min(audit.uids_by_name)
        with contextlib.suppress(ApiError):
            await client.delete(PODS, name, namespace=NAMESPACE)
        for _ in range(100):
            try:
                await client.get(PODS, name, namespace=NAMESPACE)
            except ApiError as error:
                if is_not_found(error):
                    break
                raise
            await asyncio.sleep(0.2)
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name},
            "spec": {"containers": [{"name": "again", "image": "example.com/again:1"}]},
        }
        await client.create(PODS, pod, namespace=NAMESPACE)
        print(f"  (break pod-twice: created {name} again)", flush=True)

    async def _tally(
        self,
        client: ApiServerClient,
        audit: PodAudit,
        watch: StatusLedger,
        documents: list[dict[str, Any]],
        nodes: list[str],
    ) -> None:
        out = self.outcome
        run = await client.get(names.RUNS, watch.name, namespace=NAMESPACE)
        watch.ingest(run)  # the last version, if the watch had not delivered it
        status = run.get("status") or {}
        out.phase = str(status.get("phase", ""))
        passed, failed, errored, skipped = (
            int(status.get(k) or 0) for k in ("passed", "failed", "errored", "skipped")
        )
        out.counts = (passed, failed, errored, skipped)
        out.blame = [
            (
                e.get("blame"),
                [
                    (r.get("node"), r.get("partner"), (r.get("result") or {}).get("phase"))
                    for r in e.get("repairs") or []
                ],
            )
            for e in status.get("linkBlame") or []
        ]
        expanded = expand_run(run, await read_evidence(client, run))
        for result in expanded["status"].get("results") or []:
            unit = status_layout.unit_key(result)
            out.results[unit] = str(result.get("phase", ""))
            out.histories[unit] = [
                (int(a.get("attempt", 0)), str(a.get("trigger", "")), str(a.get("phase", "")))
                for a in result.get("attempts") or []
            ]
        planned = self.case.planned(documents, nodes)
        final = {u for u, p in out.results.items() if Phase.is_terminal_text(p)}
        out.final_missing = [f"{show(u)} not settled in the final status" for u in planned - final]
        out.final_missing += [f"{show(u)} not planned" for u in set(out.results) - planned]
        out.versions, out.watch_relists = watch.events, watch.relists
        out.lost = [
            *watch.lost,
            *([f"... {watch.lost_count} in all"] if watch.lost_count > 20 else []),
        ]
        listed = await client.list(NODES, label_selector="type=kwok")
        for node in listed["items"]:
            name = node["metadata"]["name"]
            spec = node.get("spec") or {}
            taints = [t.get("key") for t in spec.get("taints") or []]
            if spec.get("unschedulable") or names.UNSCHEDULABLE_TAINT in taints:
                out.cordoned.append(name)
            notes = node["metadata"].get("annotations") or {}
            if any(k in notes for k in NODE_STAMPS):
                out.stamped.append(name)
        out.services = len((await client.list(names.SERVICES, namespace=NAMESPACE))["items"])
        expected = out.attempts * self.case.members
        for _ in range(75):  # the audit's watch may lag the last creations a moment
            if audit.pods_created >= expected:
                break
            await asyncio.sleep(0.2)
        out.pods_created = audit.pods_created
        out.duplicates = audit.duplicate_names
        out.audit_relists = audit.relists


@attrs.frozen
class Check:
    case: str
    name: str
    ok: bool
    detail: str


def _differ(ref: dict[Unit, Any], got: dict[Unit, Any]) -> list[str]:
    units = sorted(set(ref) | set(got))
    return [
        f"{show(u)}: {ref.get(u)!r} -> {got.get(u)!r}" for u in units if ref.get(u) != got.get(u)
    ]


def _some(items: Sequence[str], n: int = 3) -> str:
    return "; ".join(items[:n]) + (f"; ... {len(items)} in all" if len(items) > n else "")


def checks(case: Case, ref: Outcome, chaos: Outcome, *, kills: int) -> list[Check]:
    """Every check of one case: the chaos run against the reference, and the
    run-independent ones (pods, nodes, status writes) on both."""
    out: list[Check] = []

    def add(name: str, ok: bool, detail: str) -> None:
        out.append(Check(case.name, name, ok, detail))

    verdict = (chaos.phase, chaos.counts) == (ref.phase, ref.counts) and ref.phase in (
        "Passed",
        "Failed",
        "Error",
    )
    add(
        "run verdict",
        verdict,
        f"reference {ref.phase} {ref.counts}, chaos {chaos.phase} {chaos.counts} "
        "(passed, failed, errored, skipped)",
    )
    phases = _differ(ref.results, chaos.results)
    add(
        "result phases",
        not phases and bool(ref.results),
        f"{len(ref.results)} units, {len(phases)} differ"
        + (f": {_some(phases)}" if phases else ""),
    )
    histories = _differ(ref.histories, chaos.histories)
    add(
        "attempt histories",
        not histories and bool(ref.histories),
        f"{ref.attempts} vs {chaos.attempts} attempts, {len(histories)} units differ"
        + (f": {_some(histories)}" if histories else ""),
    )
    if case.kind == "pairrun":
        add(
            "link blame",
            ref.blame == chaos.blame,
            f"reference {len(ref.blame)} blamed, chaos {len(chaos.blame)}",
        )
    for run in (ref, chaos):
        expected = run.attempts * case.members
        add(
            f"{run.label}: no pod created twice",
            not run.duplicates,
            f"{len(run.duplicates)} names with 2+ UIDs"
            + (f": {_some(sorted(run.duplicates))}" if run.duplicates else ""),
        )
        add(
            f"{run.label}: one pod per member per attempt",
            run.pods_created == expected,
            f"{run.pods_created} pods created, {expected} expected "
            f"({run.attempts} attempts x {case.members}); audit relists {run.audit_relists}",
        )
        left = sorted(set(run.cordoned) | set(run.stamped))
        add(
            f"{run.label}: no node cordoned or stamped",
            not left and not run.services,
            f"{len(run.cordoned)} cordoned, {len(run.stamped)} stamped, {run.services} "
            "Services left" + (f": {_some(left)}" if left else ""),
        )
        add(
            f"{run.label}: no status write lost",
            not run.lost and not run.final_missing,
            f"{run.versions} versions watched ({run.watch_relists} relists), "
            f"{len(run.lost)} settled results lost or changed, {len(run.final_missing)} "
            "planned units not in the final status"
            + (
                f": {_some([*run.lost, *run.final_missing])}"
                if run.lost or run.final_missing
                else ""
            ),
        )
        add(
            f"{run.label}: manager never exited by itself",
            not run.crashes,
            _some(run.crashes) or "none",
        )
        if run.notes:
            add(f"{run.label}: trial finished", False, _some(run.notes))
    add(
        "kills landed",
        len(chaos.kills) == kills and not math.isnan(chaos.done_s),
        f"{len(chaos.kills)}/{kills}, run done: {not math.isnan(chaos.done_s)}",
    )
    return out


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def _fmt(value: float, spec: str = ".1f") -> str:
    return "-" if math.isnan(value) else format(value, spec)


def figures_table(rows: list[tuple[Case, Outcome, Outcome]]) -> str:
    head = [
        "case",
        "nodes",
        "units",
        "verdict ref",
        "verdict chaos",
        "s to verdict ref",
        "s to verdict chaos",
        "ratio",
        "kills landed",
        "kills before /readyz",
        "kills before verdict",
        "kills before done",
        "start to /readyz s (median)",
        "manager starts",
        "chaos run versions checked",
        "run-write 409s ref/chaos",
        "pods ref/chaos",
        "load ref",
        "load chaos",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for case, ref, chaos in rows:
        ratio = chaos.verdict_s / ref.verdict_s if ref.verdict_s > 0 else float("nan")
        cells = [
            case.name,
            str(case.nodes),
            str(case.size),
            f"{ref.phase} {ref.counts[0]}",
            f"{chaos.phase} {chaos.counts[0]}",
            _fmt(ref.verdict_s),
            _fmt(chaos.verdict_s),
            _fmt(ratio, ".2f") + "x",
            str(len(chaos.kills)),
            str(sum(k.ready_s is None for k in chaos.kills)),
            str(sum(k.open for k in chaos.kills)),
            str(sum(k.undone for k in chaos.kills)),
            _fmt(_median([k.ready_s for k in chaos.kills[1:] if k.ready_s is not None])),
            str(chaos.starts),
            str(chaos.versions),
            f"{ref.status_conflicts}/{chaos.status_conflicts}",
            f"{ref.pods_created}/{chaos.pods_created}",
            f"{ref.load_before} -> {ref.load_after}",
            f"{chaos.load_before} -> {chaos.load_after}",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def checks_table(found: list[Check]) -> str:
    lines = ["| case | check | result | detail |", "|---|---|---|---|"]
    for c in found:
        detail = c.detail.replace("|", "/")
        lines.append(f"| {c.case} | {c.name} | {'ok' if c.ok else '**FAIL**'} | {detail} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", action="append", choices=("node", "pairrun"), default=None)
    parser.add_argument("--nodes", type=int, default=1000, help="fleet of the node case")
    parser.add_argument("--pairs", type=int, default=500, help="pairs of the pairrun case")
    parser.add_argument("--node-cap", type=int, default=100, help="its maxConcurrentNodes")
    parser.add_argument("--pair-cap", type=int, default=200, help="its maxConcurrentNodes")
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--seed", type=int, default=None, help="default: random (printed)")
    parser.add_argument("--min-gap", type=float, default=0.5, help="seconds, start to kill")
    parser.add_argument(
        "--mean-gap",
        type=float,
        default=None,
        help="mean of the exponential part (default: reference s / kills - min gap)",
    )
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per run")
    parser.add_argument("--break", dest="breaks", action="append", choices=BREAKS, default=[])
    parser.add_argument("--out", type=Path, default=None, help="also write the report here")
    parser.add_argument("--keep", action="store_true", help="keep work dirs (manager logs)")
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)
    print(f"chaos: seed={seed} (replay with --seed {seed})", flush=True)
    started = datetime.datetime.now(datetime.UTC)
    work = Path(tempfile.mkdtemp(prefix="glimmer-bench-chaos-"))
    cases = [
        Case("node", args.nodes, args.node_cap)
        if kind == "node"
        else Case("pairrun", args.pairs, args.pair_cap)
        for kind in args.case or ["node", "pairrun"]
    ]
    rows: list[tuple[Case, Outcome, Outcome]] = []
    found: list[Check] = []
    try:
        for case in cases:
            slug = case.name.replace(":", "-")
            print(f"# {case.name}: reference ({case.nodes} nodes)", flush=True)
            ref = ChaosTrial(
                case=case,
                label="reference",
                kills=0,
                rng=random.Random(),
                min_gap=0,
                mean_gap=1,
                timeout=args.timeout,
                work=work / f"{slug}-reference",
            ).run_chaos()
            print(f"  reference: {ref.phase} {ref.counts} in {_fmt(ref.verdict_s)} s", flush=True)
            mean_gap = args.mean_gap or max(
                (ref.verdict_s if ref.verdict_s > 0 else 100.0) / max(args.kills, 1) - args.min_gap,
                args.min_gap,
            )
            print(
                f"# {case.name}: chaos, {args.kills} kills, gaps {args.min_gap} s + "
                f"exp(mean {mean_gap:.1f} s)",
                flush=True,
            )
            chaos = ChaosTrial(
                case=case,
                label="chaos",
                kills=args.kills,
                rng=random.Random(f"{seed}:{case.name}"),
                min_gap=args.min_gap,
                mean_gap=mean_gap,
                timeout=args.timeout,
                work=work / f"{slug}-chaos",
                breaks=args.breaks,
            ).run_chaos()
            print(f"  chaos: {chaos.phase} {chaos.counts} in {_fmt(chaos.verdict_s)} s", flush=True)
            rows.append((case, ref, chaos))
            found += checks(case, ref, chaos, kills=args.kills)
    finally:
        command = shlex.join(["bench/run/chaos.py", *sys.argv[1:]])
        fails = [c for c in found if not c.ok]
        text = "\n".join(
            [
                f"bench/run/chaos.py: started {started:%Y-%m-%d %H:%M} UTC, seed {seed}, "
                f"{args.kills} kills a case"
                + (f", break {', '.join(args.breaks)}" if args.breaks else ""),
                "",
                f"    {command}",
                "",
                figures_table(rows),
                "",
                checks_table(found),
                "",
                *(f"FAIL {c.case}: {c.name}: {c.detail}" for c in fails),
                f"{len(found) - len(fails)}/{len(found)} checks ok",
            ]
        )
        print(text, flush=True)
        if args.out is not None:
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(text + "\n")
        if args.keep:
            print(f"work dir kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
