"""The fabric suite: the whole Pair or Group, judged as the verdict layer combines it.

The perftest runners (``ib-write-bw``, ``gpudirect-rdma``, ``fabric-soak``) and ``nccl``
run every side together on loopback over the simulated fabric; ``FABRIC_FAULT_MATRIX``
gives the phase of the whole (F3/F6: Error > Fail > Skip > Pass over the sides), and each
side's output must show what its role may and may not print.

:func:`case_findings` judges a case through the clause engine (each side as
:func:`runners.conformance.links.side_findings` does, and the whole's phase as the case's
own clause); :func:`check_fabric` is its problem strings and :func:`card_for` its card.
Every case draws its own loopback block, so the cases of one card may run at once.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from glimmer.contract import SIM_GPU_ENV
from runners.catalog import RUNNERS, RunnerSpec
from runners.conformance.clauses import Card, Finding, case_clause, fold, run_all
from runners.conformance.execution import DEFAULT_TIMEOUT_S
from runners.conformance.links import (
    AddressBlocks,
    judge_sides,
    pair_env,
    problem_lines,
    side_findings,
)
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
    #: The clause the case is judged on, when its label does not name it
    #: (:func:`~runners.conformance.clauses.case_clause` of the label otherwise).
    clause: str = ""

    @property
    def own_clause(self) -> str:
        return self.clause or case_clause(self.label)

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


def check_fabric(
    spec: RunnerSpec, case: FabricCase, *, command: Sequence[str] | None = None
) -> list[str]:
    """Run every side together; every problem found (empty when it conforms):
    :func:`case_findings`' details, and each side's stdout tail."""
    found, _judged, stdouts = case_findings(spec, case, command=command)
    return problem_lines(found, stdouts)


def case_findings(
    spec: RunnerSpec,
    case: FabricCase,
    *,
    command: Sequence[str] | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> tuple[list[Finding], set[str], dict[str, str]]:
    """Run every side of a fabric case together on ``command`` (default the spec's):
    every finding (one clause each), the clauses judged, and each side's stdout. The
    whole's phase (F3/F6 over the sides' exits) is judged on the case's own clause."""
    label, own = case.label, case.own_clause
    found, judged, stdouts, runs = judge_sides(
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
                    expected_exit=side.exit_code,
                    metrics=side.metrics,
                    names=side.names,
                    absent=side.absent,
                    values=side.values,
                    never_says=side.never_says,
                ),
            )
            for side in case.sides
        ],
    )
    if not runs:
        return found, judged, stdouts
    phase = combined_phase([run.exit_code for run in runs])
    if phase != case.phase:
        whole = "group" if case.sides[0].name.startswith("rank") else "pair"
        found.append(Finding(own, f"the {whole} ends {phase}, the matrix says {case.phase}", label))
    return found, judged, stdouts


def card_for(spec: RunnerSpec, *, command: Sequence[str], jobs: int | None = None) -> Card:
    """Every fabric case of ``spec``'s kind run on ``command``, folded into one row per
    clause; cases run at once up to ``jobs`` (each has its own loopback block)."""
    results = run_all(case_runs(spec, command=command), jobs=jobs)
    return fold(spec.kind, command, results)


def case_runs(
    spec: RunnerSpec, *, command: Sequence[str], case_prefix: str = ""
) -> list[functools.partial[tuple[list[Finding], set[str]]]]:
    """One call per fabric case, for :func:`~runners.conformance.clauses.run_all`; each
    finding's case named ``<case_prefix><label>`` (nccl's card tells its Node cases
    from its fabric ones so)."""
    return [
        functools.partial(_judged, spec, case, tuple(command), case_prefix)
        for case in fabric_cases_for(spec.kind)
    ]


def _judged(
    spec: RunnerSpec, case: FabricCase, command: tuple[str, ...], case_prefix: str
) -> tuple[list[Finding], set[str]]:
    found, judged, _stdouts = case_findings(spec, case, command=command)
    if case_prefix:
        found = [Finding(f.clause, f.detail, f"{case_prefix}{f.case}") for f in found]
    return found, judged


_NEVER_PEAK = frozenset({"peakBandwidthGbps"})


