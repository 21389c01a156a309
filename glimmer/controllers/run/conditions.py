"""Run conditions (api 4.6) written on the status as plain JSON."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Final

from glimmer.api import format_time

JSON = dict[str, Any]
CONDITION_MESSAGE_BYTES: Final = 1024


def clamp(text: str, limit: int = CONDITION_MESSAGE_BYTES) -> str:
    data = text.encode()
    return text if len(data) <= limit else data[:limit].decode(errors="ignore")


def set_condition(
    status: JSON, *, type_: str, status_: str, reason: str, message: str, now: datetime,
    generation: int | None = None,
) -> None:  # fmt: skip
    """Upsert a metav1.Condition, keeping lastTransitionTime unless the status changed."""
    conditions = [dict(c) for c in status.get("conditions") or []]
    for condition in conditions:
        if condition.get("type") == type_:
            if condition.get("status") != status_:
                condition["lastTransitionTime"] = format_time(now)
            condition.update(status=status_, reason=reason, message=clamp(message))
            if generation is not None:
                condition["observedGeneration"] = generation
            break
    else:
        entry: JSON = {
            "type": type_,
            "status": status_,
            "reason": reason,
            "message": clamp(message),
            "lastTransitionTime": format_time(now),
        }
        if generation is not None:
            entry["observedGeneration"] = generation
        conditions.append(entry)
    status["conditions"] = conditions
