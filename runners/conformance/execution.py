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
from runners.conformance.clauses import run_findings

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
    """Rules every execution must keep, whatever its exit code: the details of
    :func:`runners.conformance.clauses.run_findings` (one clause each)."""
    return [f.detail for f in run_findings(spec, run.exit_code, run.report)]
