"""Status ``TestResult``/``TestAttempt`` JSON <-> the verdict package's result state.

The status is the checkpoint (H): every pass rebuilds the open results from it, lets
``glimmer.verdict`` decide (the one choke point), and writes them back. Only the fields
the verdict package owns are converted; scope, nodes, timestamps, artifacts and axes stay
in the wire dict untouched. An attempt whose pod has started but not yet been harvested
is kept in the wire list with phase ``Running`` (so a restart knows that attempt is in
flight) and is never shown to the verdict package.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from glimmer.verdict import AttemptRecord, Phase, Provenance, TestResultState, Trigger

JSON = dict[str, Any]


def _phase(value: Any) -> Phase:
    try:
        return Phase(str(value))
    except ValueError:
        # An unreadable phase must never read as settled-and-passed.
        return Phase.ERROR


def _trigger(value: Any) -> Trigger:
    try:
        return Trigger(str(value))
    except ValueError:
        return Trigger.INITIAL


def in_flight(result: Mapping[str, Any]) -> JSON | None:
    """The attempt entry of a started, not yet harvested pod, if any."""
    attempts = result.get("attempts") or []
    if attempts and attempts[-1].get("phase") == str(Phase.RUNNING):
        return dict(attempts[-1])
    return None


def finished_attempts(result: Mapping[str, Any]) -> list[JSON]:
    return [dict(a) for a in result.get("attempts") or [] if a.get("phase") != str(Phase.RUNNING)]


def next_attempt_number(result: Mapping[str, Any] | None) -> int:
    """1-based number of the attempt to run (or running) next for a unit."""
    if result is None:
        return 1
    return len(finished_attempts(result)) + 1


def _provenance(value: Any) -> Provenance:
    """Anything but an explicit ``silicon`` cannot vouch for silicon; absent reads
    silicon (objects written by the Go implementation carry no provenance)."""
    if value is None:
        return Provenance.SILICON
    return Provenance.SILICON if value == Provenance.SILICON else Provenance.SIM


def attempt_from_wire(entry: Mapping[str, Any]) -> AttemptRecord:
    return AttemptRecord(
        attempt=int(entry.get("attempt", 1)),
        trigger=_trigger(entry.get("trigger")),
        phase=_phase(entry.get("phase")),
        exit_code=int(entry.get("exitCode", 0)),
        message=str(entry.get("message", "")),
        metrics=dict(entry.get("metrics") or {}),
        node=str(entry.get("node", "")),
        pod_name=str(entry.get("podName", "")),
        started_at=entry.get("startedAt"),
        finished_at=entry.get("finishedAt"),
        provenance=_provenance(entry.get("provenance")),
    )


def attempt_to_wire(record: AttemptRecord) -> JSON:
    entry: JSON = {
        "attempt": record.attempt,
        "trigger": str(record.trigger),
        "phase": str(record.phase),
        "exitCode": record.exit_code,
    }
    if record.node:
        entry["node"] = record.node
    if record.pod_name:
        entry["podName"] = record.pod_name
    if record.started_at:
        entry["startedAt"] = record.started_at
    if record.finished_at:
        entry["finishedAt"] = record.finished_at
    if record.metrics:
        entry["metrics"] = dict(sorted(record.metrics.items()))
    if record.message:
        entry["message"] = record.message
    entry["provenance"] = str(record.provenance)
    return entry


def state_from_wire(result: Mapping[str, Any], *, required: bool) -> TestResultState:
    """The verdict package's view of a result (settled fields only matter for roll-up)."""
    return TestResultState(
        name=str(result.get("name", "")),
        kind=str(result.get("kind", "")),
        required=required,
        phase=_phase(result.get("phase")),
        repeats_required=int(result.get("repeatsRequired", 1) or 1),
        repeats_completed=int(result.get("repeatsCompleted", 0)),
        error_retries=int(result.get("errorRetries", 0)),
        attempts=tuple(attempt_from_wire(a) for a in finished_attempts(result)),
        message=str(result.get("message", "")),
        metrics=dict(result.get("metrics") or {}),
        unmeasurable=tuple(result.get("unmeasurable") or ()),
        provenance=_provenance(result.get("provenance")),
        suspect=bool(result.get("suspect")),
    )


def state_to_wire(result: Mapping[str, Any], state: TestResultState) -> JSON:
    """``result`` with the verdict-owned fields replaced by ``state`` (D4: together)."""
    out = dict(result)
    out["phase"] = str(state.phase)
    out["repeatsRequired"] = state.repeats_required
    out["repeatsCompleted"] = state.repeats_completed
    out["errorRetries"] = state.error_retries
    out["attempts"] = [attempt_to_wire(a) for a in state.attempts]
    out["provenance"] = str(state.provenance)
    if state.suspect:
        out["suspect"] = True
    else:
        out.pop("suspect", None)
    for key, value in (
        ("message", state.message),
        ("metrics", dict(sorted(state.metrics.items()))),
        (
            "violations",
            [
                {
                    "index": v.index,
                    "metric": v.metric,
                    "cause": str(v.cause),
                    "kind": str(v.kind),
                    **({"reason": v.reason} if v.reason else {}),
                }
                for v in state.violations
            ],
        ),
        ("notEvaluated", [{"metric": n.metric, "reason": n.reason} for n in state.not_evaluated]),
        ("unmeasurable", sorted(state.unmeasurable)),
    ):
        if value:
            out[key] = value
        else:
            out.pop(key, None)
    return out


def synthetic_result(name: str, message: str) -> JSON:
    """``resolve``/``admission``: kind "", no scope, no nodes, phase Error (api §4.3)."""
    return {"name": name, "kind": "", "phase": str(Phase.ERROR), "message": message}
