"""Message composition (C3, A7): a reader must see every cause without parsing.

Each note is a bracketed clause joined to the previous text with one space.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from glimmer.verdict.thresholds import CAUSE_WORDS, Evaluation

#: What a passing simulated result of a hardware-dependent check means (M7): the
#: verdict's ``suspect`` flag, said in words a fleet engineer reads right.
SIM_PASS_WORDS: Final = "simulated: proves the plumbing, not the hardware"

MAX_NAMED_INVALID: Final = 8
MAX_NAMED_MORE_GATES: Final = 4
#: I13: the words every message about an over-long output line carries.
UNREADABLE_LINE: Final = "output line exceeds the readable limit"


def join_clauses(*clauses: str) -> str:
    return " ".join(clause for clause in clauses if clause)


def bracket(text: str) -> str:
    return f"[{text}]" if text else ""


def invalid_names_note(names: Sequence[str], count: int) -> str:
    """A7: the exact count and at most 8 names, then ``, and N more``."""
    if count <= 0:
        return ""
    shown = list(names[:MAX_NAMED_INVALID])
    rest = count - len(shown)
    listed = ", ".join(shown) + (f", and {rest} more" if rest > 0 else "")
    return bracket(f"{count} invalid metric name(s) ignored: {listed}")


def unreadable_note(count: int) -> str:
    """For a phase the exit code decided: the output was not fully readable."""
    if count <= 0:
        return ""
    return bracket(f"{UNREADABLE_LINE}: {plural(count, 'line')} not read")


def plural(count: int, singular: str, plural_form: str | None = None) -> str:
    """``1 gate`` / ``2 gates``: never ``gate(s)`` in a verdict a person reads."""
    word = singular if count == 1 else (plural_form or singular + "s")
    return f"{count} {word}"


def not_evaluated_note(evaluation: Evaluation) -> str:
    if not evaluation.not_evaluated:
        return ""
    parts = "; ".join(f"{item.metric} is {item.reason}" for item in evaluation.not_evaluated)
    return bracket(f"not evaluated: {parts}")


def more_gates_note(evaluation: Evaluation) -> str:
    others = evaluation.violations[1:]
    if not others:
        return ""
    named = ", ".join(f"{v.metric} ({CAUSE_WORDS[v.cause]})" for v in others[:MAX_NAMED_MORE_GATES])
    rest = len(others) - MAX_NAMED_MORE_GATES
    if rest > 0:
        named += f", and {rest} more"
    return bracket(f"and {plural(len(others), 'more gate', 'more gates')} failed: {named}")


def gated_message(evaluation: Evaluation, *, runner_line: str) -> str:
    """C3 for a gate-decided phase (the invalid-name note is added by the caller)."""
    if evaluation.passed:
        return join_clauses(runner_line, not_evaluated_note(evaluation))
    return join_clauses(
        evaluation.violations[0].reason,
        bracket(runner_line),
        more_gates_note(evaluation),
        not_evaluated_note(evaluation),
    )