def _perftest_cases(spec: RunnerSpec) -> list[FabricCase]:
    kind, matrix = spec.kind, FABRIC_FAULT_MATRIX[spec.kind]
    blocks = AddressBlocks()
    bandwidth = "minBandwidthGbps" if kind == "fabric-soak" else "bandwidthGbps"

    def side(ips: list[str], role: str, sim: str, **extra: Any) -> FabricSide:
        server_ip, client_ip = ips
        own, peer, node = (
            (server_ip, client_ip, "node-c")
            if role == "server"
            else (client_ip, server_ip, "node-s")
        )
        env = {**pair_env(role, own=own, peer=peer, peer_node=node), SIM_GPU_ENV: sim}
        return FabricSide(role, env, **extra)

    def healthy(ips: list[str], role: str, **extra: Any) -> FabricSide:
        metrics = spec.server_metrics if role == "server" else spec.healthy_metrics
        return side(ips, role, "h200", metrics=metrics, absent=_NEVER_PEAK, **extra)

    ips = blocks.take(2)
    cases = [
        FabricCase(
            kind, "healthy", (healthy(ips, "server"), healthy(ips, "client")), matrix["healthy"]
        )
    ]
    for fault in (
        "degraded-link",
        "flapping-link",
        "nic-flap-under-load",
        "memlock-8mib",
        "no-rendezvous",
    ):
        phase = matrix[fault]
        faulty = FABRIC_FAULT_SIDE[fault]
        ips = blocks.take(2)
        sides = []
        for role in ("server", "client"):
            if role != faulty:
                names = (ips[0], "node-s") if fault == "no-rendezvous" else ()
                sides.append(side(ips, role, "h200", absent=_NEVER_PEAK, names=names))
            elif fault == "memlock-8mib":
                # The shrunk, still-measured Pass: the limit is read and the size used said.
                sides.append(
                    side(
                        ips,
                        role,
                        f"h200:{fault}",
                        metrics=frozenset({bandwidth, "rdmaMessageBytes"}),
                        absent=_NEVER_PEAK,
                        values={"memlockShrunk": "true", "memlockLimit": "8388608"},
                    )
                )
            else:
                sides.append(side(ips, role, f"h200:{fault}", absent=_NEVER_PEAK))
        cases.append(FabricCase(kind, fault, tuple(sides), phase))
    ips = blocks.take(2)
    cases.append(
        FabricCase(
            kind,
            "dead-peer",
            (side(ips, "client", "h200", names=(ips[0], "node-s"), exit_code=3),),
            matrix["dead-peer"],
        )
    )
    if kind == "gpudirect-rdma":
        gb10 = side(
            blocks.take(2),
            "server",
            "gb10",
            names=("GB10",),
            exit_code=2,
            never_says=("listening",),
        )
        cases.append(
            FabricCase(
                kind,
                "gb10-server-skips-before-rendezvous",
                (gb10,),
                SKIPPED,
                clause="declared-skip",
            )
        )

    def base() -> dict[str, str]:
        return dict(side(blocks.take(2), "client", "h200").env)

    refusals = [
        ("group-scope-refused", {**base(), "BURNIN_RANK": "0"}, "Group scope"),
        ("crash", {**base(), SIM_GPU_ENV: "h200:crash"}, "injected crash"),
        ("bad-role", {**base(), "BURNIN_ROLE": "peer"}, "'peer'"),
        ("unknown-fault", {**base(), SIM_GPU_ENV: "h200:no-such-fault"}, "no-such-fault"),
    ]
    if kind != "fabric-soak":
        refusals.append(
            ("unknown-measurand", {**base(), "BURNIN_VARIANT_MEASURAND": "jitter"}, "jitter")
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
    blocks = AddressBlocks()
    last = nranks - 1

    def rank(
        addresses: list[str], index: int, *, fault: str | None = None, **extra: Any
    ) -> FabricSide:
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

    def worker(addresses: list[str], index: int, **extra: Any) -> FabricSide:
        return rank(addresses, index, absent=_COLLECTIVE - {"provenance"}, **extra)

    says = {
        "memlock-8mib": ("RLIMIT_MEMLOCK", "8388608", "LimitMEMLOCK=infinity"),
        "nccl-socket-fallback": ("TCP sockets",),
    }
    group = blocks.take(nranks)
    cases = [
        FabricCase(
            "nccl",
            "healthy",
            (
                rank(group, 0, metrics=_COLLECTIVE, values={"ncclTransport": "IB", "ranks": "32"}),
                *(worker(group, i) for i in range(1, nranks)),
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
        group = blocks.take(nranks)
        root = rank(group, 0, fault=fault, names=says.get(fault, ()))
        workers = (worker(group, i) for i in range(1, nranks))
        cases.append(FabricCase("nccl", fault, (root, *workers), matrix[fault]))
    group = blocks.take(nranks)
    cases.append(
        FabricCase(
            "nccl",
            "no-rendezvous",
            (
                rank(group, 0, names=(f"rank(s) {last}",), exit_code=3),
                *(worker(group, i) for i in range(1, last)),
                rank(group, last, fault="no-rendezvous"),
            ),
            matrix["no-rendezvous"],
        )
    )
    group = blocks.take(nranks)
    cases.append(
        FabricCase(
            "nccl",
            "dead-peer",
            (
                rank(group, 0, names=(f"rank(s) {last}",), exit_code=3),
                *(worker(group, i) for i in range(1, last)),
            ),
            matrix["dead-peer"],
        )
    )
    server_ip, client_ip = blocks.take(2)
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
    cases.append(FabricCase("nccl", "pair-roce", pair, PASSED, clause="healthy:h200x8@roce200"))
    return cases


def fabric_cases_for(kind: str) -> list[FabricCase]:
    """Every fabric case of a kind (FABRIC_FAULT_MATRIX plus refusals)."""
    if kind == "nccl":
        return _nccl_cases()
    return _perftest_cases(RUNNERS[kind])
