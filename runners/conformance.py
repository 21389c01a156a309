"""Conformance suite: does a runner command honour the runner contract under simulation?

Usable on any runner command (``python -m runners.x``, a container wrapper, another
language's binary): it only runs the command with an environment and reads exit code and
stdout through ``glimmer.contract.read_report`` — the same reader the controller uses.
What it checks (phase judgment with thresholds is the verdict layer's job):

- a healthy simulated profile exits 0 and prints every metric the runner registers;
- each simulated fault gives the exit code the fault matrix says;
- an injected exception (``<profile>:crash``) and a missing dependency exit 3;
- every exit 2 carries a declared ``_SKIP`` marker; exit 1/3 end with the fail/error
  marker; measurements carry ``provenance=sim`` (``silicon`` for host-only runners).
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from glimmer.contract import SIM_GPU_ENV, RunnerReport, read_report
from runners.catalog import RUNNERS, RunnerSpec
from runners.fault_matrix import (
    AMD_FAULT_MATRIX,
    AMD_MATRIX_PROFILE,
    ERROR,
    EXIT_CODES,
    FABRIC_FAULT_MATRIX,
    FABRIC_FAULT_SIDE,
    FAILED,
    FAULT_MATRIX,
    LINK_FAULT_MATRIX,
    MATRIX_PROFILE,
    NOT_READ,
    PASSED,
    PROFILE_MATRIX,
    SKIPPED,
)
from runners.sdk.simgpu.spec import parse_spec

DEFAULT_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class Execution:
    exit_code: int
    stdout: str
    stderr: str
    report: RunnerReport


@dataclass(frozen=True)
class Case:
    """One conformance run: a runner, an environment, and the exit code it must give."""

    kind: str
    label: str
    env: Mapping[str, str]
    expected_exit: int
    require_healthy_metrics: bool = False
    #: On a measured failure, the device the fold must name (faults land on the last one).
    faulty_device: int | None = None

    def __str__(self) -> str:
        return f"{self.kind}[{self.label}]"


def _argv_env(command: Sequence[str], env: Mapping[str, str]) -> tuple[list[str], dict[str, str]]:
    full = {k: v for k, v in os.environ.items() if not k.startswith(("BURNIN_", "GLIMMER_"))}
    full.update(env)
    return [sys.executable if command[0] == "python" else command[0], *command[1:]], full


def execute(
    command: Sequence[str], *, kind: str, env: Mapping[str, str], timeout_s: float
) -> Execution:
    """Run a runner command with ``env`` layered on a clean copy of this environment."""
    argv, full = _argv_env(command, env)
    done = subprocess.run(argv, capture_output=True, env=full, timeout=timeout_s, check=False)
    report = read_report(done.stdout, kind=kind, exit_code=done.returncode)
    return Execution(
        exit_code=done.returncode,
        stdout=done.stdout.decode(errors="replace"),
        stderr=done.stderr.decode(errors="replace"),
        report=report,
    )


def contract_problems(spec: RunnerSpec, run: Execution) -> list[str]:
    """Rules every execution must keep, whatever its exit code."""
    problems = []
    report = run.report
    if run.exit_code not in (0, 1, 2, 3):
        problems.append(f"exit {run.exit_code} is outside the runner contract's 0..3")
    if report.invalid_names:
        problems.append(f"invalid metric names printed: {list(report.invalid_names)}")
    if run.exit_code == 2 and not report.skip_declared:
        problems.append("exit 2 without a declared <PREFIX>_SKIP marker")
    if run.exit_code == 1 and not report.message.startswith(spec.fail_prefix):
        problems.append(f"exit 1 but last line is {report.message!r}")
    if run.exit_code == 3 and not report.message.startswith(spec.error_prefix):
        problems.append(f"exit 3 but last line is {report.message!r}")
    if run.exit_code == 0 and spec.pass_line is not None and report.message != spec.pass_line:
        problems.append(f"exit 0 but last line is {report.message!r}")
    if run.exit_code in (0, 1):
        expected = spec.conformance_provenance
        if report.provenance != expected:
            problems.append(f"provenance {report.provenance!r}, expected {expected!r}")
    for name, value in report.metrics.items():
        if value.strip().lower() in ("nan", "inf", "-inf", "+inf"):
            problems.append(f"non-finite value printed: {name}={value}")
    return problems


def check(spec: RunnerSpec, case: Case, *, command: Sequence[str] | None = None) -> list[str]:
    """Run one case and return every problem found (empty when it conforms)."""
    run = execute(
        command or spec.command,
        kind=spec.kind,
        env={**spec.test_env, **case.env},
        timeout_s=DEFAULT_TIMEOUT_S,
    )
    problems = contract_problems(spec, run)
    if run.exit_code != case.expected_exit:
        problems.append(f"exit {run.exit_code}, expected {case.expected_exit}")
    if case.require_healthy_metrics:
        printed = set(run.report.metrics) | set(run.report.unmeasurable)
        missing = sorted(spec.healthy_metrics - printed)
        if missing:
            problems.append(f"healthy run did not print {missing}")
    worst = run.report.metrics.get("worstDeviceIndex")
    expected_worst = None if case.faulty_device is None else str(case.faulty_device)
    if run.exit_code == 1 and worst is not None and worst != expected_worst:
        problems.append(f"fold names device {worst}, the fault is on {case.faulty_device}")
    if problems:
        problems.append(f"stdout tail: {run.stdout[-800:]!r}")
    return problems


def cases_for(kind: str) -> list[Case]:
    """Every conformance case for a runner: profiles, fault matrix, crash, missing deps."""
    spec = RUNNERS[kind]
    cases = [
        Case(
            kind=kind,
            label=f"healthy-{profile}",
            env={SIM_GPU_ENV: profile},
            expected_exit=EXIT_CODES[phase],
            require_healthy_metrics=phase == "Passed",
        )
        for profile, phase in PROFILE_MATRIX[kind].items()
        if phase != NOT_READ
    ]
    for fault, phase in FAULT_MATRIX[kind].items():
        if phase == NOT_READ:
            continue
        spec_text = MATRIX_PROFILE if fault == "healthy" else f"{MATRIX_PROFILE}:{fault}"
        cases.append(
            Case(
                kind=kind,
                label=fault,
                env={SIM_GPU_ENV: spec_text},
                expected_exit=EXIT_CODES[phase],
                require_healthy_metrics=fault == "healthy",
                faulty_device=parse_spec(MATRIX_PROFILE).faulty_index,
            )
        )
    cases.extend(_amd_cases(kind))
    cases.append(
        Case(
            kind=kind,
            label="missing-dependency",
            env=spec.missing_dependency_env,
            expected_exit=3,
        )
    )
    if spec.declared_skip_env is not None:
        cases.append(
            Case(kind=kind, label="declared-skip", env=spec.declared_skip_env, expected_exit=2)
        )
    cases.append(
        Case(
            kind=kind,
            label="unknown-fault",
            env={SIM_GPU_ENV: "h200:no-such-fault"},
            expected_exit=3,
        )
    )
    return cases


def _amd_cases(kind: str) -> list[Case]:
    """The AMD fault matrix's cells of a kind (``AMD_MATRIX_PROFILE``), run like NVIDIA's."""
    cases = []
    for fault, phase in AMD_FAULT_MATRIX.get(kind, {}).items():
        if phase == NOT_READ:
            continue
        spec_text = AMD_MATRIX_PROFILE if fault == "healthy" else f"{AMD_MATRIX_PROFILE}:{fault}"
        cases.append(
            Case(
                kind=kind,
                label=f"amd-{fault}",
                env={SIM_GPU_ENV: spec_text},
                expected_exit=EXIT_CODES[phase],
                require_healthy_metrics=fault == "healthy" and phase == PASSED,
                faulty_device=parse_spec(AMD_MATRIX_PROFILE).faulty_index,
            )
        )
    return cases


# -- link runners: two or three processes on loopback, real bytes between them ----------


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


def execute_together(
    command: Sequence[str], *, kind: str, envs: Sequence[Mapping[str, str]], timeout_s: float
) -> list[Execution]:
    """Start every process at once (they rendezvous with each other) and wait for all."""
    processes = []
    for env in envs:
        argv, full = _argv_env(command, env)
        processes.append(
            subprocess.Popen(argv, env=full, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        )
    runs = []
    try:
        for process in processes:
            stdout, stderr = process.communicate(timeout=timeout_s)
            runs.append(
                Execution(
                    exit_code=process.returncode,
                    stdout=stdout.decode(errors="replace"),
                    stderr=stderr.decode(errors="replace"),
                    report=read_report(stdout, kind=kind, exit_code=process.returncode),
                )
            )
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.wait()
    return runs


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


def _pair_env(role: str, *, own: str, peer: str, peer_node: str, **extra: str) -> dict[str, str]:
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
        env = _pair_env("server", own=server_ip, peer=client_ip, peer_node="node-c", **extra)
        metrics = spec.server_metrics if expected == 0 else frozenset()
        return Side("server", env, expected, metrics=metrics)

    def client(expected: int, *, names: tuple[str, ...] = (), **extra: Any) -> Side:
        env = _pair_env("client", own=client_ip, peer=server_ip, peer_node="node-s")
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
        **_pair_env("client", own=client_ip, peer=server_ip, peer_node="n"),
        "BURNIN_RANK": "0",
    }
    crash = {
        **_pair_env("client", own=client_ip, peer=server_ip, peer_node="n"),
        SIM_GPU_ENV: "h200:crash",
    }
    for label, env, says in (
        ("group-scope-refused", refused, "Group scope"),
        ("crash", crash, "injected crash"),
        ("bad-role", _pair_env("peer", own=client_ip, peer=server_ip, peer_node="n"), "'peer'"),
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


# -- fabric runners: the whole Pair or Group, judged as the verdict layer combines it -----


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
        env = {**_pair_env(role, own=own, peer=peer, peer_node=node), SIM_GPU_ENV: sim}
        return FabricSide(role, env, **extra)

    def healthy(role: str, **extra: Any) -> FabricSide:
        metrics = spec.server_metrics if role == "server" else spec.healthy_metrics
        return side(role, "h200", metrics=metrics, absent=_NEVER_PEAK, **extra)

    cases = [FabricCase(kind, "healthy", (healthy("server"), healthy("client")), matrix["healthy"])]
    for fault in ("degraded-link", "flapping-link", "memlock-8mib", "no-rendezvous"):
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
    for fault in ("degraded-link", "flapping-link", "memlock-8mib", "nccl-socket-fallback"):
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
                **_pair_env("server", own=server_ip, peer=client_ip, peer_node="node-c"),
                SIM_GPU_ENV: "h200x8@roce200",
                "BURNIN_NCCL_RENDEZVOUS_SECONDS": "3",
            },
            metrics=_COLLECTIVE,
            values={"ncclTransport": "RoCE", "ranks": "16"},
        ),
        FabricSide(
            "client",
            {
                **_pair_env("client", own=client_ip, peer=server_ip, peer_node="node-s"),
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
