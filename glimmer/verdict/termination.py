"""What the kubelet says about a pod's end, folded into an attempt (A14).

A SIGTERM-trapping entrypoint that exits 0 when its deadline kills it must not pass,
and an OOMKill must stay visible even when the runner printed something.
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
    if verdict.phase is not Phase.ERROR:
        return verdict
    account = kubelet_account(termination)
    if not runner_line:
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
