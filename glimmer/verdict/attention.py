"""Which results need someone to act, and in what order (M4).

A report leads with what needs action, so the decision of what counts as "needs
action" is made once, here, and every format only displays it: a Failed result (the
hardware measured short), an Error (nobody judged it: rerun or fix the test), an open
result (no verdict yet), and a phase this version does not know (never read as a
pass). Skipped, Cancelled and Passed need nobody. Failed comes first, then Error,
then the rest; a simulated pass is not an action (it was never a claim on silicon).
"""

from __future__ import annotations

from typing import Final

from glimmer.verdict.phases import Phase

#: Lower sorts first: what a reader must act on leads the report.
URGENCY: Final[dict[Phase, int]] = {
    Phase.FAILED: 0,
    Phase.ERROR: 1,
    Phase.RUNNING: 3,
    Phase.PENDING: 3,
    Phase.CANCELLED: 4,
    Phase.SKIPPED: 5,
    Phase.PASSED: 6,
}
#: A phase word this version does not know: after Error, before an open result.
UNKNOWN_URGENCY: Final = 2
#: No result at all (a test not run on a node) sorts with the passes.
ABSENT_URGENCY: Final = 7
#: Phases at or below this urgency need action.
_ACTION_LIMIT: Final = 3


def urgency(phase: Phase | None) -> int:
    """Sort key for a result's phase: Failed, Error, unknown, open, then settled."""
    return UNKNOWN_URGENCY if phase is None else URGENCY[phase]


def needs_action(phase: Phase | None) -> bool:
    """Failed, Error, an unknown phase and an open result need someone; nothing else."""
    return urgency(phase) <= _ACTION_LIMIT
