"""``glimmer schedule``: the view's ticks and its "what happens now" are the controller's
(J3-J5), rendered with an injected clock."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from click.testing import CliRunner

from glimmer.api import format_time
from glimmer.cli import main
from glimmer.cli.schedule import (
    describe,
    gather_all,
    gather_one,
    render_table,
    render_text,
    row,
)
from glimmer.controllers.kit.names import RUNS
from glimmer.controllers.schedule import SCHEDULES, ScheduleReconciler
from glimmer.controllers.schedule.history import SCHEDULE_LABEL, SCHEDULED_AT
from glimmer.engine import FakeClient, InformerFactory, Readers

UID = "uid-sweep"
NOW = datetime(2024, 3, 27, 9, 30, tzinfo=UTC)  # a Wednesday, days before Berlin's DST


def a_schedule(*, cursor: datetime | None = None, status: Any = None, **spec: Any) -> Any:
    return {
        "metadata": {"name": "sweep", "namespace": "lab", "uid": UID, "generation": 1,
                     "creationTimestamp": "2024-03-01T00:00:00Z"},
        "spec": {"profileRef": "acceptance", "target": {"nodeNames": ["n1"]}, **spec},
        "status": {"observedGeneration": 1, **(status or {}),
                   **({"lastScheduleTime": format_time(cursor)} if cursor else {})},
    }  # fmt: skip


def a_run(name: str, *, phase: str | None, uid: str = UID, at: str = "2024-03-24T02:00:00Z") -> Any:
    return {
        "metadata": {
            "name": name, "namespace": "lab", "labels": {SCHEDULE_LABEL: "sweep"},
            "annotations": {SCHEDULED_AT: at},
            "ownerReferences": [{"kind": "BurnInSchedule", "name": "sweep", "uid": uid,
                                 "controller": True}],
        },
        "status": {"phase": phase} if phase else {},
    }  # fmt: skip


def test_J3_the_view_shows_sunday_0300_berlin_across_the_clock_change() -> None:
    schedule = a_schedule(schedule="0 3 * * 0", timeZone="Europe/Berlin",
                          cursor=datetime(2024, 3, 24, 2, 0, tzinfo=UTC))  # fmt: skip
    report = describe(schedule, [], now=NOW, ticks=3)
    assert [t["at"] for t in report["nextTicks"]] == [
        "2024-03-31T01:00:00.000Z",  # 03:00 CEST, the clock change's own night
        "2024-04-07T01:00:00.000Z",
        "2024-04-14T01:00:00.000Z",
    ]
    assert report["nextTicks"][0]["local"] == "Sun 2024-03-31 03:00:00 CEST"
    text = render_text(report)
    assert "'0 3 * * 0' in Europe/Berlin" in text
    assert "2024-03-31T01:00:00.000Z  Sun 2024-03-31 03:00:00 CEST  (in 3d15h)" in text
    assert "now (2024-03-27T09:30:00.000Z): no tick is due" in text


def test_J3_an_invalid_expression_shows_the_condition_message_and_no_ticks() -> None:
    message = "spec.schedule 'TZ=UTC 0 3 * * *' carries a time-zone prefix; set spec.timeZone"
    condition = {"type": "ScheduleValid", "status": "False", "reason": "InvalidSchedule",
                 "message": message}  # fmt: skip
    schedule = a_schedule(schedule="TZ=UTC 0 3 * * *", status={"conditions": [condition]})
    report = describe(schedule, [], now=NOW, ticks=5)
    assert report["nextTicks"] == [] and report["dueNow"] is None
    assert "set spec.timeZone instead" in report["parseError"]
    text = render_text(report)
    assert f"ScheduleValid: False (InvalidSchedule) {message}" in text
    assert "no tick fires until it is fixed" in text and "next ticks:" not in text


def test_J4_the_view_says_when_the_deadline_skips_the_latest_missed_tick() -> None:
    cursor = datetime(2024, 3, 27, 7, 0, tzinfo=UTC)  # 08:00 and 09:00 are due at 09:30
    late = describe(a_schedule(schedule="0 * * * *", cursor=cursor, startingDeadlineSeconds=600),
                    [], now=NOW, ticks=1)  # fmt: skip
    assert late["deadlineSkipsNow"] is True
    assert "2 tick(s) are due, the latest 2024-03-27T09:00:00.000Z is 1800 s late" in late["dueNow"]
    assert late["nextTicks"][0]["at"] == "2024-03-27T10:00:00.000Z"
    inside = describe(a_schedule(schedule="0 * * * *", cursor=cursor, startingDeadlineSeconds=3600),
                      [], now=NOW, ticks=1)  # fmt: skip
    assert inside["deadlineSkipsNow"] is False
    assert inside["dueNow"] == (
        "tick 2024-03-27T09:00:00.000Z is due: the next pass fires it; "
        "1 earlier tick(s) counted missed"
    )
    assert "deadline skips a missed tick now: no" in render_text(inside)
    assert "deadline skips a missed tick now: yes" in render_text(late)


def test_J4_the_view_says_more_than_1000_due_ticks_jump_the_cursor() -> None:
    cursor = NOW - timedelta(days=2)  # 2,880 minutes
    report = describe(a_schedule(schedule="* * * * *", cursor=cursor), [], now=NOW, ticks=1)
    assert "(more than 1000): the cursor jumps to now and nothing fires" in report["dueNow"]
    assert report["nextTicks"][0]["at"] == "2024-03-27T09:31:00.000Z"


def test_J5_the_view_says_forbid_skips_while_an_owned_run_is_active() -> None:
    cursor = datetime(2024, 3, 27, 9, 0, tzinfo=UTC)
    schedule = a_schedule(schedule="@every 15m", cursor=cursor)
    runs = [a_run("sweep-old", phase="Running"), a_run("foreign", phase="Running", uid="other")]
    report = describe(schedule, runs, now=NOW, ticks=2)
    assert report["active"] == ["sweep-old"]  # J1: a run this schedule does not control is not
    assert report["dueNow"] == (
        "tick 2024-03-27T09:30:00.000Z is due but sweep-old is still active: skipped under Forbid "
        "and counted in missedSchedules"
    )
    allow = describe({**schedule, "spec": {**schedule["spec"], "concurrencyPolicy": "Allow"}},
                     runs, now=NOW, ticks=1)  # fmt: skip
    assert allow["dueNow"] == (
        "tick 2024-03-27T09:30:00.000Z is due: the next pass fires it; "
        "1 earlier tick(s) counted missed"
    )


def test_J5_every_ticks_continue_from_the_cursor_not_from_the_view() -> None:
    cursor = datetime(2024, 3, 27, 9, 0, tzinfo=UTC)
    report = describe(a_schedule(schedule="@every 1h", cursor=cursor), [], now=NOW, ticks=2)
    assert [t["at"] for t in report["nextTicks"]] == ["2024-03-27T10:00:00.000Z",
                                                      "2024-03-27T11:00:00.000Z"]  # fmt: skip


async def test_J5_every_next_schedule_time_is_the_tick_that_will_fire() -> None:
    """A pass between ``@every`` ticks (a run finished) keeps the cadence from the cursor:
    10:00 after a 09:00 tick, not an hour after the pass, which a deadline could miss."""
    fake = FakeClient()
    body = a_schedule(schedule="@every 1h")
    del body["status"]
    created = await fake.create(SCHEDULES, body, namespace="lab")
    created["status"] = {"lastScheduleTime": "2024-03-27T09:00:00Z"}
    await fake.replace(SCHEDULES, created, namespace="lab", subresource="status")
    reconciler = ScheduleReconciler(
        client=fake, readers=Readers.over(fake, InformerFactory(fake)), schedules=SCHEDULES,
        operator_namespace="glimmer-system", now=lambda: NOW,
    )  # fmt: skip
    result = await reconciler.reconcile("lab/sweep")
    stored = await fake.get(SCHEDULES, "sweep", namespace="lab")
    assert stored["status"]["nextScheduleTime"] == "2024-03-27T10:00:00.000Z"
    assert result.requeue_after == 30 * 60
    view = describe(stored, [], now=NOW, ticks=1)
    assert view["nextTicks"][0]["at"] == stored["status"]["nextScheduleTime"]


def test_J4_a_suspended_schedule_shows_no_ticks_and_what_resuming_would_do() -> None:
    cursor = datetime(2024, 3, 27, 8, 0, tzinfo=UTC)
    report = describe(a_schedule(schedule="0 * * * *", cursor=cursor, suspend=True), [],
                      now=NOW, ticks=3)  # fmt: skip
    assert report["nextTicks"] == []
    text = render_text(report)
    assert "if resumed now: tick 2024-03-27T09:00:00.000Z is due: the next pass fires it" in text
    assert "none while suspended" in text


def test_the_view_lists_recent_runs_newest_first_and_notes_a_stale_status() -> None:
    runs = [a_run("sweep-a", phase="Failed", at="2024-03-10T02:00:00Z"),
            a_run("sweep-b", phase=None, at="2024-03-24T02:00:00Z")]  # fmt: skip
    schedule = a_schedule(schedule="0 3 * * 0", timeZone="Europe/Berlin")
    schedule["metadata"]["generation"] = 2
    report = describe(schedule, runs, now=NOW, ticks=1)
    assert [(r["name"], r["phase"]) for r in report["recentRuns"]] == [
        ("sweep-b", "Pending"), ("sweep-a", "Failed")]  # fmt: skip
    assert "the controller has not caught up" in render_text(report)


async def test_the_listing_has_one_row_per_schedule_with_its_next_tick() -> None:
    fake = FakeClient()
    for name, spec in (("weekly", {"schedule": "0 3 * * 0", "timeZone": "Europe/Berlin"}),
                       ("broken", {"schedule": "61 * * * *"})):  # fmt: skip
        made = await fake.create(SCHEDULES, {"metadata": {"name": name, "namespace": "lab"},
                                             "spec": {"profileRef": "p", "target": {}, **spec}},
                                 namespace="lab")  # fmt: skip
        made["status"] = {"lastScheduleTime": "2024-03-24T02:00:00Z"}  # the fake's creation is now
        await fake.replace(SCHEDULES, made, namespace="lab", subresource="status")
    rows = await gather_all(fake, namespace="lab", now=NOW)
    assert [(r["name"], r["valid"], r["nextTick"]) for r in rows] == [
        ("broken", "False", None), ("weekly", "Unknown", "2024-03-31T01:00:00.000Z")]  # fmt: skip
    table = render_table(rows, namespaces=False).splitlines()
    assert table[0].split() == ["NAME", "SCHEDULE", "TIMEZONE", "SUSPEND", "VALID", "ACTIVE",
                                "LAST", "SCHEDULE", "NEXT", "TICK"]  # fmt: skip
    assert table[2].startswith("weekly") and table[2].endswith("2024-03-31T01:00:00.000Z")
    assert "<none>" in table[1]


async def test_gather_reads_only_the_schedules_labelled_runs_and_refuses_a_missing_one() -> None:
    fake = FakeClient()
    created = await fake.create(SCHEDULES, a_schedule(schedule="@daily"), namespace="lab")
    await fake.create(RUNS, a_run("sweep-1", phase="Running", uid=created["metadata"]["uid"]),
                      namespace="lab")  # fmt: skip
    report = await gather_one(fake, name="sweep", namespace="lab", now=NOW, ticks=1)
    assert report["active"] == ["sweep-1"]
    try:
        await gather_one(fake, name="ghost", namespace="lab", now=NOW, ticks=1)
    except LookupError as err:
        assert "'ghost' not found in namespace 'lab'" in str(err)
        assert "glimmer schedule -n lab" in str(err)
    else:
        raise AssertionError("a missing schedule was not refused")


def test_the_command_is_registered_and_refuses_bad_input_with_exit_2() -> None:
    runner = CliRunner()
    assert "schedule" in runner.invoke(main, ["--help"]).output
    both = runner.invoke(main, ["schedule", "sweep", "-A"])
    assert both.exit_code == 2 and "exclude each other" in both.output
    many = runner.invoke(main, ["schedule", "sweep", "--ticks", "0"])
    assert many.exit_code == 2 and "--ticks" in many.output


def test_the_command_exits_3_with_one_line_when_the_cluster_is_unreachable() -> None:
    result = CliRunner().invoke(main, ["schedule", "sweep", "--kubeconfig", "/nonexistent/kc"])
    assert result.exit_code == 3
    assert result.output.count("\n") == 1 and "glimmer: error:" in result.output


def test_J6_a_nodejoined_schedule_shows_its_taint_and_batch_not_an_invalid_expression() -> None:
    qualification = {
        "batch": 2, "phase": "Judged", "runName": "qualify-abcde-q2", "nodes": ["n1", "n2"],
        "outcomes": [{"node": "n1", "outcome": "Untainted", "reason": "Qualified"},
                     {"node": "n2", "outcome": "Kept", "reason": "Failed"}],
    }  # fmt: skip
    schedule = a_schedule(
        trigger={"nodeJoined": {"taint": {"key": "burnin.glimmer.ai/unqualified",
                                          "effect": "NoSchedule"}}},
        status={"qualification": qualification},
    )  # fmt: skip
    report = describe(schedule, [], now=NOW, ticks=3)
    assert report["parseError"] is None and report["nextTicks"] == []
    text = render_text(report)
    assert "trigger:      nodeJoined burnin.glimmer.ai/unqualified:NoSchedule" in text
    assert "batch:        2 Judged run qualify-abcde-q2: n1, n2" in text
    assert "  n2  Kept  Failed" in text and "invalid" not in text
    table = render_table([row(schedule, now=NOW)], namespaces=False)
    assert "nodeJoined burnin.glimmer.ai/unqualified:NoSchedule" in table
