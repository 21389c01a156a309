"""BurnInSchedules (J1-J5): runs created on a cron schedule, in the schedule's zone.

Public: the registration, the reconciler (time injectable) and the expression parser.
"""

from glimmer.controllers.kit.names import SCHEDULES
from glimmer.controllers.schedule.cron import Schedule, ScheduleError, parse_schedule
from glimmer.controllers.schedule.reconciler import (
    SCHEDULE_VALID,
    ScheduleReconciler,
    run_body,
    schedule_cursor,
    starting_deadline,
)
from glimmer.controllers.schedule.setup import SCHEDULE_CONTROLLER, schedule_controller
from glimmer.controllers.schedule.ticks import (
    MAX_TICKS,
    TickPlan,
    plan_ticks,
    under_policy,
    upcoming_ticks,
)

__all__ = [
    "MAX_TICKS",
    "SCHEDULES",
    "SCHEDULE_CONTROLLER",
    "SCHEDULE_VALID",
    "Schedule",
    "ScheduleError",
    "ScheduleReconciler",
    "TickPlan",
    "parse_schedule",
    "plan_ticks",
    "run_body",
    "schedule_controller",
    "schedule_cursor",
    "starting_deadline",
    "under_policy",
    "upcoming_ticks",
]
