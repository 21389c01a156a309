"""BurnInSchedule against a real apiserver: weeks of ticks driven by an injected clock."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from glimmer.api import format_time
from glimmer.controllers.kit.names import RUNS
from glimmer.controllers.schedule import SCHEDULES, ScheduleReconciler
from glimmer.controllers.schedule.history import SCHEDULED_AT
from glimmer.engine import ApiServerClient, InformerFactory, Readers

pytestmark = pytest.mark.controlplane

T0 = datetime(2024, 3, 4, 0, 0, tzinfo=UTC)  # Monday 00:00 UTC


class Clock:
    def __init__(self) -> None:
        self.at = T0

    def __call__(self) -> datetime:
        return self.at


async def create_schedule(kube: ApiServerClient, namespace: str, **spec: Any) -> str:
    body = {
        "apiVersion": "burnin.glimmer.ai/v1alpha1",
        "kind": "BurnInSchedule",
        "metadata": {"name": "sweep"},
        "spec": {"profileRef": "acceptance", "target": {"nodeNames": ["gpu-1"]}, **spec},
    }
    created = await kube.create(SCHEDULES, body, namespace=namespace)
    created["status"] = {"lastScheduleTime": format_time(T0)}
    await kube.replace(SCHEDULES, created, namespace=namespace, subresource="status")
    return f"{namespace}/sweep"


def reconciler(kube: ApiServerClient, clock: Clock) -> ScheduleReconciler:
    return ScheduleReconciler(
        client=kube,
        readers=Readers.over(kube, InformerFactory(kube)),
        schedules=SCHEDULES,
        operator_namespace="glimmer-system",
        now=clock,
    )


async def drive(rec: ScheduleReconciler, clock: Clock, key: str, *, until: datetime) -> None:
    """Jump the clock to each requeue the reconciler asks for, as the workqueue would."""
    while True:
        result = await rec.reconcile(key)
        assert result.requeue_after is not None
        nxt = clock.at + timedelta(seconds=result.requeue_after)
        if nxt > until:
            return
        clock.at = nxt


async def fired(kube: ApiServerClient, namespace: str) -> list[str]:
    runs = await Readers.over(kube, InformerFactory(kube)).live.list(RUNS, namespace=namespace)
    return sorted(r["metadata"]["annotations"][SCHEDULED_AT] for r in runs)


async def finish_all(kube: ApiServerClient, namespace: str, phase: str, at: datetime) -> None:
    for run in (await kube.list(RUNS, namespace=namespace))["items"]:
        if (run.get("status") or {}).get("phase"):
            continue
        run["status"] = {"phase": phase, "finishedAt": format_time(at)}
        await kube.replace(RUNS, run, namespace=namespace, subresource="status")


async def test_J3_J5_cron_in_a_non_utc_zone_fires_at_local_maintenance_time(
    kube: ApiServerClient, namespace: str
) -> None:
    clock = Clock()
    key = await create_schedule(
        kube,
        namespace,
        schedule="0 3 * * 1,4",
        timeZone="America/New_York",
        successfulRunsHistoryLimit=10,
    )
    rec = reconciler(kube, clock)
    until = T0 + timedelta(days=14)
    while clock.at < until:  # each run finishes before the next tick (Forbid never skips)
        await drive(rec, clock, key, until=min(until, clock.at + timedelta(days=1)))
        await finish_all(kube, namespace, "Passed", clock.at)
        clock.at += timedelta(days=1)
    # 03:00 New York: EST (UTC-5) until the 10 March change, EDT (UTC-4) after.
    assert await fired(kube, namespace) == [
        "2024-03-04T08:00:00.000Z", "2024-03-07T08:00:00.000Z",
        "2024-03-11T07:00:00.000Z", "2024-03-14T07:00:00.000Z",
    ]  # fmt: skip


async def test_J5_every_fires_each_interval_and_forbid_skips_while_a_run_is_active(
    kube: ApiServerClient, namespace: str
) -> None:
    clock = Clock()
    key = await create_schedule(kube, namespace, schedule="@every 168h")
    rec = reconciler(kube, clock)
    await drive(rec, clock, key, until=T0 + timedelta(days=15))  # never finishes: Forbid
    assert await fired(kube, namespace) == ["2024-03-11T00:00:00.000Z"]
    status = (await kube.get(SCHEDULES, "sweep", namespace=namespace))["status"]
    assert status["missedSchedules"] == 1  # the 18 March tick, skipped and counted
    assert status["lastRunPhase"] == "Pending" and len(status["active"]) == 1
    await finish_all(kube, namespace, "Passed", clock.at)
    clock.at = T0 + timedelta(days=21)
    await rec.reconcile(key)
    assert await fired(kube, namespace) == ["2024-03-11T00:00:00.000Z", "2024-03-25T00:00:00.000Z"]


async def test_J4_back_after_a_weekend_fires_only_the_latest_tick_inside_the_deadline(
    kube: ApiServerClient, namespace: str
) -> None:
    clock = Clock()
    key = await create_schedule(
        kube, namespace, schedule="0 */2 * * *", startingDeadlineSeconds=900
    )
    clock.at = T0 + timedelta(days=2, minutes=10)  # the manager was down all weekend
    await reconciler(kube, clock).reconcile(key)
    assert await fired(kube, namespace) == ["2024-03-06T00:00:00.000Z"]
    status = (await kube.get(SCHEDULES, "sweep", namespace=namespace))["status"]
    assert status["missedSchedules"] == 23


async def test_J2_history_gc_keeps_3_passed_and_10_failed(
    kube: ApiServerClient, namespace: str
) -> None:
    clock = Clock()
    key = await create_schedule(kube, namespace, schedule="@hourly")
    rec = reconciler(kube, clock)
    for hour in range(1, 21):
        clock.at = T0 + timedelta(hours=hour)
        await rec.reconcile(key)
        await finish_all(kube, namespace, "Passed" if hour % 4 == 0 else "Failed", clock.at)
    await rec.reconcile(key)
    runs = (await kube.list(RUNS, namespace=namespace))["items"]
    phases = sorted(
        r["status"]["phase"] for r in runs if not r["metadata"].get("deletionTimestamp")
    )
    assert phases == ["Failed"] * 10 + ["Passed"] * 3


async def test_J3_an_invalid_expression_gives_the_condition_and_no_runs(
    kube: ApiServerClient, namespace: str
) -> None:
    clock = Clock()
    key = await create_schedule(kube, namespace, schedule="CRON_TZ=Europe/Berlin 0 3 * * *")
    clock.at = T0 + timedelta(days=7)
    await reconciler(kube, clock).reconcile(key)
    status = (await kube.get(SCHEDULES, "sweep", namespace=namespace))["status"]
    (valid,) = [c for c in status["conditions"] if c["type"] == "ScheduleValid"]
    assert (valid["status"], valid["reason"]) == ("False", "InvalidSchedule")
    assert await fired(kube, namespace) == []
