"""Running a runner command under simulation, and the rules every execution keeps.

The three suites (:mod:`.node`, :mod:`.links`, :mod:`.fabric`) run commands only
through here: each run gets a clean copy of this environment with ``BURNIN_*`` and
``GLIMMER_*`` removed, then the case's own variables, and its stdout is read by
``glimmer.contract.read_report`` — the same reader the controller uses.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from glimmer.contract import RunnerReport, read_report
from runners.catalog import RunnerSpec

DEFAULT_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class Execution:
    exit_code: int
    stdout: str
    stderr: str
    report: RunnerReport


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
