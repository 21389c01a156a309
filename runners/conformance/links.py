"""The link suite: a Pair or Group runner as two or three processes on loopback.

Real bytes pass between the processes; each side is judged on its own exit and output
(``LINK_FAULT_MATRIX`` gives the exits), and a side that cannot reach its peer must name
it. The refusals (a Pair runner given a rank, an unknown role, a crash) exit 3.

:func:`case_findings` judges a case through the clause engine
(:mod:`runners.conformance.clauses`), the one the Node suite and ``glimmer conformance``
use; :func:`check_link` is its problem strings and :func:`card_for` its card. Every case
draws its own loopback block (:class:`AddressBlocks`): the runners listen on fixed ports
of their own address, so two cases of one card never meet, and they may run at once.
"""

from __future__ import annotations

import functools
import random
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from glimmer.contract import SIM_GPU_ENV, parse_go_float
from runners.catalog import RUNNERS, RunnerSpec
from runners.conformance.clauses import (
    Card,
    Finding,
    case_clause,
    fold,
    is_crash_case,
    run_all,
    run_clauses,
    run_findings,
)
from runners.conformance.execution import DEFAULT_TIMEOUT_S, Execution, execute_together
from runners.fault_matrix import EXIT_CODES, LINK_FAULT_MATRIX


@dataclass(frozen=True)
class Side:
    """One process of a link case and what it must conclude."""

    name: str
    env: Mapping[str, str]
    expected_exit: int
    #: Metrics it must print (value or n/a).
    metrics: frozenset[str] = frozenset()
    #: Metric -> bound the printed value must stay under (a simulated slow link).
    below: Mapping[str, float] = field(default_factory=dict)
    #: Words its last line must contain (an Error names the missing peer).
    names: tuple[str, ...] = ()


@dataclass(frozen=True)
class LinkCase:
    kind: str
    label: str
    sides: tuple[Side, ...]

    def __str__(self) -> str:
        return f"{self.kind}[{self.label}]"


def check_link(
    spec: RunnerSpec, case: LinkCase, *, command: Sequence[str] | None = None
) -> list[str]:
    """Run every side of a link case together; every problem found (empty when it
    conforms): :func:`case_findings`' details, and each side's stdout tail."""
    found, _judged, stdouts = case_findings(spec, case, command=command)
    return problem_lines(found, stdouts)


def problem_lines(found: Sequence[Finding], stdouts: Mapping[str, str]) -> list[str]:
    """Findings as the suite's problem strings, each side's stdout tail after them."""
    problems = [f"{f.clause}: {f.detail}" for f in found]
    if problems:
        problems += [f"{name} stdout tail: {out[-600:]!r}" for name, out in stdouts.items()]
    return problems


