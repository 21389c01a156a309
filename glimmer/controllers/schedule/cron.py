"""Schedule expressions (J3): standard 5-field cron, ``@descriptor`` and ``@every``,
evaluated in the schedule's ``timeZone``.

A ``TZ=``/``CRON_TZ=`` prefix is refused, not honoured: the zone has one place
(``spec.timeZone``), so a sweep cannot silently move out of its maintenance window
because someone wrote the zone twice and the two disagree.

Cron fields go to croniter (a kept library), restricted to exactly five fields and no
croniter extensions that change what a standard expression means (hashed ``H`` or
random ``R`` values). A local time that occurs twice (the autumn clock change) fires
once: firing a fleet sweep twice in one night is worse than a shifted tick.

``@every <duration>`` uses Go duration syntax (``168h``, ``1h30m``); ticks are whole
seconds, one interval after the previous tick (robfig/cron's constant delay). An
interval under one second is refused rather than rounded up.

croniter is imported where a cron expression is read or stepped: a manager with no
BurnInSchedule never loads it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Final, Protocol
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

_DESCRIPTORS: Final = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
_DURATION_PART: Final = re.compile(r"([0-9]*(?:\.[0-9]*)?)(ns|us|µs|μs|ms|s|m|h)")
_UNIT_SECONDS: Final = {
    "ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0,
    "h": 3600.0,
}  # fmt: skip
_FIELD: Final = re.compile(r"[0-9A-Za-z*/,?#-]+")


class ScheduleError(ValueError):
    """The expression or zone cannot be used; the message says why (for the condition)."""


class Schedule(Protocol):
    """The ticks of one schedule; times are aware, returned in UTC."""

    def next_after(self, moment: datetime) -> datetime:
        """The first tick strictly after ``moment``."""
        ...


@dataclass(frozen=True, slots=True)
class EverySchedule:
    interval: timedelta

    def next_after(self, moment: datetime) -> datetime:
        return moment.astimezone(UTC).replace(microsecond=0) + self.interval


@dataclass(frozen=True, slots=True)
class CronSchedule:
    expression: str
    zone: ZoneInfo

    def next_after(self, moment: datetime) -> datetime:
        from croniter import croniter

        local = moment.astimezone(self.zone)
        iterator = croniter(self.expression, local)
        tick: datetime = iterator.get_next(datetime)
        # A wall time the autumn change repeats fires once, at its first occurrence.
        while _repeated(tick, self.zone):
            tick = iterator.get_next(datetime)
        return tick.astimezone(UTC)


def _repeated(tick: datetime, zone: ZoneInfo) -> bool:
    """Whether ``tick``'s wall time is the second occurrence of an ambiguous local time."""
    naive = tick.replace(tzinfo=None)
    early = naive.replace(fold=0, tzinfo=zone)
    late = naive.replace(fold=1, tzinfo=zone)
    return early.utcoffset() != late.utcoffset() and tick.utcoffset() == late.utcoffset()


def parse_duration(text: str) -> timedelta:
    """A Go duration (``1h30m``, ``168h``, ``90s``); sign and zero are refused."""
    if not text or text[0] in "+-":
        raise ScheduleError(f"@every needs a positive duration such as 168h, not {text!r}")
    position, total = 0, 0.0
    while position < len(text):
        match = _DURATION_PART.match(text, position)
        if match is None or match.group(1) in ("", "."):
            raise ScheduleError(f"@every duration {text!r} is not a Go duration (e.g. 1h30m)")
        total += float(match.group(1)) * _UNIT_SECONDS[match.group(2)]
        position = match.end()
    whole = int(total)
    if whole < 1:
        raise ScheduleError(f"@every interval {text!r} is under one second")
    return timedelta(seconds=whole)


def load_zone(name: str | None) -> ZoneInfo:
    if not name:
        return ZoneInfo("UTC")
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError) as err:
        raise ScheduleError(
            f"unknown timeZone {name!r}: use an IANA name such as Europe/Berlin"
        ) from err


def parse_schedule(expression: str | None, time_zone: str | None) -> Schedule:
    """J3: trim, refuse empty and zone prefixes, load the zone, parse; or ScheduleError."""
    text = (expression or "").strip()
    if not text:
        raise ScheduleError("spec.schedule is empty")
    upper = text.upper()
    if upper.startswith(("TZ=", "CRON_TZ=")):
        raise ScheduleError(
            f"spec.schedule {text!r} carries a time-zone prefix; set spec.timeZone instead"
        )
    zone = load_zone(time_zone)
    if text.startswith("@every"):
        rest = text[len("@every") :]
        if not rest[:1].isspace():
            raise ScheduleError(f"unknown descriptor {text!r}")
        return EverySchedule(interval=parse_duration(rest.strip()))
    if text.startswith("@"):
        standard = _DESCRIPTORS.get(text.lower())
        if standard is None:
            raise ScheduleError(
                f"unknown descriptor {text!r}: use one of {', '.join(sorted(_DESCRIPTORS))} "
                "or @every <duration>"
            )
        return CronSchedule(expression=standard, zone=zone)
    fields = text.split()
    if len(fields) != 5:
        raise ScheduleError(
            f"spec.schedule {text!r} has {len(fields)} fields; a standard cron expression "
            "has 5 (minute hour day-of-month month day-of-week)"
        )
    for part in fields:
        if _FIELD.fullmatch(part) is None or re.search(r"(?<![A-Za-z])[HR](?![A-Za-z])", part):
            raise ScheduleError(f"cron field {part!r} is not standard cron syntax")
    joined = " ".join(fields)
    from croniter import croniter

    if not croniter.is_valid(joined):
        raise ScheduleError(f"spec.schedule {text!r} is not a valid cron expression")
    schedule = CronSchedule(expression=joined, zone=zone)
    try:
        schedule.next_after(datetime.now(UTC))
    except Exception as err:  # croniter raises several types for expressions that never fire
        raise ScheduleError(f"spec.schedule {text!r} never fires: {err}") from err
    return schedule
