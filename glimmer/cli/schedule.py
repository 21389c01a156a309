"""``glimmer schedule [NAME]``: when a BurnInSchedule fires next, and what it does now.

With NAME: the schedule as parsed (expression, ``timeZone``, ``suspend``,
``concurrencyPolicy``, ``startingDeadlineSeconds``), the ``ScheduleValid`` condition,
the cursor (``lastScheduleTime``) and ``status.nextScheduleTime``, the next ``--ticks``
instants in UTC and in the schedule's zone, what the controller's next pass would do
about time right now (fire, skip under Forbid, miss past the deadline, jump after more
than 1000 ticks), and its active and recent runs. Without NAME: one row per schedule,
like ``kubectl get``.

Every instant comes from the controller's own code (``parse_schedule``,
``plan_ticks``, ``under_policy``, ``upcoming_ticks``), never a second reading of cron:
a view that disagreed with the controller would be worse than none. An expression that
does not parse shows the error and no ticks.

``-n`` defaults to the kubeconfig's current context's namespace, as kubectl's does
(:mod:`glimmer.cli.kubecontext`). Read-only. Exit status (:mod:`glimmer.cli.exits`): 0
shown; 2 the schedule does not exist or the input was refused; 3 the cluster could not
be read.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any, Final

import click

from glimmer.api import format_time
from glimmer.cli._common import OUTPUT_FORMAT, fail, no_traceback
from glimmer.cli.exits import ERROR
from glimmer.cli.kubecontext import NAMESPACE_HELP, namespace_for
from glimmer.controllers.kit.names import RUNS
from glimmer.controllers.schedule import (
    SCHEDULE_VALID,
    SCHEDULES,
    Schedule,
    ScheduleError,
    TickPlan,
    parse_schedule,
    plan_ticks,
    schedule_cursor,
    starting_deadline,
    under_policy,
    upcoming_ticks,
)
from glimmer.controllers.schedule.cron import load_zone
from glimmer.controllers.schedule.history import (
    SCHEDULE_LABEL,
    SCHEDULED_AT,
    is_active,
    newest_first,
    owned_by,
    phase_of,
)
from glimmer.engine import ApiError, KubeClient, is_not_found
from glimmer.plan import label_value

JSON = dict[str, Any]
INTERNAL_ERROR: Final = ERROR
RECENT_RUNS: Final = 10
MAX_TICKS_SHOWN: Final = 100


def _condition(status: Mapping[str, Any], type_: str) -> JSON | None:
    for condition in status.get("conditions") or ():
        if isinstance(condition, Mapping) and condition.get("type") == type_:
            return {k: condition.get(k) for k in ("status", "reason", "message")}
    return None


def _parsed(spec: Mapping[str, Any]) -> tuple[Schedule | None, str | None]:
    if _trigger(spec) is not None:
        return None, None  # a nodeJoined trigger has no ticks (docs/qualify.md)
    try:
        return parse_schedule(spec.get("schedule"), spec.get("timeZone")), None
    except ScheduleError as err:
        return None, str(err)


def _trigger(spec: Mapping[str, Any]) -> str | None:
    """``nodeJoined <taint>`` for a schedule with ``trigger.nodeJoined``, else None."""
    trigger = spec.get("trigger")
    joined = trigger.get("nodeJoined") if isinstance(trigger, Mapping) else None
    if not isinstance(joined, Mapping):
        return None
    found = joined.get("taint")
    taint: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    value = f"={taint.get('value')}" if taint.get("value") else ""
    return f"nodeJoined {taint.get('key')}{value}:{taint.get('effect')}"


def _local(moment: datetime, time_zone: str | None) -> str:
    """``moment`` in the schedule's zone (UTC when the zone itself is unusable)."""
    try:
        zone = load_zone(time_zone)
    except ScheduleError:
        return ""
    return moment.astimezone(zone).strftime("%a %Y-%m-%d %H:%M:%S %Z")


def _in(delta: timedelta) -> str:
    seconds = int(delta.total_seconds())
    if seconds < 0:
        return f"{_span(-seconds)} ago"
    return f"in {_span(seconds)}"


def _span(seconds: int) -> str:
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    parts = [(days, "d"), (hours, "h"), (minutes, "m"), (secs, "s")]
    shown = [f"{n}{unit}" for n, unit in parts if n][:2]
    return "".join(shown) or "0s"


