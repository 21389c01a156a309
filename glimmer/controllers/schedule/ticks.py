"""Which tick fires now, and which were missed (J4). Pure.

From the cursor (``lastScheduleTime``, else the schedule's creation) to now: ticks
older than ``startingDeadlineSeconds`` are missed; of the rest only the latest fires,
the earlier ones are missed too. More than :data:`MAX_TICKS` ticks is a controller back
from a long absence (or a clock jump): the cursor jumps to now and nothing fires, so a
full-power fleet sweep never starts at a random hour because the manager was down over
the weekend.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any, Final

from glimmer.controllers.schedule.cron import Schedule

MAX_TICKS: Final = 1000
MAX_MISSED: Final = 2**31 - 1  # missedSchedules is an int32 (saturating)


@dataclass(frozen=True, slots=True)
class TickPlan:
    """What this pass does about time."""

    fire: datetime | None
    """The tick to fire (the latest due tick inside the deadline), if any."""
    missed: int
    """Ticks passed over in this pass (not counting ``fire``)."""
    cursor: datetime | None
    """The new cursor (None: unchanged, no tick has passed)."""
    jumped: bool = False
    """More than MAX_TICKS ticks had passed: the cursor jumped to now, nothing fires."""
    forbidden: bool = False
    """J5 Forbid: the tick was due but a run of the schedule is active, so it is skipped."""


def plan_ticks(
    schedule: Schedule,
    *,
    since: datetime,
    now: datetime,
    starting_deadline_seconds: int | None,
) -> TickPlan:
    due: list[datetime] = []
    tick = schedule.next_after(since)
    while tick <= now:
        due.append(tick)
        if len(due) > MAX_TICKS:
            return TickPlan(fire=None, missed=len(due), cursor=now, jumped=True)
        tick = schedule.next_after(tick)
    if not due:
        return TickPlan(fire=None, missed=0, cursor=None)
    latest = due[-1]
    if starting_deadline_seconds is not None and latest < now - timedelta(
        seconds=starting_deadline_seconds
    ):
        return TickPlan(fire=None, missed=len(due), cursor=latest)
    return TickPlan(fire=latest, missed=len(due) - 1, cursor=latest)


def under_policy(plan: TickPlan, *, concurrency_policy: Any, active: bool) -> TickPlan:
    """J5 Forbid (the default): a due tick that finds an active run is skipped and counted;
    the cursor still moves to it."""
    if plan.fire is None or concurrency_policy == "Allow" or not active:
        return plan
    return replace(plan, fire=None, missed=plan.missed + 1, forbidden=True)


def upcoming_ticks(
    schedule: Schedule, *, plan: TickPlan, cursor: datetime, count: int
) -> list[datetime]:
    """The next ``count`` ticks after this pass, continuing from the cursor it leaves.

    From the cursor, not from the moment of the pass: ``@every 1h`` reconciled at 10:20
    (a run finished) still ticks at 11:00 when its last tick was 10:00, which is the
    tick :func:`plan_ticks` will fire. For cron expressions the two are the same.
    """
    ticks: list[datetime] = []
    tick = plan.cursor or cursor
    for _ in range(count):
        tick = schedule.next_after(tick)
        ticks.append(tick)
    return ticks


def saturating_add(count: int | None, more: int) -> int:
    return min(MAX_MISSED, max(0, count or 0) + max(0, more))
