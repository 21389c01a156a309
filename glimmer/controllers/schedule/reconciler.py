"""The BurnInSchedule reconciler (J1-J5; J6-J9 for a ``trigger.nodeJoined`` schedule, in
:mod:`glimmer.controllers.schedule.qualify`): one pass per schedule.

A pass: read the owned runs (live: a run created a moment ago must count as active, or
``Forbid`` would let a second sweep start), derive status (J1), delete runs beyond the
history limits (J2), parse (J3: an invalid schedule sets ``ScheduleValid=False`` and
creates nothing), then, unless suspended, plan the ticks (J4) and fire (J5).

Firing order is the rule that matters: the cursor (``lastScheduleTime``) is written
first, with the schedule's resourceVersion as a precondition, and only then is the run
created. A crash between the two loses that tick (counted nowhere, visible as a cursor
with no run); the other order would, after a crash, fire the same tick again and put a
second full-power sweep on the fleet. A stale cached schedule cannot fire a tick twice
either: its resourceVersion is old, so the cursor write conflicts and nothing is created.

Time is injected (``now``), so tests drive weeks of ticks in milliseconds by calling
:meth:`ScheduleReconciler.reconcile` with a moved clock.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any, Final

import structlog

from glimmer.api import API_VERSION, format_time, parse_time
from glimmer.api.vocabulary import ConditionStatus
from glimmer.controllers.kit.conditions import set_json_condition
from glimmer.controllers.kit.names import FINGERPRINTS, RUNS, fingerprint_name
from glimmer.controllers.kit.reads import ConfirmingReader
from glimmer.controllers.kit.view import ObjectView, ScheduleView
from glimmer.controllers.schedule.cron import ScheduleError, parse_schedule
from glimmer.controllers.schedule.history import (
    SCHEDULE_LABEL,
    SCHEDULED_AT,
    owned_by,
    reference,
    view_runs,
)
from glimmer.controllers.schedule.qualify import QualifyPass, Trigger, trigger_of
from glimmer.controllers.schedule.ticks import (
    plan_ticks,
    saturating_add,
    under_policy,
    upcoming_ticks,
)
from glimmer.engine import NODES, ApiError, KubeClient, Readers, Resource, Result, is_not_found
from glimmer.plan import label_value
from glimmer.verdict.expiry import state_of_fingerprint, targeted

log = structlog.get_logger("glimmer.controllers.schedule")

JSON = dict[str, Any]

SCHEDULE_VALID: Final = "ScheduleValid"
#: Requeue floor (J5) and the recheck of an invalid or suspended schedule.
MIN_REQUEUE_SECONDS: Final = 1.0
IDLE_RECHECK_SECONDS: Final = 300.0
_NAME_STEM: Final = 200


def now_utc() -> datetime:
    return datetime.now(UTC)


class ScheduleReconciler:
    """Reconciles one BurnInSchedule (key = "namespace/name")."""

    def __init__(
        self,
        *,
        client: KubeClient,
        readers: Readers,
        schedules: Resource,
        operator_namespace: str,
        now: Callable[[], datetime] = now_utc,
    ) -> None:
        self.client = client
        self.reads = ConfirmingReader(readers)
        self.schedules = schedules
        self.operator_namespace = operator_namespace
        self.now = now
        #: Schedule key -> its trigger's taint key: which schedules a Node event concerns
        #: (only to enqueue; every decision is made from the cluster).
        self.trigger_keys: dict[str, str] = {}
        self.qualify = QualifyPass(
            client=client,
            reads=self.reads,
            operator_namespace=operator_namespace,
            write=self._write,
            make_run=run_body,
        )

    async def reconcile(self, key: str) -> Result:
        namespace, _, name = key.partition("/")
        schedule = await self.reads.get(self.schedules, name, namespace=namespace)
        if schedule is None or ScheduleView(schedule).deleting:
            self.trigger_keys.pop(key, None)
            return Result()  # owned runs go with it (garbage collection by ownerReference)
        now = self.now()
        view = ScheduleView(schedule)
        stored: JSON = dict(view.stored_status)
        status = copy.deepcopy(stored)
        generation = view.generation

        runs = [
            r
            for r in await self.reads.readers.live.list(
                RUNS, namespace=namespace, label_selector=f"{SCHEDULE_LABEL}={label_value(name)}"
            )
            if owned_by(r, view.uid)
        ]
        history = view_runs(
            runs,
            successful_limit=view.successful_runs_history_limit,
            failed_limit=view.failed_runs_history_limit,
        )
        # An open qualification batch's run is never collected before it is judged.
        pending = _pending_batch_run(stored)
        await self._collect([r for r in history.to_delete if ObjectView(r).name != pending])
        _set_runs_status(status, history)
        if generation is not None:
            status["observedGeneration"] = generation

        trigger = trigger_of(schedule)
        if trigger is not None:
            return await self._reconcile_trigger(
                key, schedule, stored=stored, status=status, runs=runs, trigger=trigger, now=now
            )
        self.trigger_keys.pop(key, None)

        try:
            parsed = parse_schedule(view.schedule, view.time_zone)
        except ScheduleError as err:
            status["conditions"] = set_json_condition(
                status.get("conditions"),
                type_=SCHEDULE_VALID,
                status=ConditionStatus.FALSE,
                reason="InvalidSchedule",
                message=str(err),
                now=now,
                generation=generation,
            )
            status.pop("nextScheduleTime", None)
            await self._write(schedule, stored, status)
            return Result(requeue_after=IDLE_RECHECK_SECONDS)
        status["conditions"] = set_json_condition(
            status.get("conditions"),
            type_=SCHEDULE_VALID,
            status=ConditionStatus.TRUE,
            reason="Parsed",
            message="the schedule parses",
            now=now,
            generation=generation,
        )

        if view.suspend:
            status.pop("nextScheduleTime", None)
            await self._write(schedule, stored, status)
            return Result(requeue_after=IDLE_RECHECK_SECONDS)

        cursor = schedule_cursor(schedule, now=now)
        plan = under_policy(
            plan_ticks(
                parsed,
                since=cursor,
                now=now,
                starting_deadline_seconds=view.starting_deadline_seconds,
            ),
            concurrency_policy=view.concurrency_policy,
            active=bool(history.active),
        )
        if plan.jumped:
            log.warning("more than 1000 ticks passed; cursor jumped to now, nothing fired",
                        schedule=key, counted=plan.missed)  # fmt: skip
        missed = plan.missed
        fire = plan.fire
        if plan.cursor is not None:
            status["lastScheduleTime"] = format_time(plan.cursor)
        if missed:
            status["missedSchedules"] = saturating_add(status.get("missedSchedules"), missed)
        [upcoming] = upcoming_ticks(parsed, plan=plan, cursor=cursor, count=1)
        status["nextScheduleTime"] = format_time(upcoming)
        requeue = max(MIN_REQUEUE_SECONDS, (upcoming - now).total_seconds())

        if fire is None:
            await self._write(schedule, stored, status)
            return Result(requeue_after=requeue)
        target = await self._target(view, now=now)
        if target is None:
            log.info("no target node needs re-qualification; tick consumed", schedule=key)
            await self._write(schedule, stored, status)
            return Result(requeue_after=requeue)
        # J5: the cursor is durable before the run exists (see the module docstring).
        await self._write(schedule, stored, status, force=True)
        created = await self.client.create(
            RUNS, run_body(schedule, tick=fire, target=target), namespace=namespace
        )
        run_name = ObjectView(created).name
        log.info("scheduled run created", schedule=key, run=run_name, tick=format_time(fire))
        return Result(requeue_after=requeue)

    async def _reconcile_trigger(
        self,
        key: str,
        schedule: JSON,
        *,
        stored: JSON,
        status: JSON,
        runs: list[JSON],
        trigger: Trigger,
        now: datetime,
    ) -> Result:
        """J6-J9: a schedule with ``trigger.nodeJoined`` (glimmer.controllers.schedule.qualify)."""
        self.trigger_keys[key] = trigger.taint.key
        view = ScheduleView(schedule)
        status.pop("nextScheduleTime", None)
        status["conditions"] = set_json_condition(
            status.get("conditions"),
            type_=SCHEDULE_VALID,
            status=ConditionStatus.TRUE,
            reason="NodeJoinedTrigger",
            message=f"qualifies target nodes that carry {trigger.taint}",
            now=now,
            generation=view.generation,
        )
        # Suspended: an open batch is still judged; no drift re-taint, no new batch.
        requeue = await self.qualify.run(
            schedule,
            stored=stored,
            status=status,
            runs=runs,
            trigger=trigger,
            now=now,
            suspended=view.suspend,
        )
        return Result(requeue_after=requeue)

    async def _collect(self, runs: list[JSON]) -> None:
        for run in map(ObjectView, runs):
            try:
                await self.client.delete(
                    RUNS,
                    run.name,
                    namespace=run.namespace,
                    precondition_uid=run.uid or None,
                    propagation_policy="Background",
                )
            except ApiError as err:
                if not is_not_found(err):
                    raise  # GC is retried on the next pass

    async def _write(
        self, schedule: JSON, stored: JSON, status: JSON, *, force: bool = False
    ) -> None:
        """Status with the read resourceVersion (a conflict raises: re-read, retry)."""
        if status == stored and not force:
            return
        await self.client.replace(
            self.schedules,
            {**schedule, "status": status},
            namespace=ObjectView(schedule).namespace,
            subresource="status",
        )

    async def _target(self, view: ScheduleView, *, now: datetime) -> JSON | None:
        """The run's target: the schedule's, or with ``targetVerdicts`` only the nodes whose
        verdict is in those states (None: no node is)."""
        target = copy.deepcopy(dict(view.target))
        wanted = set(view.target_verdicts)
        if not wanted:
            return target
        names = [str(n) for n in target.get("nodeNames") or () if n]
        if not names:
            selector = target.get("nodeSelector") or {}
            terms = ",".join(f"{k}={v}" for k, v in sorted(selector.items()))
            nodes = await self.reads.list(NODES, label_selector=terms or None)
            names = sorted(ObjectView(n).name for n in nodes)
        max_age = view.max_verdict_age_seconds
        chosen = []
        for node in names:
            fingerprint = await self.reads.get(
                FINGERPRINTS, fingerprint_name(node), namespace=self.operator_namespace
            )
            if targeted(
                state_of_fingerprint(fingerprint, now=now, max_age_seconds=max_age), wanted
            ):
                chosen.append(node)
        if not chosen:
            return None
        target["nodeNames"] = chosen
        target.pop("nodeSelector", None)
        return target


def schedule_cursor(schedule: Mapping[str, Any], *, now: datetime) -> datetime:
    """J4's cursor: ``lastScheduleTime``, else the schedule's creation, else now."""
    view = ScheduleView(schedule)
    return _time(view.last_schedule_time) or _time(view.created_at) or now


def starting_deadline(spec: Mapping[str, Any]) -> int | None:
    return _optional_int(spec.get("startingDeadlineSeconds"))


def run_body(schedule: Mapping[str, Any], *, tick: datetime, target: Mapping[str, Any]) -> JSON:
    """J5's run: profile, deep-copied target, template fields with their nil defaults.

    Not templated: ``force``, ``suspend``, ``cancel*`` (a scheduled run is never forced).
    """
    view = ScheduleView(schedule)
    template = view.run_template
    name = view.name
    run_spec: JSON = {
        "profileRef": view.profile_ref,
        "target": copy.deepcopy(dict(target)),
        "maxConcurrentNodes": _int(template.get("maxConcurrentNodes"), 1),
        "retryOnErrorLimit": _int(template.get("retryOnErrorLimit"), 0),
    }
    for field in ("ttlSecondsAfterFinished", "deadlineSeconds"):
        if isinstance(template.get(field), int):
            run_spec[field] = template[field]
    if template.get("baseline") is True:
        run_spec["baseline"] = True
    return {
        "apiVersion": API_VERSION,
        "kind": "BurnInRun",
        "metadata": {
            "generateName": f"{name[:_NAME_STEM]}-",
            "namespace": view.namespace or None,
            "labels": {SCHEDULE_LABEL: label_value(name)},
            "annotations": {SCHEDULED_AT: format_time(tick)},
            "ownerReferences": [
                {
                    "apiVersion": API_VERSION,
                    "kind": "BurnInSchedule",
                    "name": name,
                    "uid": view.uid or None,
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": run_spec,
    }


def _pending_batch_run(status: Mapping[str, Any]) -> str | None:
    qualification = status.get("qualification")
    if not isinstance(qualification, Mapping) or qualification.get("phase") != "Running":
        return None
    name = qualification.get("runName")
    return name if isinstance(name, str) and name else None


def _set_runs_status(status: JSON, view: Any) -> None:
    if view.active:
        status["active"] = [reference(r) for r in view.active]
    else:
        status.pop("active", None)
    for field, value in (
        ("lastRunName", view.last_run_name),
        ("lastRunPhase", view.last_run_phase),
        ("lastSuccessfulTime", view.last_successful_time),
    ):
        if value is None:
            status.pop(field, None)
        else:
            status[field] = value


def _time(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return parse_time(value)
    except ValueError:
        return None


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _optional_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
