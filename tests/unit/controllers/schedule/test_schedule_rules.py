"""BurnInSchedule rules J1-J5 against the in-memory apiserver, time injected."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from glimmer.api import format_time, parse_time
from glimmer.controllers.kit.names import FINGERPRINTS, RUNS
from glimmer.controllers.schedule import (
    SCHEDULES,
    ScheduleError,
    ScheduleReconciler,
    parse_schedule,
    plan_ticks,
)
from glimmer.controllers.schedule.history import SCHEDULED_AT
from glimmer.engine import NODES, FakeClient, InformerFactory, Readers

NS = "lab"


class Clock:
    def __init__(self, start: datetime) -> None:
        self.at = start

    def __call__(self) -> datetime:
        return self.at


async def make(
    fake: FakeClient, clock: Clock, *, cursor: datetime | None = None, **spec: Any
) -> tuple[ScheduleReconciler, str]:
    body = {
        "metadata": {"name": "sweep", "namespace": NS},
        "spec": {"profileRef": "acceptance", "target": {"nodeNames": ["n1"]}, **spec},
    }
    created = await fake.create(SCHEDULES, body, namespace=NS)
    if cursor is not None:
        created["status"] = {"lastScheduleTime": format_time(cursor)}
        await fake.replace(SCHEDULES, created, namespace=NS, subresource="status")
    reconciler = ScheduleReconciler(
        client=fake,
        readers=Readers.over(fake, InformerFactory(fake)),
        schedules=SCHEDULES,
        operator_namespace="glimmer-system",
        now=clock,
    )
    return reconciler, f"{NS}/sweep"


async def schedule(fake: FakeClient) -> dict[str, Any]:
    return await fake.get(SCHEDULES, "sweep", namespace=NS)


def runs(fake: FakeClient) -> list[dict[str, Any]]:
    return fake.objects(RUNS)


def ticks_fired(fake: FakeClient) -> list[str]:
    return sorted(r["metadata"]["annotations"][SCHEDULED_AT] for r in runs(fake))


async def finish(fake: FakeClient, run: dict[str, Any], phase: str, at: datetime) -> None:
    run = await fake.get(RUNS, run["metadata"]["name"], namespace=NS)
    run["status"] = {"phase": phase, "finishedAt": format_time(at)}
    await fake.replace(RUNS, run, namespace=NS, subresource="status")


T0 = datetime(2024, 3, 4, 0, 0, tzinfo=UTC)  # a Monday


# --- J3 ---------------------------------------------------------------------------------


@pytest.mark.parametrize("expression", ["", "   "])
def test_J3_an_empty_schedule_is_refused(expression: str) -> None:
    with pytest.raises(ScheduleError, match="empty"):
        parse_schedule(expression, None)


@pytest.mark.parametrize(
    "expression", ["TZ=UTC 0 3 * * *", "CRON_TZ=Europe/Berlin 0 3 * * *", " tz=UTC @daily"]
)
def test_J3_zone_prefixes_are_refused_with_a_pointer_to_timeZone(expression: str) -> None:
    with pytest.raises(ScheduleError, match=r"time-zone prefix; set spec\.timeZone"):
        parse_schedule(expression, None)


@pytest.mark.parametrize(
    "expression", ["* * * * * *", "61 * * * *", "@reboot", "@every 0s", "@every -1h", "H * * * *"]
)
def test_J3_non_standard_expressions_are_refused(expression: str) -> None:
    with pytest.raises(ScheduleError):
        parse_schedule(expression, None)


def test_J3_unknown_zone_is_refused() -> None:
    with pytest.raises(ScheduleError, match="timeZone"):
        parse_schedule("@daily", "Mars/Olympus")


def test_J3_cron_ticks_at_local_time_of_the_zone() -> None:
    berlin = parse_schedule(" 0 3 * * * ", "Europe/Berlin")
    assert berlin.next_after(T0) == datetime(2024, 3, 4, 2, 0, tzinfo=UTC)  # CET = UTC+1
    summer = datetime(2024, 7, 1, tzinfo=UTC)
    assert berlin.next_after(summer) == datetime(2024, 7, 1, 1, 0, tzinfo=UTC)  # CEST


def test_J3_every_is_a_constant_delay_in_whole_seconds() -> None:
    every = parse_schedule("@every 1h30m", "Asia/Tokyo")
    assert every.next_after(T0 + timedelta(microseconds=700)) == T0 + timedelta(hours=1.5)


def test_J3_a_repeated_autumn_wall_time_fires_once() -> None:
    nightly = parse_schedule("30 1 * * *", "America/New_York")
    first = nightly.next_after(datetime(2024, 11, 3, 4, 0, tzinfo=UTC))
    assert first == datetime(2024, 11, 3, 5, 30, tzinfo=UTC)  # 01:30 EDT
    assert nightly.next_after(first) == datetime(2024, 11, 4, 6, 30, tzinfo=UTC)  # not 01:30 EST


async def test_J3_invalid_schedule_sets_the_condition_and_creates_no_run() -> None:
    fake = FakeClient()
    clock = Clock(T0)
    reconciler, key = await make(fake, clock, cursor=T0, schedule="TZ=UTC @hourly")
    clock.at = T0 + timedelta(days=2)
    await reconciler.reconcile(key)
    status = (await schedule(fake))["status"]
    valid = next(c for c in status["conditions"] if c["type"] == "ScheduleValid")
    assert (valid["status"], valid["reason"]) == ("False", "InvalidSchedule")
    assert "timeZone" in valid["message"]
    assert runs(fake) == []


# --- J4 ---------------------------------------------------------------------------------


async def test_J4_back_after_a_weekend_fires_only_the_latest_tick_inside_the_deadline() -> None:
    fake = FakeClient()
    clock = Clock(T0)
    reconciler, key = await make(
        fake, clock, cursor=T0, schedule="0 * * * *", startingDeadlineSeconds=600
    )
    clock.at = T0 + timedelta(days=2, minutes=5)  # 48 hourly ticks passed
    await reconciler.reconcile(key)
    assert ticks_fired(fake) == [format_time(T0 + timedelta(days=2))]
    status = (await schedule(fake))["status"]
    assert status["missedSchedules"] == 47
    assert status["lastScheduleTime"] == format_time(T0 + timedelta(days=2))


async def test_J4_a_latest_tick_outside_the_deadline_is_missed_not_fired() -> None:
    fake = FakeClient()
    clock = Clock(T0)
    reconciler, key = await make(
        fake, clock, cursor=T0, schedule="0 * * * *", startingDeadlineSeconds=60
    )
    clock.at = T0 + timedelta(hours=3, minutes=5)
    await reconciler.reconcile(key)
    assert runs(fake) == []
    assert (await schedule(fake))["status"]["missedSchedules"] == 3


async def test_J4_more_than_1000_ticks_jumps_the_cursor_to_now_without_firing() -> None:
    fake = FakeClient()
    clock = Clock(T0)
    reconciler, key = await make(fake, clock, cursor=T0, schedule="* * * * *")
    clock.at = T0 + timedelta(days=1)  # 1440 minute ticks
    await reconciler.reconcile(key)
    assert runs(fake) == []
    status = (await schedule(fake))["status"]
    assert status["lastScheduleTime"] == format_time(clock.at)
    assert status["missedSchedules"] > 1000


def test_J4_plan_counts_every_tick_before_the_latest_as_missed() -> None:
    every = parse_schedule("@every 1h", None)
    plan = plan_ticks(every, since=T0, now=T0 + timedelta(hours=5), starting_deadline_seconds=None)
    assert (plan.fire, plan.missed) == (T0 + timedelta(hours=5), 4)


async def test_J4_suspend_creates_nothing_and_does_not_advance_the_cursor() -> None:
    fake = FakeClient()
    clock = Clock(T0)
    reconciler, key = await make(fake, clock, cursor=T0, schedule="@hourly", suspend=True)
    clock.at = T0 + timedelta(hours=5)
    await reconciler.reconcile(key)
    assert runs(fake) == []
    assert (await schedule(fake))["status"]["lastScheduleTime"] == format_time(T0)


# --- J5 ---------------------------------------------------------------------------------


async def test_J5_cursor_is_persisted_before_the_run_is_created() -> None:
    fake = FakeClient()
    clock = Clock(T0)
    reconciler, key = await make(fake, clock, cursor=T0, schedule="@hourly")
    clock.at = T0 + timedelta(hours=1)
    fake.requests.clear()
    await reconciler.reconcile(key)
    writes = [(r.verb, r.resource, r.subresource) for r in fake.requests if r.verb != "list"]
    cursor_write = writes.index(("replace", "burninschedules.burnin.glimmer.ai", "status"))
    run_create = writes.index(("create", "burninruns.burnin.glimmer.ai", None))
    assert cursor_write < run_create
    body = next(r.body for r in fake.requests if r.verb == "replace")
    assert body["status"]["lastScheduleTime"] == format_time(T0 + timedelta(hours=1))


async def test_J5_a_failed_cursor_write_creates_no_run() -> None:
    fake = FakeClient()
    clock = Clock(T0)
    reconciler, key = await make(fake, clock, cursor=T0, schedule="@hourly")
    clock.at = T0 + timedelta(hours=1)
    fake.inject_error("replace", RuntimeError("apiserver unavailable"))
    with pytest.raises(RuntimeError):
        await reconciler.reconcile(key)
    assert runs(fake) == []


async def test_J5_forbid_skips_while_a_run_is_active_and_counts_it() -> None:
    fake = FakeClient()
    clock = Clock(T0)
    reconciler, key = await make(fake, clock, cursor=T0, schedule="@hourly")
    clock.at = T0 + timedelta(hours=1)
    await reconciler.reconcile(key)
    assert len(runs(fake)) == 1  # still Pending: active
    clock.at = T0 + timedelta(hours=2)
    await reconciler.reconcile(key)
    assert len(runs(fake)) == 1
    status = (await schedule(fake))["status"]
    assert status["missedSchedules"] == 1
    assert status["lastScheduleTime"] == format_time(T0 + timedelta(hours=2))
    assert [a["name"] for a in status["active"]] == [runs(fake)[0]["metadata"]["name"]]
    await finish(fake, runs(fake)[0], "Passed", T0 + timedelta(hours=2, minutes=30))
    clock.at = T0 + timedelta(hours=3)
    await reconciler.reconcile(key)
    assert len(runs(fake)) == 2


async def test_J5_allow_creates_the_run_even_while_one_is_active() -> None:
    fake = FakeClient()
    clock = Clock(T0)
    reconciler, key = await make(
        fake, clock, cursor=T0, schedule="@hourly", concurrencyPolicy="Allow"
    )
    for hour in (1, 2):
        clock.at = T0 + timedelta(hours=hour)
        await reconciler.reconcile(key)
    assert len(runs(fake)) == 2  # overlapping targets are refused by run admission (E3)


async def test_J5_run_carries_the_template_with_nil_defaults_and_is_never_forced() -> None:
    fake = FakeClient()
    clock = Clock(T0)
    reconciler, key = await make(
        fake,
        clock,
        cursor=T0,
        schedule="@hourly",
        target={"nodeSelector": {"pool": "gpu"}, "tolerations": [{"operator": "Exists"}]},
        runTemplate={"deadlineSeconds": 3600, "baseline": True},
    )
    clock.at = T0 + timedelta(hours=1)
    await reconciler.reconcile(key)
    (run,) = runs(fake)
    owner = (await schedule(fake))["metadata"]
    assert run["metadata"]["name"].startswith("sweep-")
    assert run["metadata"]["labels"]["burnin.glimmer.ai/schedule"] == "sweep"
    assert run["metadata"]["ownerReferences"][0]["uid"] == owner["uid"]
    assert run["metadata"]["ownerReferences"][0]["controller"] is True
    assert run["spec"] == {
        "profileRef": "acceptance",
        "target": {"nodeSelector": {"pool": "gpu"}, "tolerations": [{"operator": "Exists"}]},
        "maxConcurrentNodes": 1,
        "retryOnErrorLimit": 0,
        "deadlineSeconds": 3600,
        "baseline": True,
    }


async def test_J5_a_stale_schedule_cannot_fire_the_same_tick_twice() -> None:
    fake = FakeClient()
    clock = Clock(T0)
    reconciler, key = await make(fake, clock, cursor=T0, schedule="@hourly")
    stale = await schedule(fake)
    clock.at = T0 + timedelta(hours=1)
    await reconciler.reconcile(key)

    class StaleReads:
        async def get(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
            return stale

    reconciler.reads.get = StaleReads().get  # type: ignore[method-assign]  # a lagging cache
    with pytest.raises(Exception, match=r"409|Conflict"):
        await reconciler.reconcile(key)
    assert len(runs(fake)) == 1


async def test_J5_requeues_at_the_next_tick() -> None:
    fake = FakeClient()
    clock = Clock(T0)
    reconciler, key = await make(fake, clock, cursor=T0, schedule="@hourly")
    clock.at = T0 + timedelta(minutes=20)
    result = await reconciler.reconcile(key)
    assert result.requeue_after == pytest.approx(40 * 60)
    assert (await schedule(fake))["status"]["nextScheduleTime"] == format_time(
        T0 + timedelta(hours=1)
    )


# --- J1 / J2 ----------------------------------------------------------------------------


async def test_J1_status_reflects_only_this_schedules_runs() -> None:
    fake = FakeClient()
    clock = Clock(T0)
    reconciler, key = await make(fake, clock, cursor=T0, schedule="@hourly")
    for hour in (1, 2):
        clock.at = T0 + timedelta(hours=hour)
        await reconciler.reconcile(key)
        await finish(fake, runs(fake)[-1] if hour == 1 else _newest(fake), "Passed",
                     clock.at + timedelta(minutes=10))  # fmt: skip
    foreign = {
        "metadata": {
            "name": "impostor",
            "namespace": NS,
            "labels": {"burnin.glimmer.ai/schedule": "sweep"},
            "annotations": {SCHEDULED_AT: format_time(T0 + timedelta(days=9))},
            "ownerReferences": [
                {"kind": "BurnInSchedule", "name": "sweep", "uid": "other", "controller": True}
            ],
        },
        "spec": {},
    }
    await fake.create(RUNS, foreign, namespace=NS)
    await reconciler.reconcile(key)
    status = (await schedule(fake))["status"]
    assert status["lastRunName"] == _newest(fake)["metadata"]["name"]
    assert status["lastRunPhase"] == "Passed"
    assert status["lastSuccessfulTime"] == format_time(T0 + timedelta(hours=2, minutes=10))
    assert "active" not in status


def _newest(fake: FakeClient) -> dict[str, Any]:
    ours = [r for r in runs(fake) if r["metadata"]["name"] != "impostor"]
    return max(ours, key=lambda r: r["metadata"]["annotations"][SCHEDULED_AT])


async def test_J2_history_keeps_3_passed_and_10_failed_by_default() -> None:
    fake = FakeClient()
    clock = Clock(T0)
    reconciler, key = await make(fake, clock, cursor=T0, schedule="@hourly")
    owner = await schedule(fake)
    for i in range(18):
        phase = "Passed" if i % 3 == 0 else ("Failed" if i % 3 == 1 else "Error")
        tick = T0 + timedelta(minutes=i)
        await fake.create(
            RUNS,
            {
                "metadata": {
                    "name": f"sweep-{i:02d}",
                    "namespace": NS,
                    "labels": {"burnin.glimmer.ai/schedule": "sweep"},
                    "annotations": {SCHEDULED_AT: format_time(tick)},
                    "ownerReferences": [
                        {
                            "kind": "BurnInSchedule",
                            "name": "sweep",
                            "uid": owner["metadata"]["uid"],
                            "controller": True,
                        }
                    ],
                },
                "spec": {},
                "status": {"phase": phase, "finishedAt": format_time(tick)},
            },
            namespace=NS,
        )
    await reconciler.reconcile(key)
    kept = {r["metadata"]["name"]: r["status"]["phase"] for r in runs(fake)}
    passed = sorted(n for n, p in kept.items() if p == "Passed")
    failed = sorted(n for n, p in kept.items() if p != "Passed")
    assert passed == ["sweep-09", "sweep-12", "sweep-15"]
    assert len(failed) == 10 and failed[0] == "sweep-04"  # the 10 newest failures


# --- targetVerdicts (Glimmer extension) ---------------------------------------------------


async def test_targetVerdicts_runs_only_against_nodes_without_a_current_verdict() -> None:
    fake = FakeClient()
    clock = Clock(T0)
    for node in ("n1", "n2", "n3"):
        await fake.create(NODES, {"metadata": {"name": node, "labels": {"pool": "gpu"}}})
    digest = "glimmer-v1:abc"
    verdict = {
        "runNamespace": NS, "runName": "old", "phase": "Passed",
        "finishedAt": format_time(T0 - timedelta(days=1)),
    }  # fmt: skip
    for node, bound in (("n1", digest), ("n2", "glimmer-v1:before-the-swap")):
        await fake.create(
            FINGERPRINTS,
            {
                "metadata": {"name": node},
                "spec": {"nodeName": node},
                "status": {"digest": digest, "verdict": {**verdict, "digest": bound}},
            },
            namespace="glimmer-system",
        )
    reconciler, key = await make(
        fake, clock, cursor=T0, schedule="@hourly",
        target={"nodeSelector": {"pool": "gpu"}}, targetVerdicts=["Expired", "Missing"],
    )  # fmt: skip
    clock.at = T0 + timedelta(hours=1)
    await reconciler.reconcile(key)
    (run,) = runs(fake)
    assert run["spec"]["target"] == {"nodeNames": ["n2", "n3"]}  # n1 is current; n3 has none


async def test_targetVerdicts_with_every_node_current_consumes_the_tick_without_a_run() -> None:
    fake = FakeClient()
    clock = Clock(T0)
    await fake.create(
        FINGERPRINTS,
        {
            "metadata": {"name": "n1"},
            "spec": {"nodeName": "n1"},
            "status": {
                "digest": "glimmer-v1:x",
                "verdict": {
                    "runNamespace": NS,
                    "runName": "r",
                    "phase": "Passed",
                    "finishedAt": format_time(T0),
                    "digest": "glimmer-v1:x",
                },
            },
        },
        namespace="glimmer-system",
    )
    reconciler, key = await make(
        fake, clock, cursor=T0, schedule="@hourly", targetVerdicts=["Expired", "Missing"]
    )
    clock.at = T0 + timedelta(hours=1)
    await reconciler.reconcile(key)
    assert runs(fake) == []
    assert parse_time((await schedule(fake))["status"]["lastScheduleTime"]) == clock.at
    # maxVerdictAgeSeconds makes the same verdict Expired for this schedule.
    sched = await schedule(fake)
    sched["spec"]["maxVerdictAgeSeconds"] = 1800
    await fake.replace(SCHEDULES, sched, namespace=NS)
    clock.at = T0 + timedelta(hours=2)
    await reconciler.reconcile(key)
    (run,) = runs(fake)
    assert run["spec"]["target"]["nodeNames"] == ["n1"]
