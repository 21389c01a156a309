"""The link suite: a Pair or Group runner as two or three processes on loopback.

Real bytes pass between the processes; each side is judged on its own exit and output
(``LINK_FAULT_MATRIX`` gives the exits), and a side that cannot reach its peer must name
it. The refusals (a Pair runner given a rank, an unknown role, a crash) exit 3.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from glimmer.contract import SIM_GPU_ENV
from runners.catalog import RUNNERS, RunnerSpec
from runners.conformance.execution import DEFAULT_TIMEOUT_S, contract_problems, execute_together
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
    """Run every side of a link case together; every problem found, per side."""
    runs = execute_together(
        command or spec.command,
        kind=spec.kind,
        envs=[{**spec.test_env, **side.env} for side in case.sides],
        timeout_s=DEFAULT_TIMEOUT_S,
    )
    problems = []
    for side, run in zip(case.sides, runs, strict=True):
        found = contract_problems(spec, run)
        if run.exit_code != side.expected_exit:
            found.append(f"exit {run.exit_code}, expected {side.expected_exit}")
        printed = set(run.report.metrics) | set(run.report.unmeasurable)
        missing = sorted(side.metrics - printed)
        if missing:
            found.append(f"did not print {missing}")
        for name, bound in side.below.items():
            value = run.report.metrics.get(name)
            if value is None or not float(value) < bound:
                found.append(f"{name}={value}, expected below {bound:g}")
        for word in side.names:
            if word not in run.report.message:
                found.append(f"last line {run.report.message!r} does not name {word!r}")
        if found:
            found.append(f"stdout tail: {run.stdout[-600:]!r}")
            problems += [f"{side.name}: {problem}" for problem in found]
    return problems


def loopback_addresses(count: int) -> list[str]:
    """``count`` distinct loopback addresses in a random block (cases never share ports)."""
    block = random.Random().randint(1, 250)
    third = random.Random().randint(1, 250)
    return [f"127.{block}.{third}.{index + 1}" for index in range(count)]


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
    server_ip, client_ip = loopback_addresses(2)

    def server(expected: int, **extra: str) -> Side:
        env = pair_env("server", own=server_ip, peer=client_ip, peer_node="node-c", **extra)
        metrics = spec.server_metrics if expected == 0 else frozenset()
        return Side("server", env, expected, metrics=metrics)

    def client(expected: int, *, names: tuple[str, ...] = (), **extra: Any) -> Side:
        env = pair_env("client", own=client_ip, peer=server_ip, peer_node="node-s")
        metrics = spec.healthy_metrics if expected == 0 else frozenset()
        return Side("client", env, expected, metrics=metrics, names=names, **extra)

    slow = {SIM_GPU_ENV: "h200:slow-link"}
    cases = [
        LinkCase(kind, "healthy", (server(0), client(EXIT_CODES[matrix["healthy"]]))),
        LinkCase(
            kind,
            "slow-link",
            (
                server(0, **slow),
                client(EXIT_CODES[matrix["slow-link"]], below={"tcpThroughputGbps": 0.2}),
            ),
        ),
        LinkCase(
            kind,
            "no-rendezvous",
            (
                server(3, **{SIM_GPU_ENV: "h200:no-rendezvous"}),
                client(EXIT_CODES[matrix["no-rendezvous"]], names=(server_ip, "node-s")),
            ),
        ),
        LinkCase(
            kind,
            "dead-peer",
            (client(EXIT_CODES[matrix["dead-peer"]], names=(server_ip, "node-s")),),
        ),
    ]
    refused = {
        **pair_env("client", own=client_ip, peer=server_ip, peer_node="n"),
        "BURNIN_RANK": "0",
    }
    crash = {
        **pair_env("client", own=client_ip, peer=server_ip, peer_node="n"),
        SIM_GPU_ENV: "h200:crash",
    }
    for label, env, says in (
        ("group-scope-refused", refused, "Group scope"),
        ("crash", crash, "injected crash"),
        ("bad-role", pair_env("peer", own=client_ip, peer=server_ip, peer_node="n"), "'peer'"),
        ("unknown-fault", {**crash, SIM_GPU_ENV: "h200:no-such-fault"}, "no-such-fault"),
    ):
        cases.append(LinkCase(kind, label, (Side("client", env, 3, names=(says,)),)))
    return cases


def _group_cases(spec: RunnerSpec, nranks: int = 3) -> list[LinkCase]:
    kind, matrix = spec.kind, LINK_FAULT_MATRIX[spec.kind]
    addresses = loopback_addresses(nranks)

    def rank(
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
    cases = [
        LinkCase(kind, "healthy", tuple(rank(i, code("healthy")) for i in range(nranks))),
        LinkCase(
            kind,
            "slow-link",
            tuple(
                rank(
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
                rank(i, code("corrupt-data"), fault="corrupt-data" if i == 1 else None)
                for i in range(nranks)
            ),
        ),
        LinkCase(
            kind,
            "no-rendezvous",
            tuple(
                rank(
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
            tuple(rank(i, code("dead-peer"), names=(f"rank(s) {last}",)) for i in range(last)),
        ),
        LinkCase(
            kind,
            "dead-root",
            tuple(rank(i, 3, names=("rank 0", addresses[0])) for i in range(1, nranks)),
        ),
    ]
    base = rank(0, 3).env
    for label, env, says in (
        ("pair-scope-refused", {**base, "BURNIN_ROLE": "client"}, "Pair scope"),
        ("rank-out-of-range", {**base, "BURNIN_RANK": str(nranks)}, "outside"),
        ("crash", {**base, SIM_GPU_ENV: "h200:crash"}, "injected crash"),
    ):
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
