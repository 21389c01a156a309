"""The bare-host dispatcher: one profile, this host, runners as processes or containers.

It is the operator's twin without a cluster: the same plan (``glimmer.plan``), the
same contract and verdict, the same repeats and Error-only retries, so a verdict on
a bare host means what it means in-cluster. Each execution runs either as a local
process (this repository's runners, ``runner.command``, ``--image-command``) or as
its image under a container runtime (``LocalOptions.runtime``,
:mod:`glimmer.local.runtimes`); both are supervised and read the same way. Differences
by design (semantics N2): a segmented soak runs as one process or container for its
whole duration, and reserved ``BURNIN_*`` names in ``runner.env`` are ignored. Pair
and Group tests run one *side* here (``LocalOptions.link``, see
:mod:`glimmer.local.links`): the side's runner gets the rendezvous environment and the
peer's address as given (host networking, N2), and the link decides what each
attempt's report means.

Nothing the dispatcher does may end ``glimmer run`` with exit 1 (a hardware Fail) or
without ``run.json``: a run that is interrupted (SIGINT/SIGTERM) or that meets an
unexpected error of ours stops, records every unfinished test as Error (in flight,
and not yet started alike: a run.json holding only the tests that happened to finish
could read Passed), and returns; :attr:`LocalRun.stopped` says why.

This module is the run loop (:func:`run_plan`); the rest is one idea a module, every
public name importable from here: :mod:`glimmer.local.model` (options, results, the
link and reporter seams), :mod:`glimmer.local.launch` (how an attempt starts),
:mod:`glimmer.local.attempts` (attempts until a result settles, and their judgement),
:mod:`glimmer.local.interrupt` (signals, and what a stopped run records).
"""

from __future__ import annotations

from glimmer.local.attempts import (
    LONG_KINDS,
    judge_soak,
    preflight,
    progress_window,
    rfc3339,
    run_test,
)
from glimmer.local.checkpoints import run_checkpoints
from glimmer.local.interrupt import not_started, settle_interrupted, why_stopped
from glimmer.local.launch import (
    Launch,
    execution_image,
    launch,
    needs_host_ip,
    planned_env,
    runner_command,
    runner_variables,
    unlaunchable,
    unresolved_env,
)
from glimmer.local.model import (
    CheckpointListener,
    LinkError,
    LinkSide,
    LocalOptions,
    LocalResult,
    LocalRun,
    Reporter,
    SilentReporter,
)
from glimmer.plan import PinnedPlan, PlannedTest
from glimmer.plan import spec as specs
from glimmer.verdict import TestResultState, fail_fast_stops
from glimmer.verdict.not_run_here import not_run_here

__all__ = [
    "LONG_KINDS",
    "CheckpointListener",
    "Launch",
    "LinkError",
    "LinkSide",
    "LocalOptions",
    "LocalResult",
    "LocalRun",
    "Reporter",
    "SilentReporter",
    "execution_image",
    "judge_soak",
    "launch",
    "needs_host_ip",
    "planned_env",
    "preflight",
    "progress_window",
    "rfc3339",
    "run_plan",
    "runner_command",
    "runner_variables",
    "settle_interrupted",
    "unlaunchable",
    "unresolved_env",
]


def run_plan(plan: PinnedPlan, *, options: LocalOptions, reporter: Reporter) -> LocalRun:
    """Run every test of the plan on this host, in order, one at a time.

    An interrupt or an unexpected error stops the run; it never escapes from here, so
    the caller can always write ``run.json`` (see the module docstring). A test in
    ``options.not_run_here`` (a mixed profile's test of another scope, N5) is not run:
    its result is Skipped, saying why, in its place in plan order; the progress counts
    only the tests that run here.
    """
    run = LocalRun(results=[])
    checkpoints = run_checkpoints(plan, options=options, results=run.results)
    total = sum(1 for t in plan.tests if t.name not in options.not_run_here)
    ran = 0
    try:
        for test in plan.tests:
            reason = options.not_run_here.get(test.name)
            if reason is not None:
                run.results.append(_not_run_here(test, options=options, reason=reason))
                continue
            if plan.fail_fast and fail_fast_stops(r.state for r in run.results):
                return run
            local = _new_result(test, options=options)
            run.results.append(local)
            run_test(
                test,
                local=local,
                index=ran,
                total=total,
                options=options,
                reporter=reporter,
                checkpoints=checkpoints,
            )
            reporter.test_finished(result=local)
            ran += 1
    except (KeyboardInterrupt, Exception) as exc:
        run.stopped = why_stopped(exc)
        run.results[:] = settle_interrupted(run.results, why=run.stopped)
        started = {r.state.name for r in run.results}
        for test in plan.tests:
            if test.name in started:
                continue
            reason = options.not_run_here.get(test.name)
            run.results.append(
                not_started(test, options=options, why=run.stopped)
                if reason is None
                else _not_run_here(test, options=options, reason=reason)
            )
    return run


def _not_run_here(test: PlannedTest, *, options: LocalOptions, reason: str) -> LocalResult:
    """N5: a test this run does not execute, settled Skipped with ``reason``, on this
    host's node only (it names no peer it never met)."""
    local = _new_result(test, options=options)
    local.nodes = (options.node,)
    local.state = not_run_here(local.state, reason=reason)
    local.not_run_here = reason
    return local


def _new_result(test: PlannedTest, *, options: LocalOptions) -> LocalResult:
    return LocalResult(
        state=TestResultState(
            name=test.name,
            kind=test.kind,
            required=test.required,
            repeats_required=specs.repeat_count(test.spec),
        ),
        scope=test.scope,
        node=options.node,
        nodes=options.nodes,
        variant_axes=dict(test.axes),
    )
