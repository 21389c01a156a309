"""Pair and Group runs on KWOK: wall time to verdict, API requests per execution, RSS.

    .venv/bin/python bench/run/scenarios/links.py --case pairs:100 --case pairrun:500 \\
        --case groups:10x8 --case group:64 --case group:256 \\
        [--operator glimmer --operator go] [--out results.md]

Cases (every run's nodes are its own; all runs are created at once):

- ``pairs:N``: N BurnInRuns of ``pair.yaml`` over 2N nodes, one pair each (a Pair test
  takes exactly two targets without ``spec.linkBlame``, E4), ``maxConcurrentNodes`` 2;
- ``pairrun:N``: ONE run of N pairs over 2N nodes (``spec.linkBlame`` pairs the targets
  in order, F10; ``maxExtraPairs`` 0, so no re-pair is ever added), ``maxConcurrentNodes``
  2N. The Go operator has no multi-pair run: it runs the same N pairs as N one-pair runs,
  and the table says so;
- ``groups:RxN``: R runs of ``group.yaml``, N nodes each (``maxConcurrentNodes`` N);
- ``group:N``: one such run.

Each (case, operator) gets a fresh control plane, as bench/run/trial.py sets one up, but
with ``kwok-stage-links-complete.yaml`` instead of the instant-complete stage: clients and
workers end at once, and a server or root ends once its peers have hung up, which
:class:`PeerHangup` (a pod watch in this driver, not the operator) tells KWOK by
annotating it, as a real listener exits when its peer disconnects. Asserts nothing; the
verdict column says whether every run reached Passed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import copy
import datetime
import gzip
import math
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import aiohttp
import attrs
import yaml

from glimmer.controllers.kit.names import (
    ATTEMPT_LABEL,
    PAIR_ROLE_LABEL,
    RANK_LABEL,
    RUN_LABEL,
    RUNS,
    TEST_LABEL,
)
from glimmer.engine import PODS, ApiError, ApiServerClient, ClientOptions
from glimmer.testing import _process
from glimmer.testing.control_plane import ControlPlane
from glimmer.testing.kwok import Kwok

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from measure import AUDIT_POLICY, cpu_seconds, load_average, peak_rss_mib, read_audit  # noqa: E402 (bench/run on the path first)
from run import SHARED, builtin_operators  # noqa: E402 (as above)
from trial import (  # noqa: E402 (as above)
    _KIND_RESOURCES,
    NAMESPACE,
    OPERATOR_USER,
    RUNNER_LOG,
    Operator,
    Trial,
    _install,
    _operator_kubeconfig,
    operators_from,
)

STAGES = HERE / "kwok-stage-links-complete.yaml"
#: The annotation :class:`PeerHangup` puts on a server (root) whose peers have ended.
HANGUP = "bench.glimmer.ai/peers-ended"
TERMINAL = {"Passed", "Failed", "Error", "Skipped"}


@attrs.define
class LinkFigures:
    case: str
    operator: str
    nodes: int
    runs: int
    executions: int = 0
    phases: dict[str, int] = attrs.Factory(dict)
    wall_verdict: float = float("nan")
    requests: int = 0
    by_verb: dict[str, int] = attrs.Factory(dict)
    cpu: float = float("nan")
    peak_rss: float = float("nan")
    load_before: str = ""
    load_after: str = ""
    note: str = ""


@attrs.frozen
class Case:
    """One bench case: ``kind`` pairs, pairrun, groups or group; ``runs`` x ``size``."""

    kind: str
    runs: int
    size: int

    @classmethod
    def parse(cls, text: str) -> Case:
        kind, _, count = text.partition(":")
        if kind in ("pairs", "pairrun") and count.isdigit():
            return cls(kind, int(count) if kind == "pairs" else 1, 2 * int(count))
        runs, _, size = count.rpartition("x") if kind == "groups" else ("1", "", count)
        if kind in ("groups", "group") and runs.isdigit() and size.isdigit():
            return cls(kind, int(runs), int(size))
        raise SystemExit(f"--case {text!r}: expected pairs:N, pairrun:N, groups:RxN or group:N")

    @property
    def nodes(self) -> int:
        return self.size if self.kind == "pairs" else self.runs * self.size


def plan_runs(
    case: Case, nodes: list[str], *, multi_pair: bool = True
) -> tuple[list[dict[str, Any]], list[Any]]:
    """The profile documents and the runs of ``case`` over ``nodes``. ``multi_pair``
    False (an operator without ``spec.linkBlame``) runs a pairrun as one-pair runs."""
    pair = case.kind in ("pairs", "pairrun")
    path = HERE / ("pair.yaml" if pair else "group.yaml")
    documents = [d for d in yaml.safe_load_all(path.read_text()) if d]
    [template] = [d for d in documents if d["kind"] == "BurnInRun"]
    others = [d for d in documents if d["kind"] != "BurnInRun"]

    def run(name: str, targets: list[str], **spec: Any) -> dict[str, Any]:
        one = copy.deepcopy(template)
        one["metadata"]["name"] = name
        one["spec"].update(target={"nodeNames": targets}, maxConcurrentNodes=len(targets), **spec)
        return one

    if case.kind == "pairrun" and multi_pair:
        return others, [run("pairs", nodes, linkBlame={"maxExtraPairs": 0})]
    if pair:
        return others, [
            run(f"pair-{i:03d}", nodes[2 * i : 2 * i + 2]) for i in range(len(nodes) // 2)
        ]
    size = case.size
    return others, [
        run(f"group-{i:03d}", nodes[i * size : (i + 1) * size]) for i in range(case.runs)
    ]


def peers_of(case: Case, nodes: list[str]) -> dict[str, frozenset[str]]:
    """Each server's (root's) node -> its client's (workers') nodes: pairs in order, groups
    rank 0 first, whichever way the runs were cut (every node is in one execution)."""
    size = 2 if case.kind in ("pairs", "pairrun") else case.size
    return {nodes[i]: frozenset(nodes[i + 1 : i + size]) for i in range(0, len(nodes), size)}


class PeerHangup:
    """The bench's stand-in for a listener that exits when its peers hang up.

    Watches the bench namespace's pods; once every peer of a Pair server (Group root) on
    its run and attempt has terminated, annotates the server ``peers-ended`` and KWOK's
    hang-up stage completes it at once. Both operators label pods alike (role/rank, run,
    attempt), so the same driver serves both; its requests are not the operator's.
    """

    def __init__(self, client: ApiServerClient, peers: Mapping[str, frozenset[str]]) -> None:
        self.client = client
        self.peers = peers
        self.lead_node = {peer: lead for lead, group in peers.items() for peer in group}
        self.on_node: dict[str, dict[str, dict[str, Any]]] = {}  # node -> pod name -> pod
        self.annotated: set[str] = set()
        self.task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> PeerHangup:
        listed = await self.client.list(PODS, namespace=NAMESPACE)
        for pod in listed["items"]:
            await self._seen("ADDED", pod)
        self.task = asyncio.create_task(self._watch(str(listed["metadata"]["resourceVersion"])))
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.task

    async def _watch(self, version: str) -> None:
        while True:
            try:
                async with contextlib.aclosing(
                    self.client.watch(
                        PODS, namespace=NAMESPACE, resource_version=version, timeout_seconds=300
                    )
                ) as stream:
                    async for event in stream:
                        if event.type == "ERROR":
                            raise ApiError(status=410, reason="Gone")
                        version = event.object["metadata"]["resourceVersion"]
                        await self._seen(event.type, event.object)
            except (ApiError, TimeoutError, aiohttp.ClientError):
                listed = await self.client.list(PODS, namespace=NAMESPACE)
                version = str(listed["metadata"]["resourceVersion"])
                for pod in listed["items"]:
                    await self._seen("MODIFIED", pod)

    async def _seen(self, kind: str, pod: dict[str, Any]) -> None:
        name, node = pod["metadata"]["name"], str(pod["spec"].get("nodeName") or "")
        if kind == "DELETED":
            self.on_node.get(node, {}).pop(name, None)
            return
        self.on_node.setdefault(node, {})[name] = pod
        if _ended(pod) and not _is_lead(pod) and node in self.lead_node:
            for lead in self._pods(self.lead_node[node], pod, lead=True):
                if lead["metadata"]["name"] not in self.annotated and self._peers_ended(lead):
                    await self._hang_up(lead)

    def _pods(self, node: str, like: Mapping[str, Any], *, lead: bool) -> list[dict[str, Any]]:
        """The pods on ``node`` of ``like``'s run and attempt, leads or followers."""
        return [p for p in self.on_node.get(node, {}).values()
                if _is_lead(p) == lead and _same_attempt(p, like)]  # fmt: skip

    def _peers_ended(self, lead: Mapping[str, Any]) -> bool:
        peers = self.peers.get(str(lead["spec"].get("nodeName") or ""), frozenset())
        return all(any(_ended(p) for p in self._pods(node, lead, lead=False)) for node in peers)

    async def _hang_up(self, lead: dict[str, Any]) -> None:
        name = lead["metadata"]["name"]
        self.annotated.add(name)
        with contextlib.suppress(ApiError):  # a lead already deleted has nothing to end
            await self.client.patch(
                PODS, name, {"metadata": {"annotations": {HANGUP: "true"}}}, namespace=NAMESPACE
            )


