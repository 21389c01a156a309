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

__all__ = [
    "LONG_KINDS",
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
    the caller can always write ``run.json`` (see the module docstring).
    """
    run = LocalRun(results=[])
    index = 0
    try:
        for index, test in enumerate(plan.tests):
            if plan.fail_fast and fail_fast_stops(r.state for r in run.results):
                return run
            local = _new_result(test, options=options)
            run.results.append(local)
            run_test(
                test,
                local=local,
                index=index,
                total=len(plan.tests),
                options=options,
                reporter=reporter,
            )
            reporter.test_finished(result=local)
    except (KeyboardInterrupt, Exception) as exc:
        run.stopped = why_stopped(exc)
        run.results[:] = settle_interrupted(run.results, why=run.stopped)
        started = {r.state.name for r in run.results}
        run.results += [
            not_started(test, options=options, why=run.stopped)
            for test in plan.tests[index:]
            if test.name not in started
        ]
    return run


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
