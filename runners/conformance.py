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
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from glimmer.contract import SIM_GPU_ENV, RunnerReport, read_report
from runners.catalog import RUNNERS, RunnerSpec
from runners.fault_matrix import EXIT_CODES, FAULT_MATRIX, MATRIX_PROFILE, NOT_READ, PROFILE_MATRIX
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


def execute(
    command: Sequence[str], *, kind: str, env: Mapping[str, str], timeout_s: float
) -> Execution:
    """Run a runner command with ``env`` layered on a clean copy of this environment."""
    full = {k: v for k, v in os.environ.items() if not k.startswith(("BURNIN_", "GLIMMER_"))}
    full.update(env)
    argv = [sys.executable if command[0] == "python" else command[0], *command[1:]]
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
        expected = "sim" if spec.reads_gpu else "silicon"
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
    cases.append(
        Case(
            kind=kind,
            label="missing-dependency",
            env=spec.missing_dependency_env,
            expected_exit=3,
        )
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