def _ended(pod: Mapping[str, Any]) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def _labels(pod: Mapping[str, Any]) -> Mapping[str, str]:
    return pod["metadata"].get("labels") or {}


def _is_lead(pod: Mapping[str, Any]) -> bool:
    labels = _labels(pod)
    return labels.get(PAIR_ROLE_LABEL) == "server" or labels.get(RANK_LABEL) == "0"


def _same_attempt(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    la, lb = _labels(a), _labels(b)
    return all(la.get(k) == lb.get(k) for k in (RUN_LABEL, ATTEMPT_LABEL, TEST_LABEL))


class LinkTrial(Trial):
    """bench/run's Trial with the link stages and many runs (reuses its operator start)."""

    def __init__(
        self, *, case: str, operator: Operator, work: Path, timeout: float,
        profile: Path | None = None,
    ) -> None:  # fmt: skip
        self.shape = Case.parse(case)
        super().__init__(
            operator=operator, nodes=self.shape.nodes, trial=1, cap=0, timeout=timeout,
            work=work, scenario=None, profile=profile,
        )  # fmt: skip
        self.case = case
        self.link = LinkFigures(case=case, operator=operator.name, nodes=self.count, runs=0)
        #: The Go operator has no spec.linkBlame: a pairrun becomes one-pair runs (E4).
        self.multi_pair = operator.name != "go"

    def run_links(self) -> LinkFigures:
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
        try:
            plane.start()
            _install(plane, self.operator)
            kubeconfig = _operator_kubeconfig(plane)
            kwok = Kwok(plane, start_timeout=600, extra_stages=(STAGES,)).start()
            kwok.set_namespace_log(namespaces=[NAMESPACE], text=RUNNER_LOG)
            nodes = kwok.create_nodes(self.count, name_prefix="fleet-")
            asyncio.run(self._links(plane, kubeconfig=kubeconfig, nodes=nodes))
        finally:
            if kwok is not None:
                kwok.stop()
            plane.stop()
        return self.link

    async def _links(self, plane: ControlPlane, *, kubeconfig: Path, nodes: list[str]) -> None:
        figures = self.link
        client = await ApiServerClient.connect(
            str(plane.kubeconfig_path), options=ClientOptions(qps=1000, burst=1000)
        )
        process = spy = None
        try:
            others, runs = plan_runs(self.shape, nodes, multi_pair=self.multi_pair)
            figures.runs = len(runs)
            pair = self.shape.kind in ("pairs", "pairrun")
            figures.executions = len(nodes) // 2 if pair else len(runs)
            if self.shape.kind == "pairrun" and not self.multi_pair:
                figures.note = f"as {len(runs)} one-pair runs: no multi-pair run (E4)"
            for document in others:
                await client.create(
                    _KIND_RESOURCES[document["kind"]], document, namespace=NAMESPACE
                )
            process = self._start_operator(kubeconfig)
            spy = self._start_profiler(process.pid)
            hangup = await PeerHangup(client, peers_of(self.shape, nodes)).__aenter__()
            figures.load_before = load_average()
            cpu_before = cpu_seconds(process.pid)
            created = time.time()
            await asyncio.gather(*(client.create(RUNS, r, namespace=NAMESPACE) for r in runs))
            deadline = time.monotonic() + self.timeout
            phases: dict[str, str] = {}
            unpassed: list[dict[str, Any]] = []
            while time.monotonic() < deadline:
                listed = await client.list(RUNS, namespace=NAMESPACE)
                phases = {
                    r["metadata"]["name"]: str((r.get("status") or {}).get("phase", ""))
                    for r in listed["items"]
                }
                unpassed = [r for r in listed["items"] if phases[r["metadata"]["name"]] in
                            TERMINAL - {"Passed"}]  # fmt: skip
                if len(phases) == len(runs) and set(phases.values()) <= TERMINAL:
                    figures.wall_verdict = time.time() - created
                    break
                await asyncio.sleep(0.25)
            else:
                figures.note += f" no verdict within {self.timeout:.0f} s"
            for r in unpassed[:1]:  # what one run that did not pass says, for the table
                results = (r.get("status") or {}).get("results") or [{}]
                figures.note += f" e.g. {r['metadata']['name']}: {results[0].get('message', '')}"
            ended = time.time()
            figures.cpu = cpu_seconds(process.pid) - cpu_before
            await hangup.__aexit__()
            figures.load_after = load_average()
            figures.peak_rss = peak_rss_mib(process.pid)
            for phase in phases.values():
                figures.phases[phase or "(none)"] = figures.phases.get(phase or "(none)", 0) + 1
        finally:
            if spy is not None:
                spy.send_signal(signal.SIGINT)  # py-spy writes its file on SIGINT
                with contextlib.suppress(subprocess.TimeoutExpired):
                    spy.wait(timeout=60)
            if process is not None:
                _process.stop(process, grace=35)
            await client.close()
        await asyncio.sleep(1.0)  # the apiserver flushes its last audit lines
        audit = read_audit(self.audit_log, user=OPERATOR_USER, start=created - 1.0, end=ended + 1.0)
        figures.requests = audit.requests
        figures.by_verb = dict(audit.by_verb)


def table(rows: list[LinkFigures]) -> str:
    head = ["case", "operator", "nodes", "runs", "verdicts", "wall to verdict s",
            "API req / execution", "API req / node", "CPU s", "CPU ms / node",
            "peak RSS MiB", "load 1/5/15"]  # fmt: skip
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for f in rows:
        verdicts = ", ".join(f"{k} {v}" for k, v in sorted(f.phases.items()))
        verdicts += f" ({f.note.strip()})" if f.note else ""
        cells = [f.case, f.operator, str(f.nodes), str(f.runs), verdicts,
                 f"{f.wall_verdict:.1f}", f"{f.requests / max(f.executions, 1):.1f}",
                 f"{f.requests / max(f.nodes, 1):.2f}", f"{f.cpu:.1f}",
                 f"{1000 * f.cpu / max(f.nodes, 1):.1f}", f"{f.peak_rss:.0f}",
                 f"{f.load_before} -> {f.load_after}"]  # fmt: skip
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def breakdown(rows: list[LinkFigures]) -> str:
    """The audit log's requests per execution by verb and resource, one column per row."""
    verbs = sorted({v for f in rows for v in f.by_verb}, key=lambda v: (v.split()[-1], v))
    head = ["verb resource", *(f"{f.case} {f.operator}" for f in rows)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for verb in verbs:
        cells = [f"{f.by_verb.get(verb, 0) / max(f.executions, 1):.2f}" for f in rows]
        lines.append("| " + " | ".join([verb, *cells]) + " |")
    return "\n".join(lines)


def ratios(rows: list[LinkFigures]) -> str:
    """Ours over Go's, per case measured with both: the goals are <= 0.5x wall,
    <= 0.8x requests per execution, <= 1.2x peak RSS."""
    head = ["case", "wall", "API req / execution", "CPU", "peak RSS"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    by = {(f.case, f.operator): f for f in rows}
    for case in dict.fromkeys(f.case for f in rows):
        ours, go = by.get((case, "glimmer")), by.get((case, "go"))
        if ours is None or go is None:
            continue
        per = [(ours.wall_verdict, go.wall_verdict),
               (ours.requests / max(ours.executions, 1), go.requests / max(go.executions, 1)),
               (ours.cpu, go.cpu), (ours.peak_rss, go.peak_rss)]  # fmt: skip
        cells = [f"{a / b:.2f}x" if b and math.isfinite(a / b) else "n/a" for a, b in per]
        lines.append("| " + " | ".join([case, *cells]) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--case", action="append", default=None, metavar="pairs:N|pairrun:N|groups:RxN|group:N"
    )
    parser.add_argument("--operator", action="append", default=None, metavar="NAME[=CMD]")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per case")
    parser.add_argument(
        "--go-manager", type=Path, default=SHARED / "glimmer-burnin-manager-v0.7.1-linux-amd64.gz"
    )
    parser.add_argument("--go-crds", type=Path, default=SHARED / "crd")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument(
        "--profile", action="append", default=[], metavar="OPERATOR",
        help="py-spy (raw stacks) of this Python operator per case, into --profile-dir",
    )  # fmt: skip
    parser.add_argument("--profile-dir", type=Path, default=Path("bench/results/profiles"))
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="glimmer-bench-links-"))
    go_binary = work / "go-manager"
    if args.go_manager.exists():
        with gzip.open(args.go_manager) as packed, go_binary.open("wb") as out:
            shutil.copyfileobj(packed, out)
        go_binary.chmod(0o755)
    operators = operators_from(
        args.operator or ["glimmer"],
        builtin=builtin_operators(go_binary=go_binary, go_crds=args.go_crds, glimmer_args=""),
    )
    started = datetime.datetime.now(datetime.UTC)
    rows: list[LinkFigures] = []
    try:
        cases = args.case or ["pairs:100", "pairrun:500", "groups:10x8", "group:64", "group:256"]
        for case in cases:
            Case.parse(case)  # a typo fails before any control plane starts
            for operator in operators:
                print(f"# {operator.name} {case}", flush=True)
                slug = f"{operator.name}-{case.replace(':', '-')}"
                one = LinkTrial(
                    case=case, operator=operator, timeout=args.timeout,
                    work=work / slug,
                    profile=(args.profile_dir / f"links-{slug}.txt"
                             if operator.name in args.profile else None),
                )  # fmt: skip
                try:
                    rows.append(one.run_links())
                except Exception as exc:  # one broken case must not lose the others
                    one.link.note = f"failed: {type(exc).__name__}: {exc}"[:300]
                    rows.append(one.link)
                print(table(rows[-1:]), flush=True)
    finally:
        text = f"bench/run/scenarios/links.py: started {started:%Y-%m-%d %H:%M} UTC\n\n"
        text += table(rows) + "\n\nOurs / Go:\n\n" + ratios(rows)
        text += "\n\nAPI requests per execution, by verb (audit log):\n\n" + breakdown(rows)
        print(text)
        if args.out is not None:
            args.out.write_text(text + "\n")
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
