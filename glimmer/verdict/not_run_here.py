"""A planned test this run does not execute: Skipped, saying why, never a Pass (N5).

A bare host runs one scope per invocation: a plain ``glimmer run`` the Node tests, a
``--role`` run one end of each Pair test, a ``--rank`` run one rank of each Group test.
The other tests of a mixed profile are *not run here*: each gets a settled Skipped
result with no attempt, whose message says why and which command runs it.

What that result may and may not do is the verdict package's existing rules, not new
ones: Skipped never decides the run's phase (D6), so the Node tests that ran decide it;
a result with no attempt measured nothing, so its provenance is ``unknown``, never
``silicon`` (I14), and it is never suspect; and a run with a required result Skipped
certifies no silicon (I16, :func:`glimmer.verdict.rollup.run_provenance`), so a host
whose link tests were not run here is never certified by that run, and its node verdict
says the test is unjudged (:func:`glimmer.verdict.nodes.node_verdict`).
"""

from __future__ import annotations

from dataclasses import replace

from glimmer.verdict.phases import Phase, Provenance
from glimmer.verdict.rollup import ResultClosedError, TestResultState


def not_run_here(state: TestResultState, *, reason: str) -> TestResultState:
    """Settle an open result that this run will not execute: Skipped, no attempt, no
    metrics, provenance ``unknown``, ``reason`` as its message (N5)."""
    if not state.open or state.attempts:
        raise ResultClosedError(
            f"result {state.name!r} has already run ({state.phase}); it cannot be "
            "recorded as not run here"
        )
    return replace(
        state,
        phase=Phase.SKIPPED,
        message=reason,
        metrics={},
        violations=(),
        not_evaluated=(),
        unmeasurable=(),
        provenance=Provenance.UNKNOWN,
        suspect=False,
    )
