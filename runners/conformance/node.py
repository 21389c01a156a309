"""The Node suite: one process per case, on healthy profiles, every fault and the refusals.

What it checks: a healthy simulated profile exits 0 and prints every metric the runner
registers, and on the matrix's part (every feature present) declares no measurement
``n/a``; given a short ``BURNIN_DURATION_SECONDS`` it keeps within it; each simulated
fault (``FAULT_MATRIX``, and ``AMD_FAULT_MATRIX`` on ``AMD_MATRIX_PROFILE``) gives the
exit code the fault matrix says and a measured failure names the faulty device; an
injected exception (``<profile>:crash``), a missing dependency and an unknown fault exit
3; a declared skip exits 2. Every run also keeps
:func:`~runners.conformance.execution.contract_problems`.
"""

from __future__ import annotations

import functools
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from glimmer.contract import SIM_GPU_ENV
from runners.catalog import RUNNERS, RunnerSpec
from runners.conformance.clauses import (
    DURATION_CASE_BUDGET_S,
    DURATION_CASE_SLACK_S,
    Card,
    Finding,
    case_clause,
    duration_findings,
    fold,
    is_crash_case,
    na_findings,
    run_all,
    run_clauses,
    run_findings,
)
from runners.conformance.execution import DEFAULT_TIMEOUT_S, execute
from runners.fault_matrix import (
    AMD_FAULT_MATRIX,
    AMD_MATRIX_PROFILE,
    EXIT_CODES,
    FAULT_MATRIX,
    MATRIX_PROFILE,
    NOT_READ,
    PASSED,
    PROFILE_MATRIX,
)
from runners.sdk.simgpu.spec import parse_spec


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
    #: The part has every feature: no registered measurement may be ``n/a`` (the n/a clause).
    forbid_na: bool = False

    def __str__(self) -> str:
        return f"{self.kind}[{self.label}]"


def check(spec: RunnerSpec, case: Case, *, command: Sequence[str] | None = None) -> list[str]:
    """Run one case and return every problem found (empty when it conforms)."""
    found, _judged, stdout = case_findings(spec, case, command=command)
    problems = [f.detail for f in found]
    if problems:
        problems.append(f"stdout tail: {stdout[-800:]!r}")
    return problems


def case_findings(
    spec: RunnerSpec,
    case: Case,
    *,
    command: Sequence[str] | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> tuple[list[Finding], set[str], str]:
    """Run one case: every finding (one clause each), the clauses it was judged on, and
    its stdout. The one engine of :func:`check` and ``glimmer conformance``."""
    label = case.label
    own = case_clause(label)
    if label == "duration":
        timeout_s = min(timeout_s, DURATION_CASE_BUDGET_S + DURATION_CASE_SLACK_S + 5.0)
    started = time.monotonic()
    try:
        run = execute(
            command or spec.command,
            kind=spec.kind,
            env={**spec.test_env, **case.env},
            timeout_s=timeout_s,
        )
    except subprocess.TimeoutExpired:
        hung = f"still running after {timeout_s:g} s: killed, nothing judged"
        return [Finding("finishes", hung, label)], {"finishes", own}, ""
    wall_s = time.monotonic() - started
    judged = run_clauses(spec, run.exit_code) | {own, "finishes"}
    found = [replace(f, case=label) for f in run_findings(spec, run.exit_code, run.report)]
    if case.forbid_na:
        judged.add("n/a")
        found += [replace(f, case=label) for f in na_findings(run.report)]
    if label == "duration":
        found += [replace(f, case=label) for f in duration_findings(run.report, wall_s=wall_s)]
    if run.exit_code != case.expected_exit:
        found.append(Finding(own, f"exit {run.exit_code}, expected {case.expected_exit}", label))
    if case.require_healthy_metrics:
        judged.add("healthy-metrics")
        printed = set(run.report.metrics) | set(run.report.unmeasurable)
        # provenance is its own clause: a missing one is told there, once.
        missing = sorted(spec.healthy_metrics - printed - {"provenance"})
        if missing:
            found.append(Finding("healthy-metrics", f"healthy run did not print {missing}", label))
    worst = run.report.metrics.get("worstDeviceIndex")
    expected_worst = None if case.faulty_device is None else str(case.faulty_device)
    if run.exit_code == 1 and worst is not None and worst != expected_worst:
        found.append(
            Finding(own, f"fold names device {worst}, the fault is on {case.faulty_device}", label)
        )
    if is_crash_case(label):
        judged.add("crash-no-metrics")
        printed_after = sorted(set(run.report.metrics) | set(run.report.unmeasurable))
        if printed_after:
            found.append(
                Finding("crash-no-metrics", f"metrics printed on a crash: {printed_after}", label)
            )
    return found, judged, run.stdout


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
                require_healthy_metrics=fault == "healthy" and phase == PASSED,
                faulty_device=parse_spec(MATRIX_PROFILE).faulty_index,
                forbid_na=fault == "healthy" and phase == PASSED,
            )
        )
    healthy_phase = FAULT_MATRIX[kind]["healthy"]
    cases.append(
        Case(
            kind=kind,
            label="duration",
            env={
                SIM_GPU_ENV: MATRIX_PROFILE,
                "BURNIN_DURATION_SECONDS": f"{DURATION_CASE_BUDGET_S:g}",
            },
            expected_exit=EXIT_CODES[healthy_phase],
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


def card_for(spec: RunnerSpec, *, command: Sequence[str], jobs: int | None = None) -> Card:
    """Every Node case of ``spec``'s kind run on ``command``, folded into one row per
    clause (``glimmer conformance``'s report card); cases run in parallel up to ``jobs``."""

    def one(case: Case) -> tuple[list[Finding], set[str]]:
        found, judged, _stdout = case_findings(spec, case, command=command)
        return found, judged

    cases = cases_for(spec.kind)
    results = run_all([functools.partial(one, case) for case in cases], jobs=jobs)
    return fold(spec.kind, command, results)
