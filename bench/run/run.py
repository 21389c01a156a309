"""Operators side by side on KWOK fleets: the fleet-scale table, with ratios. Asserts nothing.

    .venv/bin/python bench/run/run.py --sizes 100,1000 --trials 1 \\
        [--operator glimmer --operator go] [--scenario pair.yaml] [--out results.md]

For every trial and fleet size, each operator in turn (the order alternates per trial) gets
a fresh control plane: a real etcd + kube-apiserver with the audit log on for the
operator's own ServiceAccount, KWOK with N nodes, a ClusterLogs giving every bench pod the
runner log ``elapsed_ms=1`` / ``BENCH_INSTANT_DONE``, and the bench stage that completes
every running pod in namespace ``bench`` at once with exit 0. The bench then creates one
BurnInRun (by default one ``custom`` Node-scope test with no thresholds over every node,
``maxConcurrentNodes`` 100; ``--scenario`` swaps in Pair/Group YAML) and measures:

- wall time from creating the run to its verdict;
- the operator's API requests per node-test, from the audit log (its identity only),
  status-write 409 conflicts, mean and peak requests/s;
- operator CPU seconds and peak RSS (``/proc``);
- container exit (``finishedAt``, 1 s resolution) -> result settled in status, p50/p99;
- cordon hold per node (node watch): p90 and max;
- apiserver requests/s (all clients) and apiserver/etcd CPU, as % of one core.

Operators: ``glimmer`` (this tree's ``glimmer manager``) and ``go`` (the Go manager from
``--go-manager``, gunzipped to a temp file, with its CRDs from ``--go-crds``), or
``NAME=COMMAND`` with ``{kubeconfig}``, ``{metrics}``, ``{health}``, ``{namespace}`` and
``{python}`` filled in (a built-in NAME keeps that operator's CRDs).
"""

from __future__ import annotations

import argparse
import datetime
import gzip
import math
import shutil
import signal
import statistics
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from trial import Figures, Operator, Trial, operators_from

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
SHARED = REPO.parent / "shared" / "perf"


def builtin_operators(*, go_binary: Path, go_crds: Path, glimmer_args: str) -> dict[str, Operator]:
    return {
        "glimmer": Operator(
            name="glimmer",
            command=(
                "{python} -c 'import sys; from glimmer.cli import main; sys.exit(main())' "
                "manager --kubeconfig={kubeconfig} --serve-namespaces={namespace} "
                "--metrics-bind-address={metrics} --health-probe-bind-address={health} "
                f"--no-leader-elect --log-level=warning {glimmer_args}"
            ),
            crds=REPO / "manifests" / "crd",
            kustomize=True,
        ),
        "go": Operator(
            name="go",
            command=(
                f"{go_binary} --kubeconfig={{kubeconfig}} --metrics-bind-address={{metrics}} "
                "--health-probe-bind-address={health} --zap-log-level=error"
            ),
            crds=go_crds,
        ),
    }


def _fmt(value: float, spec: str = ".1f") -> str:
    return "-" if math.isnan(value) else format(value, spec)


def _mean(values: Sequence[float]) -> float:
    real = [v for v in values if not math.isnan(v)]
    return statistics.fmean(real) if real else float("nan")


COLUMNS: list[tuple[str, Callable[[Figures], float], str]] = [
    ("wall to verdict s", lambda f: f.wall_verdict, ".1f"),
    ("API req / node-test", lambda f: f.requests_per_node_test, ".2f"),
    ("operator CPU s", lambda f: f.operator_cpu, ".1f"),
    ("peak RSS MiB", lambda f: f.peak_rss, ".0f"),
    ("exit->status p50 s", lambda f: f.exit_to_status_p50, ".1f"),
    ("exit->status p99 s", lambda f: f.exit_to_status_p99, ".1f"),
    ("cordon hold p90 s", lambda f: f.cordon_p90, ".1f"),
    ("cordon hold max s", lambda f: f.cordon_max, ".1f"),
    ("run-write 409s", lambda f: float(f.audit.status_conflicts), ".0f"),
    ("operator req/s", lambda f: f.operator_rps, ".1f"),
    ("operator peak req/s", lambda f: float(f.audit.peak_per_second), ".0f"),
    ("apiserver req/s (all)", lambda f: f.apiserver_rps, ".0f"),
    ("apiserver CPU %", lambda f: f.apiserver_cpu_pct, ".0f"),
]


