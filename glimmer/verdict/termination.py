"""What the kubelet says about a pod's end, folded into an attempt (A14, I17).

A SIGTERM-trapping entrypoint that exits 0 when its deadline kills it must not pass,
and an OOMKill must stay visible even when the runner printed something. The same
holds for every end the runner did not reach on its own (an eviction, a preemption,
a node shutdown, a deletion): what it printed before it was stopped is not a verdict,
whatever its exit code, so the attempt is Error with the kubelet's account.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Final

from glimmer.verdict.attempt import AttemptVerdict
from glimmer.verdict.messages import bracket, join_clauses
from glimmer.verdict.phases import Phase

DEADLINE_MESSAGE: Final = (
    "the runner pod exceeded its deadline (activeDeadlineSeconds) and was stopped; no verdict"
)
MAX_DETAIL_BYTES: Final = 512
#: ``exitCode`` when no runner container terminated (the pod failed around it).
NO_TERMINATED_RUNNER: Final = -1

_SPACE_RUN: Final = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class Termination:
    """The kubelet's account: the pod-level reason when the pod Failed with one, else
    the runner container's terminated reason, else a waiting container's or the pod's."""

    exit_code: int
    reason: str = ""
    detail: str = ""
    deadline_exceeded: bool = False
    #: Something other than the runner ended it (kubelet, eviction, preemption, node
    #: shutdown, deletion, OOM kill); ``reason``/``detail`` then say what.
    interrupted: bool = False


def clamp_utf8(text: str, limit: int) -> str:
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    return data[:limit].decode("utf-8", "ignore")


def kubelet_account(termination: Termination) -> str:
    account = (
        f"runner terminated abnormally (exit {termination.exit_code}, "
        f'reason "{termination.reason}")'
    )
    detail = clamp_utf8(_SPACE_RUN.sub(" ", termination.detail).strip(), MAX_DETAIL_BYTES)
    return f"{account}: {detail}" if detail else account


def interrupted_message(termination: Termination) -> str:
    """I17: the kubelet's reason, and why nothing the runner printed decides."""
    return (
        f"{kubelet_account(termination)}; the runner did not complete on its own, "
        "so its output is not a verdict (no verdict)"
    )


def apply_termination(
    verdict: AttemptVerdict, termination: Termination, *, runner_line: str
) -> AttemptVerdict:
    """Fold the pod's end into the attempt verdict.

    ``runner_line`` is the runner's own last non-metric line (empty if none).
    """
    if termination.deadline_exceeded:
        return replace(
            verdict,
            phase=Phase.ERROR,
            message=DEADLINE_MESSAGE,
            violations=(),
            not_evaluated=(),
            suspect=False,
        )
    if termination.interrupted:
        return replace(
            verdict,
            phase=Phase.ERROR,
            message=join_clauses(interrupted_message(termination), bracket(runner_line)),
            violations=(),
            not_evaluated=(),
            suspect=False,
            gated=False,
        )
    if verdict.phase is not Phase.ERROR:
        return verdict
    account = kubelet_account(termination)
    if not runner_line and not verdict.unreadable_output:
        return replace(verdict, message=join_clauses(account, _kept_explanation(verdict)))
    if not 0 <= termination.exit_code <= 3:
        return replace(verdict, message=join_clauses(verdict.message, bracket(account)))
    return verdict


def _kept_explanation(verdict: AttemptVerdict) -> str:
    if verdict.undeclared_skip:
        return bracket("exit 2 without a declared skip marker")
    if verdict.empty_harvest:
        return bracket("the runner measured nothing")
    return ""
