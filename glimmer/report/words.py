"""How a phase reads in a report: one word, one shape, one hue, decided once.

Error and Fail must never be confused (Error is unjudged and retryable, Fail is a
hardware verdict), and must stay distinct for a reader who cannot tell the hues
apart or prints in grey: so each phase has a different word *and* a different
shape, and the hue is only a third cue.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from glimmer.report.model import ResultView
from glimmer.verdict import Phase
from glimmer.verdict.nodes import NodeState

#: What a cell reads when a test has no result on a node (M2: an em dash, never a guess).
NOT_RUN: Final = "\u2014"


@dataclass(frozen=True, slots=True)
class Look:
    word: str
    #: A glyph that differs per phase, so the grid reads without colour.
    shape: str
    #: CSS class; the stylesheet gives each a hue and a fill pattern.
    css: str


LOOKS: Final[dict[Phase, Look]] = {
    Phase.PASSED: Look("PASS", "\u2714", "pass"),  # heavy check mark
    Phase.FAILED: Look("FAIL", "\u2716", "fail"),  # heavy multiplication x
    Phase.ERROR: Look("ERROR", "\u26a0", "error"),  # warning sign
    Phase.SKIPPED: Look("SKIP", "\u25cb", "skip"),  # white circle
    Phase.CANCELLED: Look("CANCELLED", "\u2298", "cancelled"),  # circled division slash
    Phase.RUNNING: Look("RUNNING", "\u25d4", "running"),  # circle, upper right quadrant
    Phase.PENDING: Look("PENDING", "\u25d4", "running"),
}
UNKNOWN_LOOK: Final = Look("UNKNOWN", "?", "unknown")
ABSENT_LOOK: Final = Look(NOT_RUN, "", "absent")


#: A node verdict's look: Passed and Failed as the phases; the two that certify nothing
#: with words and shapes of their own (Simulated is never a pass, NotJudged never a fail).
NODE_LOOKS: Final[dict[NodeState, Look]] = {
    NodeState.PASSED: LOOKS[Phase.PASSED],
    NodeState.FAILED: LOOKS[Phase.FAILED],
    NodeState.SIMULATED: Look("SIMULATED ONLY", "\u25c7", "skip"),  # white diamond
    NodeState.NOT_JUDGED: Look("NOT JUDGED", "\u2013", "error"),  # en dash
}


def node_look(verdict: str) -> Look:
    """How a node verdict word from the envelope reads; an unknown word reads UNKNOWN."""
    try:
        return NODE_LOOKS[NodeState(verdict)]
    except ValueError:
        return UNKNOWN_LOOK


def look(phase: Phase | None) -> Look:
    return UNKNOWN_LOOK if phase is None else LOOKS[phase]


def result_look(result: ResultView | None) -> Look:
    return ABSENT_LOOK if result is None else look(result.phase)


def phase_label(word: str) -> str:
    """A run phase as written in a heading: the word we know, else the input's, marked."""
    try:
        return look(Phase(word)).word
    except ValueError:
        return f"UNKNOWN ({word!r})" if word else "UNKNOWN (no phase delivered)"
