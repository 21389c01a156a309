"""metav1.Condition bookkeeping with the upstream meta.SetStatusCondition semantics.

``lastTransitionTime`` records when the *status* last flipped, so it moves only when
the status changes; a new reason, message or observedGeneration is an update, not a
transition. Readers use it to tell "has been Drifted since Monday" from "was
re-confirmed a second ago".
"""

from __future__ import annotations

from datetime import datetime
from typing import Final

import attrs

from glimmer.api.core import KubeCondition
from glimmer.api.vocabulary import ConditionStatus

__all__ = [
    "MAX_CONDITION_MESSAGE_BYTES",
    "clamp_message",
    "find_condition",
    "is_condition_true",
    "set_condition",
]

#: Condition messages are clamped to this many UTF-8 bytes (api §4.6).
MAX_CONDITION_MESSAGE_BYTES: Final = 1024


def clamp_message(message: str, *, limit: int = MAX_CONDITION_MESSAGE_BYTES) -> str:
    """Cut ``message`` to at most ``limit`` UTF-8 bytes without splitting a character."""
    encoded = message.encode("utf-8")
    if len(encoded) <= limit:
        return message
    return encoded[:limit].decode("utf-8", errors="ignore")


def find_condition(conditions: list[KubeCondition] | None, type_: str) -> KubeCondition | None:
    """The condition of ``type_``, if present."""
    for condition in conditions or ():
        if condition.type == type_:
            return condition
    return None


def is_condition_true(conditions: list[KubeCondition] | None, type_: str) -> bool:
    """Whether ``type_`` is present with status True (absent or Unknown reads as not true)."""
    condition = find_condition(conditions, type_)
    return condition is not None and condition.status == ConditionStatus.TRUE


def set_condition(
    conditions: list[KubeCondition] | None,
    *,
    type_: str,
    status: str,
    reason: str,
    message: str,
    now: datetime,
    observed_generation: int | None = None,
) -> list[KubeCondition]:
    """Return ``conditions`` with ``type_`` set, keeping every other condition in place.

    The input list is not modified. ``lastTransitionTime`` becomes ``now`` only for a
    new condition or a changed status; otherwise the earlier transition time stays.
    """
    if status not in {s.value for s in ConditionStatus}:
        raise ValueError(f"condition status must be True, False or Unknown, not {status!r}")
    message = clamp_message(message)
    result: list[KubeCondition] = []
    found = False
    for existing in conditions or ():
        if existing.type != type_:
            result.append(existing)
            continue
        found = True
        transition = existing.last_transition_time if existing.status == status else now
        result.append(
            attrs.evolve(
                existing,
                status=status,
                reason=reason,
                message=message,
                observed_generation=observed_generation,
                last_transition_time=transition,
            )
        )
    if not found:
        result.append(
            KubeCondition(
                type=type_,
                status=status,
                reason=reason,
                message=message,
                observed_generation=observed_generation,
                last_transition_time=now,
            )
        )
    return result