def _now_says(
    plan: TickPlan, *, deadline: int | None, now: datetime, active: Sequence[str]
) -> tuple[str, bool]:
    """What the next pass does about time, in words, and whether the deadline skips."""
    if plan.jumped:
        return (
            f"{plan.missed} ticks are due since the cursor (more than 1000): the cursor "
            "jumps to now and nothing fires",
            False,
        )
    if plan.forbidden and plan.cursor is not None:
        return (
            f"tick {format_time(plan.cursor)} is due but {', '.join(active)} is still "
            "active: skipped under Forbid and counted in missedSchedules",
            False,
        )
    if plan.fire is not None:
        earlier = f"; {plan.missed} earlier tick(s) counted missed" if plan.missed else ""
        return f"tick {format_time(plan.fire)} is due: the next pass fires it{earlier}", False
    if plan.missed and plan.cursor is not None:
        late = int((now - plan.cursor).total_seconds())
        return (
            f"{plan.missed} tick(s) are due, the latest {format_time(plan.cursor)} is {late} s "
            f"late, past startingDeadlineSeconds={deadline}: skipped, counted missed, "
            "nothing fires",
            True,
        )
    return "no tick is due", False


def describe(
    schedule: Mapping[str, Any],
    runs: Sequence[Mapping[str, Any]],
    *,
    now: datetime,
    ticks: int,
) -> JSON:
    """The report of one schedule at ``now``; ``runs``: runs labelled for it (any owner)."""
    meta = schedule.get("metadata") or {}
    spec = schedule.get("spec") or {}
    status = schedule.get("status") or {}
    time_zone = spec.get("timeZone") or None
    policy = spec.get("concurrencyPolicy") or "Forbid"
    deadline = starting_deadline(spec)
    owned = newest_first(r for r in runs if owned_by(r, str(meta.get("uid") or "")))
    active = [str((r.get("metadata") or {}).get("name")) for r in owned if is_active(r)]
    parsed, error = _parsed(spec)
    report: JSON = {
        "namespace": meta.get("namespace"),
        "name": meta.get("name"),
        "schedule": spec.get("schedule"),
        "trigger": _trigger(spec),
        "qualification": status.get("qualification"),
        "qualified": _condition(status, "Qualified"),
        "timeZone": time_zone or "UTC",
        "suspend": spec.get("suspend") is True,
        "concurrencyPolicy": policy,
        "startingDeadlineSeconds": deadline,
        "valid": _condition(status, SCHEDULE_VALID),
        "parseError": error,
        "generation": meta.get("generation"),
        "observedGeneration": status.get("observedGeneration"),
        "lastScheduleTime": status.get("lastScheduleTime"),
        "nextScheduleTime": status.get("nextScheduleTime"),
        "missedSchedules": status.get("missedSchedules") or 0,
        "now": format_time(now),
        "nextTicks": [],
        "dueNow": None,
        "deadlineSkipsNow": False,
        "active": active,
        "recentRuns": [
            {
                "name": (r.get("metadata") or {}).get("name"),
                "phase": phase_of(r) or "Pending",
                "scheduledAt": ((r.get("metadata") or {}).get("annotations") or {}).get(
                    SCHEDULED_AT
                ),
                "finishedAt": (r.get("status") or {}).get("finishedAt"),
            }
            for r in owned[:RECENT_RUNS]
        ],
    }
    if parsed is None:
        return report
    cursor = schedule_cursor(schedule, now=now)
    plan = under_policy(
        plan_ticks(parsed, since=cursor, now=now, starting_deadline_seconds=deadline),
        concurrency_policy=policy,
        active=bool(active),
    )
    says, skips = _now_says(plan, deadline=deadline, now=now, active=active)
    report["dueNow"] = says
    report["deadlineSkipsNow"] = skips
    if not report["suspend"]:
        report["nextTicks"] = [
            {"at": format_time(t), "local": _local(t, time_zone), "in": _in(t - now)}
            for t in upcoming_ticks(parsed, plan=plan, cursor=cursor, count=ticks)
        ]
    return report


