"""The one result codec: ``TestResultState``/``AttemptRecord`` <-> status JSON (api §4.3-4.5).

Both dispatchers write results in the BurnInRun status vocabulary (the operator into
``status.results[]``, ``glimmer run`` into ``run.json``), so the shape is decided here
once. Decisions, each fail closed or bounded:

- Free text is clamped on a UTF-8 boundary with a visible suffix: messages to
  ``MAX_MESSAGE_BYTES``, violation and notEvaluated reasons to ``MAX_REASON_BYTES``.
  Clamping is idempotent, so a result re-encoded every pass never shrinks again.
- A violation's empty ``reason`` is omitted (the field is optional, as Go's
  ``omitempty`` writes it) and decodes as ``""``; notEvaluated ``reason`` is required
  by the schema and always written.
- Metrics and message are stored once: on a settled result the last attempt decided
  it (D4: the first Failed attempt settles at once, so "first failing, else last" is
  always the last), so when its metrics and message equal the result's they are
  written only on the result and the attempt carries ``deciding: true``. Readers that
  do not know the flag still find the deciding numbers on the result, where api §4.3
  puts them.
- Decoding never crashes and never reads optimistic: an absent or unreadable
  provenance is ``unknown``, an unreadable phase is ``Error``, an unreadable count is
  the value that judges least (0 completed repeats).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final, TypeVar

from glimmer.verdict.phases import Phase, Provenance
from glimmer.verdict.rollup import AttemptRecord, TestResultState, Trigger
from glimmer.verdict.thresholds import (
    NOT_EVALUATED_REASON,
    Cause,
    NotEvaluated,
    Violation,
    ViolationKind,
)

JSON = dict[str, Any]

#: Result and attempt messages (the runner's last line travels inside them).
MAX_MESSAGE_BYTES: Final = 4096
#: Violation and notEvaluated reasons.
MAX_REASON_BYTES: Final = 1024
#: The marker on the attempt whose metrics and message are stored on the result.
DECIDING: Final = "deciding"


def clamp_text(text: str, limit: int) -> str:
    """``text`` in at most ``limit`` UTF-8 bytes; a cut one ends with a visible suffix
    that gives the original size, and is never cut inside a character."""
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    suffix = f" …[truncated, {len(data)} bytes]"
    keep = max(limit - len(suffix.encode("utf-8")), 0)
    return data[:keep].decode("utf-8", "ignore") + suffix


def _message(text: str) -> str:
    return clamp_text(text, MAX_MESSAGE_BYTES)


def _reason(text: str) -> str:
    return clamp_text(text, MAX_REASON_BYTES)


D = TypeVar("D")


def int_or_default(value: Any, default: D) -> int | D:
    """``value`` as a wire integer (an int, or a string of one), else ``default``: a
    boolean is not a number, and a malformed value never crashes a read."""
    if isinstance(value, bool):
        return default
    if isinstance(value, int):
        return value
    try:
        return int(str(value))
    except ValueError:
        return default


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ("" if value is None else str(value))


def phase_from_json(value: Any) -> Phase:
    """An unreadable phase must never read as settled-and-passed: it is Error."""
    try:
        return Phase(str(value))
    except ValueError:
        return Phase.ERROR


def trigger_from_json(value: Any) -> Trigger:
    try:
        return Trigger(str(value))
    except ValueError:
        return Trigger.INITIAL


def provenance_from_json(value: Any) -> Provenance:
    """Absent or unreadable is UNKNOWN: only the word ``silicon`` reads silicon."""
    word = str(value).lower() if value is not None else ""
    if word == Provenance.SIM:
        return Provenance.SIM
    if word == Provenance.SILICON:
        return Provenance.SILICON
    return Provenance.UNKNOWN


def _metrics(value: Any) -> dict[str, str]:
    if not isinstance(value, Mapping):
        return {}
    return {str(k): _text(v) for k, v in value.items()}


# --- violations and notEvaluated -------------------------------------------------------


def violation_to_json(violation: Violation) -> JSON:
    entry: JSON = {
        "index": violation.index,
        "metric": violation.metric,
        "cause": str(violation.cause),
        "kind": str(violation.kind),
    }
    reason = _reason(violation.reason)
    if reason:
        entry["reason"] = reason
    return entry


def violation_from_json(entry: Mapping[str, Any]) -> Violation:
    """A kind or cause this version does not know reads as unjudged evidence
    (``NotReported``/``Evidence``): never as a hardware verdict."""
    try:
        kind = ViolationKind(str(entry.get("kind")))
    except ValueError:
        kind = ViolationKind.NOT_REPORTED
    try:
        cause = Cause(str(entry.get("cause")))
    except ValueError:
        cause = Cause.EVIDENCE
    return Violation(
        index=int_or_default(entry.get("index"), 0),
        metric=_text(entry.get("metric")),
        kind=kind,
        cause=cause,
        reason=_text(entry.get("reason")),
    )


def not_evaluated_to_json(item: NotEvaluated) -> JSON:
    return {"metric": item.metric, "reason": _reason(item.reason)}


def not_evaluated_from_json(entry: Mapping[str, Any]) -> NotEvaluated:
    reason = entry.get("reason")
    return NotEvaluated(
        metric=_text(entry.get("metric")),
        reason=_text(reason) if reason is not None else NOT_EVALUATED_REASON,
    )


# --- attempts ------------------------------------------------------------------------


def attempt_to_json(record: AttemptRecord, *, deciding: bool = False) -> JSON:
    """One ``TestAttempt``; ``deciding`` leaves metrics and message to the result."""
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
    if record.pod_uid:
        entry["podUID"] = record.pod_uid
    if record.started_at:
        entry["startedAt"] = record.started_at
    if record.finished_at:
        entry["finishedAt"] = record.finished_at
    if deciding:
        entry[DECIDING] = True
    else:
        if record.metrics:
            entry["metrics"] = dict(sorted(record.metrics.items()))
        message = _message(record.message)
        if message:
            entry["message"] = message
    entry["provenance"] = str(record.provenance)
    return entry


def attempt_from_json(
    entry: Mapping[str, Any],
    *,
    result_metrics: Mapping[str, str] | None = None,
    result_message: str = "",
) -> AttemptRecord:
    """One attempt; a ``deciding`` attempt takes the result's metrics and message."""
    deciding = entry.get(DECIDING) is True
    metrics = entry.get("metrics")
    message = entry.get("message")
    return AttemptRecord(
        attempt=int_or_default(entry.get("attempt"), 1),
        trigger=trigger_from_json(entry.get("trigger")),
        phase=phase_from_json(entry.get("phase")),
        exit_code=int_or_default(entry.get("exitCode", 0), -1),
        message=_text(message) if message is not None or not deciding else result_message,
        metrics=(
            _metrics(metrics) if metrics is not None or not deciding else dict(result_metrics or {})
        ),
        node=_text(entry.get("node")),
        pod_name=_text(entry.get("podName")),
        pod_uid=_text(entry.get("podUID")),
        started_at=entry.get("startedAt"),
        finished_at=entry.get("finishedAt"),
        provenance=provenance_from_json(entry.get("provenance")),
    )


