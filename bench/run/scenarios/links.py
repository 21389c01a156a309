"""Pair and Group runs on KWOK: wall time to verdict, API requests per execution, RSS.

    .venv/bin/python bench/run/scenarios/links.py --case pairs:100 --case group:8 \\
        --case group:64 [--operator glimmer --operator go] [--out results.md]

``pairs:N`` creates N BurnInRuns of ``pair.yaml`` at once over 2N KWOK nodes (a Pair
test takes exactly two targets, so one run per pair); ``group:N`` one run of
``group.yaml`` over N nodes (``maxConcurrentNodes`` N, the interlock counts N slots).
Each (case, operator) gets a fresh control plane, as bench/run/trial.py sets one up, but
with ``kwok-stage-links-complete.yaml`` instead of the instant-complete stage, so that a
server or root outlives the creation of its client or workers. Asserts nothing; the
verdict column says whether every run reached Passed.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import datetime
import gzip
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import attrs
import yaml

from glimmer.controllers.kit.names import RUNS
from glimmer.engine import ApiServerClient, ClientOptions
from glimmer.testing import _process
from glimmer.testing.control_plane import ControlPlane
from glimmer.testing.kwok import Kwok

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from measure import AUDIT_POLICY, load_average, peak_rss_mib, read_audit  # noqa: E402 (bench/run on the path first)
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
TERMINAL = {"Passed", "Failed", "Error", "Skipped"}


@attrs.define
class LinkFigures:
    case: str
    operator: str
    nodes: int
    runs: int
    phases: dict[str, int] = attrs.Factory(dict)
    wall_verdict: float = float("nan")
    requests: int = 0
    peak_rss: float = float("nan")
    load_before: str = ""
    load_after: str = ""
    note: str = ""


def plan_runs(case: str, nodes: list[str]) -> tuple[Path, list[dict[str, Any]], list[Any]]:
    kind, count = case.split(":")
    path = HERE / ("pair.yaml" if kind == "pairs" else "group.yaml")
    documents = [d for d in yaml.safe_load_all(path.read_text()) if d]
    [template] = [d for d in documents if d["kind"] == "BurnInRun"]
    others = [d for d in documents if d["kind"] != "BurnInRun"]
    runs = []
    if kind == "pairs":
        for i in range(int(count)):
            run = copy.deepcopy(template)
            run["metadata"]["name"] = f"pair-{i:03d}"
            run["spec"]["target"] = {"nodeNames": nodes[2 * i : 2 * i + 2]}
            run["spec"]["maxConcurrentNodes"] = 2
            runs.append(run)
    else:
        run = copy.deepcopy(template)
        run["spec"]["target"] = {"nodeNames": nodes}
        run["spec"]["maxConcurrentNodes"] = len(nodes)
        runs.append(run)
    return path, others, runs


def node_count(case: str) -> int:
    kind, count = case.split(":")
    return 2 * int(count) if kind == "pairs" else int(count)


class LinkTrial(Trial):
    """bench/run's Trial with the link stages and many runs (reuses its operator start)."""

    def __init__(self, *, case: str, operator: Operator, work: Path, timeout: float) -> None:
        super().__init__(
            operator=operator, nodes=node_count(case), trial=1, cap=0, timeout=timeout,
            work=work, scenario=None,
        )  # fmt: skip
        self.case = case
        self.link = LinkFigures(case=case, operator=operator.name, nodes=self.count, runs=0)

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
        process = None
        try:
            _, others, runs = plan_runs(self.case, nodes)
            figures.runs = len(runs)
            for document in others:
                await client.create(
                    _KIND_RESOURCES[document["kind"]], document, namespace=NAMESPACE
                )
            process = self._start_operator(kubeconfig)
            figures.load_before = load_average()
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
                figures.note = f"no verdict within {self.timeout:.0f} s"
            for r in unpassed[:1]:  # what one run that did not pass says, for the table
                results = (r.get("status") or {}).get("results") or [{}]
                figures.note += f" e.g. {r['metadata']['name']}: {results[0].get('message', '')}"
            ended = time.time()
            figures.load_after = load_average()
            figures.peak_rss = peak_rss_mib(process.pid)
            for phase in phases.values():
                figures.phases[phase or "(none)"] = figures.phases.get(phase or "(none)", 0) + 1
        finally:
            if process is not None:
                _process.stop(process, grace=35)
            await client.close()
        await asyncio.sleep(1.0)  # the apiserver flushes its last audit lines
        audit = read_audit(self.audit_log, user=OPERATOR_USER, start=created - 1.0, end=ended + 1.0)
        figures.requests = audit.requests


def table(rows: list[LinkFigures]) -> str:
    head = ["case", "operator", "nodes", "runs", "verdicts", "wall to verdict s",
            "API req / execution", "API req / node", "peak RSS MiB", "load 1/5/15"]  # fmt: skip
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for f in rows:
        verdicts = ", ".join(f"{k} {v}" for k, v in sorted(f.phases.items()))
        verdicts += f" ({f.note})" if f.note else ""
        cells = [f.case, f.operator, str(f.nodes), str(f.runs), verdicts,
                 f"{f.wall_verdict:.1f}", f"{f.requests / max(f.runs, 1):.1f}",
                 f"{f.requests / max(f.nodes, 1):.2f}", f"{f.peak_rss:.0f}",
                 f"{f.load_before} -> {f.load_after}"]  # fmt: skip
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", action="append", default=None, metavar="pairs:N|group:N")
    parser.add_argument("--operator", action="append", default=None, metavar="NAME[=CMD]")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per case")
    parser.add_argument(
        "--go-manager", type=Path, default=SHARED / "glimmer-burnin-manager-v0.7.1-linux-amd64.gz"
    )
    parser.add_argument("--go-crds", type=Path, default=SHARED / "crd")
    parser.add_argument("--out", type=Path, default=None)
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
        for case in args.case or ["pairs:100", "group:8", "group:64"]:
            for operator in operators:
                print(f"# {operator.name} {case}", flush=True)
                one = LinkTrial(
                    case=case, operator=operator, timeout=args.timeout,
                    work=work / f"{case.replace(':', '-')}-{operator.name}",
                )  # fmt: skip
                try:
                    rows.append(one.run_links())
                except Exception as exc:  # one broken case must not lose the others
                    one.link.note = f"failed: {type(exc).__name__}: {exc}"[:300]
                    rows.append(one.link)
                print(table(rows[-1:]), flush=True)
    finally:
        text = f"bench/run/scenarios/links.py: started {started:%Y-%m-%d %H:%M} UTC\n\n"
        text += table(rows)
        print(text)
        if args.out is not None:
            args.out.write_text(text + "\n")
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