def render_text(report: Mapping[str, Any]) -> str:
    valid = report["valid"]
    deadline = report["startingDeadlineSeconds"]
    if report.get("trigger"):
        return _render_trigger(report)
    lines = [
        f"schedule:     {report['namespace']}/{report['name']}",
        f"expression:   {report['schedule']!r} in {report['timeZone']}",
        f"suspend:      {str(report['suspend']).lower()}",
        f"concurrency:  {report['concurrencyPolicy']}",
        "deadline:     "
        + (
            f"startingDeadlineSeconds={deadline} (a tick more than {deadline} s late is "
            "missed, not run)"
            if deadline is not None
            else "none (a late tick still fires, only the latest)"
        ),
        f"{SCHEDULE_VALID}: "
        + (
            f"{valid['status']} ({valid['reason']}) {valid['message'] or ''}".rstrip()
            if valid
            else "(not reported yet)"
        ),
    ]
    if report["observedGeneration"] != report["generation"]:
        lines.append(
            f"status is for generation {report['observedGeneration']}, the spec is "
            f"generation {report['generation']}: the controller has not caught up"
        )
    if report["parseError"]:
        lines.append(f"invalid:      {report['parseError']}; no tick fires until it is fixed")
    lines += [
        f"last tick:    {report['lastScheduleTime'] or '-'} (the cursor)",
        f"next (status): {report['nextScheduleTime'] or '-'}",
        f"missed:       {report['missedSchedules']}",
    ]
    if report["dueNow"] is not None:
        prefix = "if resumed now: " if report["suspend"] else ""
        lines.append(f"now ({report['now']}): {prefix}{report['dueNow']}")
        lines.append(
            "deadline skips a missed tick now: " + ("yes" if report["deadlineSkipsNow"] else "no")
        )
    if report["suspend"]:
        lines.append("next ticks:   none while suspended (the cursor does not move)")
    elif report["nextTicks"]:
        lines.append("next ticks:")
        lines.extend(f"  {t['at']}  {t['local']}  ({t['in']})" for t in report["nextTicks"])
    active = report["active"]
    lines.append(f"active:       {', '.join(active) if active else 'none'}")
    if report["recentRuns"]:
        lines.append("recent runs (newest first):")
        lines.extend(
            f"  {r['name']}  {r['phase']}  scheduled {r['scheduledAt'] or '-'}  "
            f"finished {r['finishedAt'] or '-'}"
            for r in report["recentRuns"]
        )
    return "\n".join(lines)


def _render_trigger(report: Mapping[str, Any]) -> str:
    """A nodeJoined schedule: its taint, the open or newest batch and each node's fate."""
    valid, qualified = report["valid"], report["qualified"]
    qual = report.get("qualification") or {}
    lines = [
        f"schedule:     {report['namespace']}/{report['name']}",
        f"trigger:      {report['trigger']} (docs/qualify.md)",
        f"suspend:      {str(report['suspend']).lower()}",
        f"{SCHEDULE_VALID}: "
        + (f"{valid['status']} ({valid['reason']})" if valid else "(not reported yet)"),
        "Qualified:    "
        + (
            f"{qualified['status']} ({qualified['reason']}) {qualified['message'] or ''}".rstrip()
            if qualified
            else "(no batch yet)"
        ),
    ]
    if qual.get("batch"):
        nodes = ", ".join(str(n) for n in qual.get("nodes") or ())
        lines.append(
            f"batch:        {qual['batch']} {qual.get('phase')} run {qual.get('runName')}: {nodes}"
        )
    if qual.get("windowOpenedAt"):
        lines.append(f"window:       opened {qual['windowOpenedAt']} (nodes waiting)")
    for outcome in qual.get("outcomes") or ():
        lines.append(f"  {outcome.get('node')}  {outcome.get('outcome')}  {outcome.get('reason')}")
    return "\n".join(lines)


def row(schedule: Mapping[str, Any], *, now: datetime) -> JSON:
    """One schedule's line of the listing (its runs are not read: Forbid is not judged)."""
    report = describe(schedule, (), now=now, ticks=1)
    valid = report["valid"]
    return {
        "namespace": report["namespace"],
        "name": report["name"],
        "schedule": report["trigger"] or report["schedule"],
        "timeZone": report["timeZone"],
        "suspend": report["suspend"],
        "valid": "False" if report["parseError"] else (valid or {}).get("status", "Unknown"),
        "active": len((schedule.get("status") or {}).get("active") or ()),
        "lastScheduleTime": report["lastScheduleTime"],
        "nextTick": report["nextTicks"][0]["at"] if report["nextTicks"] else None,
    }