def table(figures: list[Figures], *, reference: str) -> str:
    """Markdown: one row per trial, then per size the mean of each operator over the
    reference operator's mean (below 1 is better for every column but none)."""
    head = ["nodes", "operator", "trial", "verdict", *(c[0] for c in COLUMNS), "load 1/5/15"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for f in figures:
        verdict = f"{f.phase} {f.passed}/{f.node_tests}" + (f" ({f.note})" if f.note else "")
        cells = [str(f.nodes), f.operator, str(f.trial), verdict]
        cells += [_fmt(get(f), spec) for _, get, spec in COLUMNS]
        cells.append(f"{f.load_before} -> {f.load_after}")
        lines.append("| " + " | ".join(cells) + " |")
    ratio_lines = []
    for size in sorted({f.nodes for f in figures}):
        at = [f for f in figures if f.nodes == size]
        ref = [f for f in at if f.operator == reference]
        if not ref:
            continue
        for name in sorted({f.operator for f in at} - {reference}):
            mine = [f for f in at if f.operator == name]
            cells = [str(size), f"{name} / {reference}", f"{len(mine)}:{len(ref)}", ""]
            for _, get, _spec in COLUMNS:
                a, b = _mean([get(f) for f in mine]), _mean([get(f) for f in ref])
                cells.append("-" if math.isnan(a) or math.isnan(b) or b == 0 else f"{a / b:.2f}x")
            cells.append("")
            ratio_lines.append("| " + " | ".join(cells) + " |")
    if ratio_lines:
        lines += ["", "Ratios (mean over trials):", "", lines[0], lines[1], *ratio_lines]
    return "\n".join(lines)


def details(f: Figures) -> str:
    per = max(f.node_tests, 1)
    top = ", ".join(f"{k}={v / per:.2f}" for k, v in f.audit.by_verb.most_common(12))
    conflicts = dict(f.audit.conflicts) or "none"
    errors = dict(f.audit.errors) or "none"
    return (
        f"- {f.operator} @ {f.nodes} (trial {f.trial}): {f.audit.requests} requests; per "
        f"node-test {top}; 409s {conflicts}; other errors {errors}; exit->status n="
        f"{f.exit_to_status_n}; still cordoned at the end {f.still_cordoned}; etcd CPU "
        f"{_fmt(f.etcd_cpu_pct, '.0f')}%; wall to finalizer removal {_fmt(f.wall_done)} s; "
        f"setup {f.setup_seconds:.0f} s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,1000", help="comma-separated node counts")
    parser.add_argument("--trials", type=int, default=1)
    parser.add_argument("--operator", action="append", default=None, metavar="NAME[=CMD]")
    parser.add_argument("--reference", default="go", help="operator the ratios divide by")
    parser.add_argument("--max-concurrent", type=int, default=100)
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per run")
    parser.add_argument("--scenario", type=Path, default=None, help="Pair/Group YAML")
    parser.add_argument(
        "--go-manager", type=Path, default=SHARED / "glimmer-burnin-manager-v0.7.1-linux-amd64.gz"
    )
    parser.add_argument("--go-crds", type=Path, default=SHARED / "crd")
    parser.add_argument("--glimmer-args", default="", help="extra `glimmer manager` flags")
    parser.add_argument("--out", type=Path, default=None, help="also write the table here")
    parser.add_argument(
        "--profile",
        action="append",
        default=[],
        metavar="OPERATOR",
        help="py-spy (collapsed stacks) of this Python operator, into --profile-dir",
    )
    parser.add_argument("--profile-dir", type=Path, default=Path("bench/results/profiles"))
    parser.add_argument("--keep", action="store_true", help="keep work dirs (logs, audit)")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    work = Path(tempfile.mkdtemp(prefix="glimmer-bench-fleet-"))
    go_binary = work / "go-manager"
    if args.go_manager.exists():
        with gzip.open(args.go_manager) as packed, go_binary.open("wb") as out:
            shutil.copyfileobj(packed, out)
        go_binary.chmod(0o755)
    operators = operators_from(
        args.operator or ["glimmer", "go"],
        builtin=builtin_operators(
            go_binary=go_binary, go_crds=args.go_crds, glimmer_args=args.glimmer_args
        ),
    )
    sizes = [int(s) for s in args.sizes.split(",") if s]
    figures: list[Figures] = []
    started = datetime.datetime.now(datetime.UTC)
    try:
        for trial in range(1, args.trials + 1):
            for size in sizes:
                order = operators if trial % 2 else list(reversed(operators))
                for operator in order:
                    print(f"# trial {trial}: {operator.name} @ {size} nodes", flush=True)
                    one = Trial(
                        operator=operator,
                        nodes=size,
                        trial=trial,
                        cap=args.max_concurrent,
                        timeout=args.timeout,
                        work=work / f"{trial}-{size}-{operator.name}",
                        scenario=args.scenario,
                        profile=(
                            args.profile_dir / f"{operator.name}-{size}-{trial}.txt"
                            if operator.name in args.profile
                            else None
                        ),
                    )
                    try:
                        result = one.run()
                    except Exception as exc:  # one broken trial must not lose the others
                        result = one.figures
                        result.note = f"trial failed: {type(exc).__name__}: {exc}"[:300]
                    figures.append(result)
                    print(details(result), flush=True)
    finally:
        text = "\n".join(
            [
                f"bench/run: started {started:%Y-%m-%d %H:%M} UTC, sizes {args.sizes}, "
                f"{args.trials} trial(s), maxConcurrentNodes {args.max_concurrent}"
                + (f", scenario {args.scenario}" if args.scenario else ""),
                "",
                table(figures, reference=args.reference),
                "",
                *(details(f) for f in figures),
            ]
        )
        print(text)
        if args.out is not None:
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(text + "\n")
        if args.keep:
            print(f"work dir kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