# --- results -------------------------------------------------------------------------


def _deciding_index(state: TestResultState) -> int | None:
    """The attempt whose metrics and message are the settled result's, if any."""
    if state.open or not state.attempts:
        return None
    last = state.attempts[-1]
    same = dict(last.metrics) == dict(state.metrics) and _message(last.message) == _message(
        state.message
    )
    if same and (last.metrics or last.message):
        return len(state.attempts) - 1
    return None


def result_to_json(state: TestResultState, *, base: Mapping[str, Any] | None = None) -> JSON:
    """``base`` (scope, nodes, timestamps, artifacts, axes: untouched) with every
    verdict-owned field replaced by ``state``'s, written together (D4)."""
    out: JSON = dict(base or {})
    out["name"] = state.name
    out["kind"] = state.kind
    out["phase"] = str(state.phase)
    out["repeatsRequired"] = state.repeats_required
    out["repeatsCompleted"] = state.repeats_completed
    out["errorRetries"] = state.error_retries
    deciding = _deciding_index(state)
    out["attempts"] = [
        attempt_to_json(record, deciding=index == deciding)
        for index, record in enumerate(state.attempts)
    ]
    out["provenance"] = str(state.provenance)
    if state.suspect:
        out["suspect"] = True
    else:
        out.pop("suspect", None)
    optional: tuple[tuple[str, Any], ...] = (
        ("message", _message(state.message)),
        ("metrics", dict(sorted(state.metrics.items()))),
        ("violations", [violation_to_json(v) for v in state.violations]),
        ("notEvaluated", [not_evaluated_to_json(n) for n in state.not_evaluated]),
        ("unmeasurable", sorted(state.unmeasurable)),
    )
    for key, value in optional:
        if value:
            out[key] = value
        else:
            out.pop(key, None)
    return out


def _list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list | tuple) else []


def result_from_json(
    result: Mapping[str, Any],
    *,
    required: bool,
    attempts: Iterable[Mapping[str, Any]] | None = None,
) -> TestResultState:
    """The verdict package's view of a result. ``attempts`` overrides the entries to
    decode (the operator leaves its in-flight attempt out)."""
    metrics = _metrics(result.get("metrics"))
    message = _text(result.get("message"))
    entries = _list(result.get("attempts")) if attempts is None else list(attempts)
    return TestResultState(
        name=_text(result.get("name")),
        kind=_text(result.get("kind")),
        required=required,
        phase=phase_from_json(result.get("phase")),
        repeats_required=int_or_default(result.get("repeatsRequired", 1), 1) or 1,
        repeats_completed=int_or_default(result.get("repeatsCompleted", 0), 0),
        error_retries=int_or_default(result.get("errorRetries", 0), 0),
        attempts=tuple(
            attempt_from_json(a, result_metrics=metrics, result_message=message)
            for a in entries
            if isinstance(a, Mapping)
        ),
        message=message,
        metrics=metrics,
        violations=tuple(
            violation_from_json(v)
            for v in _list(result.get("violations"))
            if isinstance(v, Mapping)
        ),
        not_evaluated=tuple(
            not_evaluated_from_json(n)
            for n in _list(result.get("notEvaluated"))
            if isinstance(n, Mapping)
        ),
        unmeasurable=tuple(str(n) for n in _list(result.get("unmeasurable"))),
        provenance=provenance_from_json(result.get("provenance")),
        suspect=bool(result.get("suspect")),
    )
