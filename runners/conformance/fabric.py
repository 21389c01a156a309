"""The fabric suite: the whole Pair or Group, judged as the verdict layer combines it.

The perftest runners (``ib-write-bw``, ``gpudirect-rdma``, ``fabric-soak``) and ``nccl``
run every side together on loopback over the simulated fabric; ``FABRIC_FAULT_MATRIX``
gives the phase of the whole (F3/F6: Error > Fail > Skip > Pass over the sides), and each
side's output must show what its role may and may not print.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from glimmer.contract import SIM_GPU_ENV
from runners.catalog import RUNNERS, RunnerSpec
from runners.conformance.execution import DEFAULT_TIMEOUT_S, contract_problems, execute_together
from runners.conformance.links import loopback_addresses, pair_env
from runners.fault_matrix import (
    ERROR,
    FABRIC_FAULT_MATRIX,
    FABRIC_FAULT_SIDE,
    FAILED,
    PASSED,
    SKIPPED,
)


@dataclass(frozen=True)
class FabricSide:
    """One process of a fabric case and what its output must show."""

    name: str
    env: Mapping[str, str]
    #: Metrics it must print (value or n/a).
    metrics: frozenset[str] = frozenset()
    #: Metrics it must never print (``peakBandwidthGbps``; a worker's collective metrics).
    absent: frozenset[str] = frozenset()
    #: Metric -> exact printed value.
    values: Mapping[str, str] = field(default_factory=dict)
    #: Words its last line must contain.
    names: tuple[str, ...] = ()
    #: Exit code it must give, when one side's own exit is the point (None: any).
    exit_code: int | None = None
    #: Text its stdout must not contain (a skip declared before the rendezvous).
    never_says: tuple[str, ...] = ()


@dataclass(frozen=True)
class FabricCase:
    kind: str
    label: str
    sides: tuple[FabricSide, ...]
    #: The phase of the whole Pair/Group (F3/F6 precedence over the sides' exits).
    phase: str

    def __str__(self) -> str:
        return f"{self.kind}[{self.label}]"


def combined_phase(exit_codes: Sequence[int]) -> str:
    """Error > Fail > Skip > Pass over every side that reported (F3, F6)."""
    if any(code not in (0, 1, 2) for code in exit_codes):
        return ERROR
    if 1 in exit_codes:
        return FAILED
    if 2 in exit_codes:
        return SKIPPED
    return PASSED


def check_fabric(spec: RunnerSpec, case: FabricCase) -> list[str]:
    """Run every side together; every problem found, per side and for the whole."""
    runs = execute_together(
        spec.command,
        kind=spec.kind,
        envs=[{**spec.test_env, **side.env} for side in case.sides],
        timeout_s=DEFAULT_TIMEOUT_S,
    )
    problems = []
    for side, run in zip(case.sides, runs, strict=True):
        found = contract_problems(spec, run)
        printed = set(run.report.metrics) | set(run.report.unmeasurable)
        if missing := sorted(side.metrics - printed):
            found.append(f"did not print {missing}")
        if extra := sorted(side.absent & printed):
            found.append(f"printed {extra}, which it must never print")
        for name, value in side.values.items():
            if run.report.metrics.get(name) != value:
                found.append(f"{name}={run.report.metrics.get(name)}, expected {value}")
        for word in side.names:
            if word not in run.report.message:
                found.append(f"last line {run.report.message!r} does not name {word!r}")
        for text in side.never_says:
            if text in run.stdout:
                found.append(f"stdout says {text!r}")
        if side.exit_code is not None and run.exit_code != side.exit_code:
            found.append(f"exit {run.exit_code}, expected {side.exit_code}")
        if found:
            found.append(f"stdout tail: {run.stdout[-600:]!r}")
            problems += [f"{side.name}: {problem}" for problem in found]
    phase = combined_phase([run.exit_code for run in runs])
    if phase != case.phase:
        problems.append(f"the {spec.scope.lower()} ends {phase}, the matrix says {case.phase}")
    return problems


_NEVER_PEAK = frozenset({"peakBandwidthGbps"})


def _perftest_cases(spec: RunnerSpec) -> list[FabricCase]:
    kind, matrix = spec.kind, FABRIC_FAULT_MATRIX[spec.kind]
    server_ip, client_ip = loopback_addresses(2)
    bandwidth = "minBandwidthGbps" if kind == "fabric-soak" else "bandwidthGbps"

    def side(role: str, sim: str, **extra: Any) -> FabricSide:
        own, peer, node = (
            (server_ip, client_ip, "node-c")
            if role == "server"
            else (
                client_ip,
                server_ip,
                "node-s",
            )
        )
        env = {**pair_env(role, own=own, peer=peer, peer_node=node), SIM_GPU_ENV: sim}
        return FabricSide(role, env, **extra)

    def healthy(role: str, **extra: Any) -> FabricSide:
        metrics = spec.server_metrics if role == "server" else spec.healthy_metrics
        return side(role, "h200", metrics=metrics, absent=_NEVER_PEAK, **extra)

    cases = [FabricCase(kind, "healthy", (healthy("server"), healthy("client")), matrix["healthy"])]
    for fault in (
        "degraded-link",
        "flapping-link",
        "nic-flap-under-load",
        "memlock-8mib",
        "no-rendezvous",
    ):
        phase = matrix[fault]
        faulty = FABRIC_FAULT_SIDE[fault]
        sides = []
        for role in ("server", "client"):
            if role != faulty:
                names = (server_ip, "node-s") if fault == "no-rendezvous" else ()
                sides.append(side(role, "h200", absent=_NEVER_PEAK, names=names))
            elif fault == "memlock-8mib":
                # The shrunk, still-measured Pass: the limit is read and the size used said.
                sides.append(
                    side(
                        role,
                        f"h200:{fault}",
                        metrics=frozenset({bandwidth, "rdmaMessageBytes"}),
                        absent=_NEVER_PEAK,
                        values={"memlockShrunk": "true", "memlockLimit": "8388608"},
                    )
                )
            else:
                sides.append(side(role, f"h200:{fault}", absent=_NEVER_PEAK))
        cases.append(FabricCase(kind, fault, tuple(sides), phase))
    cases.append(
        FabricCase(
            kind,
            "dead-peer",
            (side("client", "h200", names=(server_ip, "node-s"), exit_code=3),),
            matrix["dead-peer"],
        )
    )
    if kind == "gpudirect-rdma":
        cases.append(
            FabricCase(
                kind,
                "gb10-server-skips-before-rendezvous",
                (side("server", "gb10", names=("GB10",), exit_code=2, never_says=("listening",)),),
                SKIPPED,
            )
        )
    base = side("client", "h200").env
    refusals = [
        ("group-scope-refused", {**base, "BURNIN_RANK": "0"}, "Group scope"),
        ("crash", {**base, SIM_GPU_ENV: "h200:crash"}, "injected crash"),
        ("bad-role", {**base, "BURNIN_ROLE": "peer"}, "'peer'"),
        ("unknown-fault", {**base, SIM_GPU_ENV: "h200:no-such-fault"}, "no-such-fault"),
    ]
    if kind != "fabric-soak":
        refusals.append(
            ("unknown-measurand", {**base, "BURNIN_VARIANT_MEASURAND": "jitter"}, "jitter")
        )
    for label, env, says in refusals:
        cases.append(
            FabricCase(kind, label, (FabricSide("client", env, names=(says,), exit_code=3),), ERROR)
        )
    return cases


_COLLECTIVE = frozenset(
    {
        "provenance",
        "ncclCollective",
        "ncclTransport",
        "ranks",
        "busBandwidthGBs",
        "algBandwidthGBs",
        "latencyUs",
        "miscompares",
    }
)


def _nccl_cases(nranks: int = 4) -> list[FabricCase]:
    matrix = FABRIC_FAULT_MATRIX["nccl"]
    addresses = loopback_addresses(nranks)
    last = nranks - 1

    def rank(index: int, *, fault: str | None = None, **extra: Any) -> FabricSide:
        env = {
            "BURNIN_RANK": str(index),
            "BURNIN_NRANKS": str(nranks),
            "BURNIN_ROOT_HOST": addresses[0],
            "BURNIN_ROOT_NODE": "node-0",
            "BURNIN_LISTEN_ADDRESS": addresses[index],
            "BURNIN_NCCL_RENDEZVOUS_SECONDS": "3",
            SIM_GPU_ENV: f"h200x8:{fault}" if fault else "h200x8",
        }
        return FabricSide(f"rank {index}", env, **extra)

    def worker(index: int, **extra: Any) -> FabricSide:
        return rank(index, absent=_COLLECTIVE - {"provenance"}, **extra)

    says = {
        "memlock-8mib": ("RLIMIT_MEMLOCK", "8388608", "LimitMEMLOCK=infinity"),
        "nccl-socket-fallback": ("TCP sockets",),
    }
    cases = [
        FabricCase(
            "nccl",
            "healthy",
            (
                rank(0, metrics=_COLLECTIVE, values={"ncclTransport": "IB", "ranks": "32"}),
                *(worker(i) for i in range(1, nranks)),
            ),
            matrix["healthy"],
        )
    ]
    for fault in (
        "degraded-link",
        "flapping-link",
        "nic-flap-under-load",
        "memlock-8mib",
        "nccl-socket-fallback",
    ):
        root = rank(0, fault=fault, names=says.get(fault, ()))
        cases.append(
            FabricCase("nccl", fault, (root, *(worker(i) for i in range(1, nranks))), matrix[fault])
        )
    cases.append(
        FabricCase(
            "nccl",
            "no-rendezvous",
            (
                rank(0, names=(f"rank(s) {last}",), exit_code=3),
                *(worker(i) for i in range(1, last)),
                rank(last, fault="no-rendezvous"),
            ),
            matrix["no-rendezvous"],
        )
    )
    cases.append(
        FabricCase(
            "nccl",
            "dead-peer",
            (
                rank(0, names=(f"rank(s) {last}",), exit_code=3),
                *(worker(i) for i in range(1, last)),
            ),
            matrix["dead-peer"],
        )
    )
    server_ip, client_ip = loopback_addresses(2)
    pair = (
        FabricSide(
            "server",
            {
                **pair_env("server", own=server_ip, peer=client_ip, peer_node="node-c"),
                SIM_GPU_ENV: "h200x8@roce200",
                "BURNIN_NCCL_RENDEZVOUS_SECONDS": "3",
            },
            metrics=_COLLECTIVE,
            values={"ncclTransport": "RoCE", "ranks": "16"},
        ),
        FabricSide(
            "client",
            {
                **pair_env("client", own=client_ip, peer=server_ip, peer_node="node-s"),
                SIM_GPU_ENV: "h200x8@roce200",
            },
            absent=_COLLECTIVE - {"provenance"},
        ),
    )
    cases.append(FabricCase("nccl", "pair-roce", pair, PASSED))
    return cases


def fabric_cases_for(kind: str) -> list[FabricCase]:
    """Every fabric case of a kind (FABRIC_FAULT_MATRIX plus refusals)."""
    if kind == "nccl":
        return _nccl_cases()
    return _perftest_cases(RUNNERS[kind])
