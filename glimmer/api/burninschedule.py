"""BurnInSchedule: a profile run against a target on a cron schedule (api §5)."""

# field() returns attrs.field() with schema metadata; ruff cannot see that.
# ruff: noqa: RUF009

from __future__ import annotations

from datetime import datetime
from typing import ClassVar

import attrs

from glimmer.api.burnintest import API_VERSION
from glimmer.api.core import KubeCondition, ObjectMeta, ObjectReference
from glimmer.api.fields import Rule, field
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
class QualifyTaint:
    """The startup taint a joining node carries until it is qualified."""

    key: str = field(json="key", required=True, min_length=1, description="Taint key.")
    value: str | None = field(json="value", description="Taint value; empty matches no value.")
    effect: str = field(
        json="effect",
        required=True,
        enum=("NoSchedule", "NoExecute"),
        description="Taint effect: one that keeps workloads off the node (PreferNoSchedule "
        "does not, so it cannot gate anything).",
    )


@attrs.define(kw_only=True)
class NodeJoinedTrigger:
    """Glimmer extension: qualify each target node that carries the startup taint."""

    taint: QualifyTaint = field(
        json="taint",
        required=True,
        description="The taint that marks a node unqualified (key, value and effect all "
        "match). Removed only on a certified Pass; no other taint is ever touched.",
    )
    selector: dict[str, str] | None = field(
        json="selector",
        description="Node labels a node must also carry (narrows the target).",
    )
    batch_window_seconds: int = field(
        json="batchWindowSeconds",
        default=60,
        fmt="int32",
        minimum=0,
        description="Nodes found within this many seconds of the first share one run (at "
        "most runTemplate.maxConcurrentNodes of them).",
    )
    retaint_on_drift: bool = field(
        json="retaintOnDrift",
        default=False,
        description="Re-taint a qualified node whose NodeFingerprint verdict expired because "
        "its hardware changed, and qualify it again.",
    )


@attrs.define(kw_only=True)
class ScheduleTrigger:
    """Glimmer extension: what creates runs instead of a cron schedule."""

    node_joined: NodeJoinedTrigger = field(
        json="nodeJoined", required=True, description="Qualify nodes as they join."
    )


@attrs.define(kw_only=True)
class BurnInScheduleSpec:
    """When to run which profile against which nodes."""

    rules: ClassVar[tuple[Rule, ...]] = (
        Rule(
            rule="has(self.schedule) != has(self.trigger)",
            message="set exactly one of schedule (cron) and trigger (nodeJoined)",
        ),
    )

    schedule: str | None = field(
        json="schedule",
        min_length=1,
        description="Standard 5-field cron expression or descriptor (@daily, @every 168h); "
        "TZ=/CRON_TZ= prefixes are refused, use timeZone. Exactly one of schedule and "
        "trigger is set.",
    )
    trigger: ScheduleTrigger | None = field(
        json="trigger",
        description="Glimmer extension: create runs when nodes join with a startup taint "
        "(docs/qualify.md) instead of on a cron schedule.",
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
class NodeQualification:
    """What the newest judged batch did with one node's taint."""

    node: str = field(json="node", required=True, description="Node name.")
    outcome: str = field(
        json="outcome", required=True, enum=("Untainted", "Kept"), description="The taint's fate."
    )
    reason: str = field(
        json="reason",
        required=True,
        description="Qualified, Failed, Simulated, NotJudged, NoVerdict, TaintChanged or "
        "NotOurRun.",
    )
    message: str | None = field(json="message", description="Why, from the node verdict.")


@attrs.define(kw_only=True)
class QualificationStatus:
    """Glimmer extension: the node-joined trigger's cursor and its newest batch."""

    batch: int | None = field(
        json="batch",
        fmt="int64",
        minimum=0,
        description="Cursor: the newest batch started (persisted before its run is created).",
    )
    run_name: str | None = field(json="runName", description="That batch's run.")
    nodes: list[str] | None = field(json="nodes", description="That batch's nodes.")
    phase: str | None = field(
        json="phase",
        enum=("Running", "Judged", "Lost"),
        description="Running: its run is not judged yet; Judged: each node's taint was "
        "decided; Lost: its run does not exist (its nodes join the next batch).",
    )
    window_opened_at: datetime | None = field(
        json="windowOpenedAt",
        fmt="date-time",
        description="When the next batch's window opened (absent: no node waits).",
    )
    outcomes: list[NodeQualification] | None = field(
        json="outcomes",
        list_type="map",
        list_map_keys=("node",),
        description="The newest judged batch, node by node.",
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
    qualification: QualificationStatus | None = field(
        json="qualification", description="Glimmer extension: the node-joined trigger's state."
    )
    conditions: list[KubeCondition] | None = field(
        json="conditions", description="ScheduleValid; Qualified with a nodeJoined trigger."
    )


@attrs.define(kw_only=True)
class BurnInSchedule:
    """BurnInSchedule runs a BurnInProfile against a target on a cron schedule, or on each
    node that joins with a startup taint (trigger.nodeJoined)."""

    api_version: str = field(json="apiVersion", default=API_VERSION, description="API version.")
    kind: str = field(json="kind", default="BurnInSchedule", description="Kind.")
    metadata: ObjectMeta = field(json="metadata", factory=ObjectMeta, description="Metadata.")
    spec: BurnInScheduleSpec = field(json="spec", required=True, description="The schedule.")
    status: BurnInScheduleStatus | None = field(json="status", description="Observed state.")