def case_findings(
    spec: RunnerSpec,
    case: LinkCase,
    *,
    command: Sequence[str] | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> tuple[list[Finding], set[str], dict[str, str]]:
    """Run every side of a link case together on ``command`` (default the spec's):
    every finding (one clause each), the clauses judged, and each side's stdout."""
    label, own = case.label, case_clause(case.label)
    found, judged, stdouts, _runs = judge_sides(
        spec,
        command,
        label=label,
        own=own,
        timeout_s=timeout_s,
        sides=[
            (
                side.name,
                side.env,
                functools.partial(
                    side_findings,
                    spec,
                    case=label,
                    side=side.name,
                    own=own,
                    expected_exit=side.expected_exit,
                    metrics=side.metrics,
                    below=side.below,
                    names=side.names,
                ),
            )
            for side in case.sides
        ],
    )
    return found, judged, stdouts


#: One side of a case: its name, its environment, and what judges its run.
SideJudge = Callable[[Execution], tuple[list[Finding], set[str]]]


def judge_sides(
    spec: RunnerSpec,
    command: Sequence[str] | None,
    *,
    label: str,
    own: str,
    sides: Sequence[tuple[str, Mapping[str, str], SideJudge]],
    timeout_s: float,
) -> tuple[list[Finding], set[str], dict[str, str], list[Execution]]:
    """Every side started at once and each judged: the findings, the clauses judged,
    each side's stdout and the runs (none when a side hung: ``finishes`` fails)."""
    runs = run_sides(spec, command, [env for _name, env, _judge in sides], timeout_s=timeout_s)
    if runs is None:
        hung = f"a side still running after {timeout_s:g} s: all killed, nothing judged"
        return [Finding("finishes", hung, label)], {"finishes", own}, {}, []
    found: list[Finding] = []
    judged = {own, "finishes"}
    for (_name, _env, judge), run in zip(sides, runs, strict=True):
        side_found, side_judged = judge(run)
        found += side_found
        judged |= side_judged
    stdouts = {name: run.stdout for (name, _env, _judge), run in zip(sides, runs, strict=True)}
    return found, judged, stdouts, runs


def run_sides(
    spec: RunnerSpec,
    command: Sequence[str] | None,
    envs: Sequence[Mapping[str, str]],
    *,
    timeout_s: float,
) -> list[Execution] | None:
    """Every side started at once on ``command`` (default the spec's), each with the
    spec's test variables under its own; None when one outlived ``timeout_s``."""
    try:
        return execute_together(
            command or spec.command,
            kind=spec.kind,
            envs=[{**spec.test_env, **env} for env in envs],
            timeout_s=timeout_s,
        )
    except subprocess.TimeoutExpired:
        return None


def side_findings(
    spec: RunnerSpec,
    run: Execution,
    *,
    case: str,
    side: str,
    own: str,
    expected_exit: int | None = None,
    metrics: frozenset[str] = frozenset(),
    below: Mapping[str, float] | None = None,
    names: tuple[str, ...] = (),
    absent: frozenset[str] = frozenset(),
    values: Mapping[str, str] | None = None,
    never_says: tuple[str, ...] = (),
) -> tuple[list[Finding], set[str]]:
    """One side's findings and the clauses it was judged on: every rule every run keeps
    (:func:`~runners.conformance.clauses.run_findings`), its metrics as
    ``healthy-metrics``, no metric after a crash as ``crash-no-metrics``, and what the
    case expects of it (its exit, a bound, a word of its last line, a value, a metric or
    text it must not print) as the case's own clause ``own``."""
    judged = run_clauses(spec, run.exit_code)
    found = [
        Finding(f.clause, f"{side}: {f.detail}", case)
        for f in run_findings(spec, run.exit_code, run.report)
    ]

    def wrong(detail: str, clause: str = own) -> None:
        found.append(Finding(clause, f"{side}: {detail}", case))

    if expected_exit is not None and run.exit_code != expected_exit:
        wrong(f"exit {run.exit_code}, expected {expected_exit}")
    printed = set(run.report.metrics) | set(run.report.unmeasurable)
    if metrics:
        judged.add("healthy-metrics")
        # provenance is its own clause: a missing one is told there, once.
        if missing := sorted(metrics - printed - {"provenance"}):
            wrong(f"did not print {missing}", "healthy-metrics")
    for name, bound in (below or {}).items():
        value = run.report.metrics.get(name)
        number = None if value is None else parse_go_float(value)
        if number is None or not number < bound:
            wrong(f"{name}={value}, expected below {bound:g}")
    for word in names:
        if word not in run.report.message:
            wrong(f"last line {run.report.message!r} does not name {word!r}")
    if extra := sorted(absent & printed):
        wrong(f"printed {extra}, which it must never print")
    for name, value in (values or {}).items():
        if run.report.metrics.get(name) != value:
            wrong(f"{name}={run.report.metrics.get(name)}, expected {value}")
    for text in never_says:
        if text in run.stdout:
            wrong(f"stdout says {text!r}")
    if is_crash_case(case):
        judged.add("crash-no-metrics")
        if printed:
            wrong(f"metrics printed on a crash: {sorted(printed)}", "crash-no-metrics")
    return found, judged


def loopback_addresses(count: int) -> list[str]:
    """``count`` distinct loopback addresses in a random block (cases never share ports)."""
    block = random.Random().randint(1, 250)
    third = random.Random().randint(1, 250)
    return [f"127.{block}.{third}.{index + 1}" for index in range(count)]


class AddressBlocks:
    """Loopback blocks for the cases of one kind, none shared: one random second octet,
    a different third octet each call (250 blocks, more than any kind has cases)."""

    def __init__(self) -> None:
        self._second = random.Random().randint(1, 250)
        self._thirds = random.Random().sample(range(1, 251), 250)

    def take(self, count: int) -> list[str]:
        """``count`` addresses in a block no other call of this object gets."""
        third = self._thirds.pop()
        return [f"127.{self._second}.{third}.{index + 1}" for index in range(count)]


def pair_env(role: str, *, own: str, peer: str, peer_node: str, **extra: str) -> dict[str, str]:
    """A Pair side's rendezvous variables: its role, its peer, and where it listens."""
    return {
        "BURNIN_ROLE": role,
        "BURNIN_PEER_HOST": peer,
        "BURNIN_PEER_NODE": peer_node,
        "BURNIN_LISTEN_ADDRESS": own,
        **extra,
    }


def _pair_cases(spec: RunnerSpec) -> list[LinkCase]:
    kind, matrix = spec.kind, LINK_FAULT_MATRIX[spec.kind]
    blocks = AddressBlocks()

    def server(ips: list[str], expected: int, **extra: str) -> Side:
        server_ip, client_ip = ips
        env = pair_env("server", own=server_ip, peer=client_ip, peer_node="node-c", **extra)
        metrics = spec.server_metrics if expected == 0 else frozenset()
        return Side("server", env, expected, metrics=metrics)

    def client(ips: list[str], expected: int, *, names: tuple[str, ...] = (), **extra: Any) -> Side:
        server_ip, client_ip = ips
        env = pair_env("client", own=client_ip, peer=server_ip, peer_node="node-s")
        metrics = spec.healthy_metrics if expected == 0 else frozenset()
        return Side("client", env, expected, metrics=metrics, names=names, **extra)

    slow = {SIM_GPU_ENV: "h200:slow-link"}
    healthy, slowed, unmet, dead = (blocks.take(2) for _ in range(4))
    cases = [
        LinkCase(
            kind, "healthy", (server(healthy, 0), client(healthy, EXIT_CODES[matrix["healthy"]]))
        ),
        LinkCase(
            kind,
            "slow-link",
            (
                server(slowed, 0, **slow),
                client(slowed, EXIT_CODES[matrix["slow-link"]], below={"tcpThroughputGbps": 0.2}),
            ),
        ),
        LinkCase(
            kind,
            "no-rendezvous",
            (
                server(unmet, 3, **{SIM_GPU_ENV: "h200:no-rendezvous"}),
                client(unmet, EXIT_CODES[matrix["no-rendezvous"]], names=(unmet[0], "node-s")),
            ),
        ),
        LinkCase(
            kind,
            "dead-peer",
            (client(dead, EXIT_CODES[matrix["dead-peer"]], names=(dead[0], "node-s")),),
        ),
    ]

    def lone(**extra: str) -> dict[str, str]:
        server_ip, client_ip = blocks.take(2)
        return {**pair_env("client", own=client_ip, peer=server_ip, peer_node="n"), **extra}

    for label, env, says in (
        ("group-scope-refused", lone(BURNIN_RANK="0"), "Group scope"),
        ("crash", lone(**{SIM_GPU_ENV: "h200:crash"}), "injected crash"),
        ("bad-role", {**lone(), "BURNIN_ROLE": "peer"}, "'peer'"),
        ("unknown-fault", lone(**{SIM_GPU_ENV: "h200:no-such-fault"}), "no-such-fault"),
    ):
        cases.append(LinkCase(kind, label, (Side("client", env, 3, names=(says,)),)))
    return cases


def _group_cases(spec: RunnerSpec, nranks: int = 3) -> list[LinkCase]:
    kind, matrix = spec.kind, LINK_FAULT_MATRIX[spec.kind]
    blocks = AddressBlocks()

    def rank(
        addresses: list[str],
        index: int,
        expected: int,
        *,
        names: tuple[str, ...] = (),
        fault: str | None = None,
        elements: str | None = None,
        **extra: Any,
    ) -> Side:
        env = {
            "BURNIN_RANK": str(index),
            "BURNIN_NRANKS": str(nranks),
            "BURNIN_ROOT_HOST": addresses[0],
            "BURNIN_ROOT_NODE": "node-0",
            "BURNIN_LISTEN_ADDRESS": addresses[index],
        }
        if fault is not None:
            env[SIM_GPU_ENV] = f"h200:{fault}"
        if elements is not None:
            env["BURNIN_RING_ALLREDUCE_ELEMENTS"] = elements
        metrics = spec.healthy_metrics if expected in (0, 1) else frozenset()
        return Side(f"rank {index}", env, expected, metrics=metrics, names=names, **extra)

    def code(fault: str) -> int:
        return EXIT_CODES[matrix[fault]]

    last = nranks - 1
    healthy, slowed, corrupt, unmet, dead, dead_root = (blocks.take(nranks) for _ in range(6))
    cases = [
        LinkCase(kind, "healthy", tuple(rank(healthy, i, code("healthy")) for i in range(nranks))),
        LinkCase(
            kind,
            "slow-link",
            tuple(
                rank(
                    slowed,
                    i,
                    code("slow-link"),
                    fault="slow-link" if i == 1 else None,
                    # Pacing one rank's sends to 12.5 MB/s bounds every rank's busbw by
                    # it (each rank sends 2(n-1)/n of the vector per all-reduce); 2 MiB
                    # keeps an unpaced loopback ring well above the bound.
                    below={"busBandwidthGBs": 0.0135},
                    elements="262144",
                )
                for i in range(nranks)
            ),
        ),
        LinkCase(
            kind,
            "corrupt-data",
            tuple(
                rank(corrupt, i, code("corrupt-data"), fault="corrupt-data" if i == 1 else None)
                for i in range(nranks)
            ),
        ),
        LinkCase(
            kind,
            "no-rendezvous",
            tuple(
                rank(
                    unmet,
                    i,
                    code("no-rendezvous"),
                    names=() if i == last else (f"rank(s) {last}",),
                    fault="no-rendezvous" if i == last else None,
                )
                for i in range(nranks)
            ),
        ),
        LinkCase(
            kind,
            "dead-peer",
            tuple(
                rank(dead, i, code("dead-peer"), names=(f"rank(s) {last}",)) for i in range(last)
            ),
        ),
        LinkCase(
            kind,
            "dead-root",
            tuple(rank(dead_root, i, 3, names=("rank 0", dead_root[0])) for i in range(1, nranks)),
        ),
    ]
    for label, extra, says in (
        ("pair-scope-refused", {"BURNIN_ROLE": "client"}, "Pair scope"),
        ("rank-out-of-range", {"BURNIN_RANK": str(nranks)}, "outside"),
        ("crash", {SIM_GPU_ENV: "h200:crash"}, "injected crash"),
    ):
        env = {**rank(blocks.take(nranks), 0, 3).env, **extra}
        cases.append(LinkCase(kind, label, (Side("rank 0", env, 3, names=(says,)),)))
    return cases


def link_cases_for(kind: str) -> list[LinkCase]:
    """Every conformance case of a Pair or Group runner (LINK_FAULT_MATRIX, refusals)."""
    spec = RUNNERS[kind]
    if spec.scope == "Pair":
        return _pair_cases(spec)
    if spec.scope == "Group":
        return _group_cases(spec)
    raise ValueError(f"{kind} is a {spec.scope} runner: use cases_for")


def card_for(spec: RunnerSpec, *, command: Sequence[str], jobs: int | None = None) -> Card:
    """Every link case of ``spec``'s kind run on ``command``, folded into one row per
    clause; cases run at once up to ``jobs`` (each has its own loopback block)."""
    results = run_all(case_runs(spec, command=command), jobs=jobs)
    return fold(spec.kind, command, results)


def case_runs(
    spec: RunnerSpec, *, command: Sequence[str]
) -> list[functools.partial[tuple[list[Finding], set[str]]]]:
    """One call per link case, for :func:`~runners.conformance.clauses.run_all`."""
    return [
        functools.partial(_judged, spec, case, tuple(command)) for case in link_cases_for(spec.kind)
    ]


def _judged(
    spec: RunnerSpec, case: LinkCase, command: tuple[str, ...]
) -> tuple[list[Finding], set[str]]:
    found, judged, _stdouts = case_findings(spec, case, command=command)
    return found, judged
