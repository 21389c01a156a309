"""The guarded entry point every runner's ``__main__`` goes through.

Why: Python's own crash exit is 1, which the controller reads as *measured hardware
failure* — a verdict that is never retried. Here every unexpected exception, including
``SystemExit`` raised by a library and ``KeyboardInterrupt``, becomes exit 3 with a
``<PREFIX>_ERROR`` line (A2, A16), and the verdict marker is always the last line.
"""

from __future__ import annotations

import importlib
import os
import sys
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from runners.sdk.env import RunnerEnv
from runners.sdk.outcome import EXIT_ERROR, DeclaredSkip, RunnerError, Verdict
from runners.sdk.platform import injected_crash_requested, open_platform
from runners.sdk.protocols import Platform
from runners.sdk.report import Markers, Report


class InjectedCrashError(RuntimeError):
    """Raised on purpose by ``GLIMMER_SIM_GPU=<profile>:crash``."""


@dataclass
class RunnerContext:
    """What a runner's ``measure`` receives."""

    report: Report
    env: RunnerEnv
    environ: Mapping[str, str]
    _platform: Platform | None = field(default=None, init=False)

    def platform(self) -> Platform:
        """Open the hardware seam once and print its provenance before any evidence."""
        if self._platform is None:
            self._platform = open_platform(self.environ)
            self.report.metric("provenance", self._platform.provenance)
        return self._platform


Measure = Callable[[RunnerContext], Verdict]


def guarded_main(
    *, markers: Markers, measure: Measure, environ: Mapping[str, str], report: Report | None = None
) -> int:
    """Run ``measure`` under the contract and return the exit code (never raises)."""
    out = report if report is not None else Report(markers=markers)
    try:
        ctx = RunnerContext(report=out, env=RunnerEnv.from_environ(environ), environ=environ)
        if injected_crash_requested(environ):
            raise InjectedCrashError("injected crash (GLIMMER_SIM_GPU ... :crash)")
        return out.conclude(measure(ctx))
    except DeclaredSkip as skip:
        return out.skip(str(skip))
    except RunnerError as error:
        return out.error(str(error) or type(error).__name__)
    except BaseException as crash:
        traceback.print_exc(file=sys.stderr)
        try:
            return out.error(f"runner crashed: {type(crash).__name__}: {crash}")
        except BaseException:
            return EXIT_ERROR


def launch(*, module: str, markers: Markers) -> None:
    """Import the runner module inside the guard and exit with its code."""

    def measure(ctx: RunnerContext) -> Verdict:
        runner = importlib.import_module(module)
        result: Verdict = runner.measure(ctx)
        return result

    code = guarded_main(markers=markers, measure=measure, environ=os.environ)
    try:
        sys.stdout.flush()
    except BaseException:
        code = EXIT_ERROR
    os._exit(code)