def render_table(rows: Sequence[Mapping[str, Any]], *, namespaces: bool) -> str:
    head = ["NAME", "SCHEDULE", "TIMEZONE", "SUSPEND", "VALID", "ACTIVE", "LAST SCHEDULE",
            "NEXT TICK"]  # fmt: skip
    if namespaces:
        head.insert(0, "NAMESPACE")
    cells = []
    for r in rows:
        line = [str(r["name"]), str(r["schedule"]), str(r["timeZone"]), str(r["suspend"]).lower(),
                str(r["valid"]), str(r["active"]), r["lastScheduleTime"] or "<none>",
                r["nextTick"] or "<none>"]  # fmt: skip
        if namespaces:
            line.insert(0, str(r["namespace"]))
        cells.append(line)
    widths = [max(len(c[i]) for c in [head, *cells]) for i in range(len(head))]
    return "\n".join(
        "   ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip()
        for line in [head, *cells]
    )


async def gather_one(
    client: KubeClient, *, name: str, namespace: str, now: datetime, ticks: int
) -> JSON:
    """Read the schedule and its runs (live) and describe them; LookupError if absent."""
    try:
        found = await client.get(SCHEDULES, name, namespace=namespace)
    except ApiError as err:
        if is_not_found(err):
            raise LookupError(
                f"burninschedule {name!r} not found in namespace {namespace!r} "
                f"(list them: glimmer schedule -n {namespace}, or -A for every namespace)"
            ) from err
        raise
    listed = await client.list(
        RUNS, namespace=namespace, label_selector=f"{SCHEDULE_LABEL}={label_value(name)}"
    )
    return describe(found, listed.get("items") or [], now=now, ticks=ticks)


async def gather_all(client: KubeClient, *, namespace: str | None, now: datetime) -> list[JSON]:
    listed = await client.list(SCHEDULES, namespace=namespace)
    rows = [row(s, now=now) for s in listed.get("items") or []]
    return sorted(rows, key=lambda r: (str(r["namespace"]), str(r["name"])))


async def _run(
    *, name: str | None, namespace: str | None, kubeconfig: str | None, ticks: int
) -> JSON | list[JSON]:
    from glimmer.controllers.schedule.reconciler import now_utc
    from glimmer.engine import ApiServerClient

    client = await ApiServerClient.connect(kubeconfig)
    try:
        now = now_utc()
        if name is None:
            return await gather_all(client, namespace=namespace, now=now)
        assert namespace is not None
        return await gather_one(client, name=name, namespace=namespace, now=now, ticks=ticks)
    finally:
        await client.close()


@click.command()
@click.argument("name", required=False)
@click.option("-n", "--namespace", default=None, help=NAMESPACE_HELP)
@click.option("-A", "--all-namespaces", is_flag=True, help="List schedules in every namespace.")
@click.option(
    "--ticks", type=click.IntRange(1, MAX_TICKS_SHOWN), default=5, show_default=True,
    help="How many upcoming ticks to show.",
)  # fmt: skip
@click.option("--kubeconfig", default=None, help="Kubeconfig (default: $KUBECONFIG, in-cluster).")
@click.option("-o", "--output", "output", type=OUTPUT_FORMAT, default="text", show_default=True)
@no_traceback(code=INTERNAL_ERROR)
def schedule(
    *,
    name: str | None,
    namespace: str | None,
    all_namespaces: bool,
    ticks: int,
    kubeconfig: str | None,
    output: str,
) -> None:
    """Show a BurnInSchedule's next ticks and what it does now; without NAME, list them."""
    if name is not None and all_namespaces:
        fail("NAME and --all-namespaces (-A) exclude each other: name one schedule with -n")
    if not all_namespaces:
        namespace = namespace_for(namespace, kubeconfig=kubeconfig)
    try:
        result = asyncio.run(
            _run(
                name=name,
                namespace=None if all_namespaces else namespace,
                kubeconfig=kubeconfig,
                ticks=ticks,
            )
        )
    except LookupError as err:
        fail(str(err))
    if output == "json":
        click.echo(json.dumps(result, indent=2, sort_keys=True))
    elif isinstance(result, list):
        if not result:
            where = "any namespace" if all_namespaces else f"namespace {namespace!r}"
            click.echo(f"No BurnInSchedules found in {where}.", err=True)
        else:
            click.echo(render_table(result, namespaces=all_namespaces))
    else:
        click.echo(render_text(result))
