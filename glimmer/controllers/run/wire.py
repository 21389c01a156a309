"""Status ``TestResult``/``TestAttempt`` JSON <-> the verdict package's result state.

A thin adapter over the one result codec (``glimmer.verdict.codec``), which both
dispatchers share; what is operator-specific lives here. The status is the
checkpoint (H): every pass rebuilds the open results from it, lets
``glimmer.verdict`` decide (the one choke point), and writes them back. Only the
fields the verdict package owns are converted; scope, nodes, timestamps, artifacts
and axes stay in the wire dict untouched. An attempt whose pod has started but not
yet been harvested is kept in the wire list with phase ``Running`` (so a restart
knows that attempt is in flight) and is never shown to the verdict package.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from glimmer.verdict import AttemptRecord, Phase, TestResultState, codec

JSON = dict[str, Any]


def in_flight(result: Mapping[str, Any]) -> JSON | None:
    """The attempt entry of a started, not yet harvested pod, if any."""
    attempts = result.get("attempts") or []
    if attempts and attempts[-1].get("phase") == str(Phase.RUNNING):
        return dict(attempts[-1])
    return None


def finished_attempts(result: Mapping[str, Any]) -> list[JSON]:
    return [dict(a) for a in result.get("attempts") or [] if a.get("phase") != str(Phase.RUNNING)]


def next_attempt_number(result: Mapping[str, Any] | None) -> int:
    """1-based number of the attempt to run (or running) next for a unit. A segmented
    soak's elided attempts (G5 ``truncatedAttempts``) keep their numbers, so a pod name
    is never reused once its attempt record was dropped."""
    if result is None:
        return 1
    elided = max(codec.int_or_default(result.get("truncatedAttempts", 0), 0), 0)
    return len(finished_attempts(result)) + elided + 1


def attempt_from_wire(entry: Mapping[str, Any]) -> AttemptRecord:
    return codec.attempt_from_json(entry)


def attempt_to_wire(record: AttemptRecord) -> JSON:
    return codec.attempt_to_json(record)


def state_from_wire(result: Mapping[str, Any], *, required: bool) -> TestResultState:
    """The verdict package's view of a result (the in-flight attempt left out)."""
    return codec.result_from_json(result, required=required, attempts=finished_attempts(result))


def state_to_wire(result: Mapping[str, Any], state: TestResultState) -> JSON:
    """``result`` with the verdict-owned fields replaced by ``state`` (D4: together)."""
    return codec.result_to_json(state, base=result)


def synthetic_result(name: str, message: str) -> JSON:
    """``resolve``/``admission``: kind "", no scope, no nodes, phase Error (api §4.3)."""
    return {
        "name": name,
        "kind": "",
        "phase": str(Phase.ERROR),
        "message": codec.clamp_text(message, codec.MAX_MESSAGE_BYTES),
    }
