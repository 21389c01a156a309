"""BurnInSchedule: a profile run against a target on a cron schedule (api §5)."""

# field() returns attrs.field() with schema metadata; ruff cannot see that.
# ruff: noqa: RUF009

from __future__ import annotations

from datetime import datetime

import attrs

from glimmer.api.burnintest import API_VERSION
from glimmer.api.core import KubeCondition, ObjectMeta, ObjectReference
from glimmer.api.fields import field
from glimmer.api.target import TargetSelector
from glimmer.api.vocabulary import ConcurrencyPolicy, RunPhase


@attrs.define(kw_only=True)
class RunTemplate:
    """Fields copied into each scheduled run's spec."""

    ttl_seconds_after_finished: int | None = field(
        json="ttlSecondsAfterFinished",
        fmt="int32",
        minimum=0,
        description="Run spec ttlSecondsAfterFinished.",
    )
    deadline_seconds: int | None = field(
        json="deadlineSeconds", fmt="int32", minimum=0, description="Run spec deadlineSeconds."
    )
    max_concurrent_nodes: int = field(
        json="maxConcurrentNodes",
        default=1,
        fmt="int32",
        minimum=1,
        description="Run spec maxConcurrentNodes.",
    )
    retry_on_error_limit: int = field(
        json="retryOnErrorLimit",
        default=0,
        fmt="int32",
        minimum=0,
        description="Run spec retryOnErrorLimit.",
    )
    baseline: bool = field(json="baseline", default=False, description="Run spec baseline.")


@attrs.define(kw_only=True)
class BurnInScheduleSpec:
    """When to run which profile against which nodes."""

    schedule: str = field(
        json="schedule",
        required=True,
        min_length=1,
        description="Standard 5-field cron expression or descriptor (@daily, @every 168h); "
        "TZ=/CRON_TZ= prefixes are refused, use timeZone.",
    )
    time_zone: str | None = field(
        json="timeZone", description="IANA time zone of the schedule; empty means UTC."
    )
    profile_ref: str = field(
        json="profileRef", required=True, description="BurnInProfile copied to each run."
    )
    target: TargetSelector = field(
        json="target", required=True, description="Target copied to each run."
    )
    suspend: bool = field(json="suspend", default=False, description="Create no new runs.")
    concurrency_policy: str = field(
        json="concurrencyPolicy",
        default=ConcurrencyPolicy.FORBID.value,
        enum=ConcurrencyPolicy,
        description="Forbid skips a tick while a run is active; Allow creates it anyway (run "
        "admission still refuses overlapping targets).",
    )
    starting_deadline_seconds: int | None = field(
        json="startingDeadlineSeconds",
        fmt="int32",
        minimum=0,
        description="Ticks older than this are counted missed, not run.",
    )
    successful_runs_history_limit: int = field(
        json="successfulRunsHistoryLimit",
        default=3,
        fmt="int32",
        minimum=0,
        description="Passed runs kept.",
    )
    failed_runs_history_limit: int = field(
        json="failedRunsHistoryLimit",
        default=10,
        fmt="int32",
        minimum=0,
        description="Failed, Error and Cancelled runs kept.",
    )
    run_template: RunTemplate | None = field(
        json="runTemplate", description="Fields copied into each run's spec."
    )
    target_verdicts: list[str] | None = field(
        json="targetVerdicts",
        enum=("Expired", "Missing"),
        list_type="set",
        description="Glimmer extension: run only against the target's nodes whose acceptance "
        "verdict is in one of these states (Expired: measured on hardware that has changed "
        "since, or older than maxVerdictAgeSeconds; Missing: never judged, tested only on the "
        "simulated GPU, or no NodeFingerprint). A tick finding no such node creates no run. "
        "Empty: every target node, as upstream.",
    )
    max_verdict_age_seconds: int | None = field(
        json="maxVerdictAgeSeconds",
        fmt="int64",
        minimum=1,
        description="Glimmer extension: with targetVerdicts, a verdict older than this counts "
        "as Expired for this schedule (on top of the NodeFingerprint's own age limit).",
    )


@attrs.define(kw_only=True)
class BurnInScheduleStatus:
    """Observed state of a schedule."""

    last_schedule_time: datetime | None = field(
        json="lastScheduleTime",
        fmt="date-time",
        description="Cursor: the last tick handled (persisted before its run is created).",
    )
    last_successful_time: datetime | None = field(
        json="lastSuccessfulTime",
        fmt="date-time",
        description="Latest finishedAt of a Passed owned run.",
    )
    active: list[ObjectReference] | None = field(
        json="active", description="Owned runs that are not terminal."
    )
    last_run_name: str | None = field(json="lastRunName", description="Newest owned run.")
    last_run_phase: str | None = field(
        json="lastRunPhase", enum=RunPhase, description="Phase of the newest owned run."
    )
    next_schedule_time: datetime | None = field(
        json="nextScheduleTime",
        fmt="date-time",
        description="Glimmer extension: the next tick after the cursor (absent while "
        "suspended or invalid).",
    )
    missed_schedules: int | None = field(
        json="missedSchedules",
        fmt="int32",
        minimum=0,
        description="Ticks missed (saturating).",
    )
    observed_generation: int | None = field(
        json="observedGeneration", fmt="int64", description="Generation last observed."
    )
    conditions: list[KubeCondition] | None = field(json="conditions", description="ScheduleValid.")


@attrs.define(kw_only=True)
class BurnInSchedule:
    """BurnInSchedule runs a BurnInProfile against a target on a cron schedule."""

    api_version: str = field(json="apiVersion", default=API_VERSION, description="API version.")
    kind: str = field(json="kind", default="BurnInSchedule", description="Kind.")
    metadata: ObjectMeta = field(json="metadata", factory=ObjectMeta, description="Metadata.")
    spec: BurnInScheduleSpec = field(json="spec", required=True, description="The schedule.")
    status: BurnInScheduleStatus | None = field(json="status", description="Observed state.")
