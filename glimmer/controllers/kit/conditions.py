"""metav1.Condition updates on status JSON, through ``glimmer.api.set_condition``.

The reconcilers keep status as JSON (what they read is what they write back); the
transition-time rule and the message clamp stay in one place, the API package's
``set_condition``. This is its one adapter: a condition list in, a condition list out
(:func:`set_json_condition`), or a status upserted in place (:func:`upsert_condition`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from glimmer.api import KubeCondition, from_json, set_condition, to_json

JSON = dict[str, Any]


def set_json_condition(
    conditions: Iterable[Mapping[str, Any]] | None,
    *,
    type_: str,
    status: str,
    reason: str,
    message: str,
    now: datetime,
    generation: int | None = None,
    keep_message: bool = False,
) -> list[JSON]:
    """``conditions`` with ``type_`` set; unreadable entries are dropped, not kept.

    ``keep_message``: an existing condition with the same status and reason keeps its
    message (a past drift's "what changed" outlives the pass that saw it).
    """
    typed: list[KubeCondition] = []
    for entry in conditions or ():
        try:
            typed.append(from_json(entry, KubeCondition))
        except Exception:  # a malformed entry must not wedge the object; it is rewritten
            continue
    if keep_message:
        for existing in typed:
            if existing.type == type_ and existing.status == status and existing.reason == reason:
                message = existing.message or message
    updated = set_condition(
        typed,
        type_=type_,
        status=status,
        reason=reason,
        message=message,
        now=now,
        observed_generation=generation,
    )
    return [to_json(c) for c in updated]


def upsert_condition(
    status: JSON,
    *,
    type_: str,
    status_: str,
    reason: str,
    message: str,
    now: datetime,
    generation: int | None = None,
) -> None:
    """Upsert condition ``type_`` in ``status["conditions"]`` (in place)."""
    status["conditions"] = set_json_condition(
        status.get("conditions"),
        type_=type_,
        status=status_,
        reason=reason,
        message=message,
        now=now,
        generation=generation,
    )
