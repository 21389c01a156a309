"""A segmented soak's status fields <-> ``glimmer.verdict.soak`` (G1-G6).

The fold lives in the result (``aggregatedMetrics``, ``segmentsCompleted``, the open
result's ``unmeasurable``, ``truncatedAttempts``) and is written in the same status
write as the attempt entry of the segment it folded: a segment is identified by its
attempt number, which is its pod's deterministic name, and the next attempt number
counts the elided attempts too. So a manager killed at any instant either finds the
segment recorded (its pod is never judged again) or not at all (its pod is judged
now): never folded twice, never lost.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from glimmer.plan import PlannedTest, execution_window_seconds, segments_required
from glimmer.plan import spec as specs
from glimmer.plan.gates import threshold_from_wire
from glimmer.verdict import (
    AttemptRecord,
    AttemptVerdict,
    SoakProgress,
    TestResultState,
    codec,
    record_segment,
)
from glimmer.verdict.checkpoint import checkpoint_metrics as published_metrics

JSON = dict[str, Any]


def segmented(test: PlannedTest) -> bool:
    return specs.soak(test.spec) is not None


def abort_early(test: PlannedTest) -> bool:
    return (specs.soak(test.spec) or {}).get("abortEarly") is True


def pin(result: JSON, test: PlannedTest) -> None:
    """G1: the segment count and window are pinned on the result when it is made."""
    if not segmented(test):
        return
    result["segmentsRequired"] = segments_required(test.spec)
    result["segmentSeconds"] = execution_window_seconds(test.spec)
    result["segmentsCompleted"] = 0


def truncated(result: Mapping[str, Any] | None) -> int:
    """G5: passing segment attempts elided from ``attempts`` (they keep their numbers)."""
    if result is None:
        return 0
    return max(codec.int_or_default(result.get("truncatedAttempts", 0), 0), 0)


def progress(result: Mapping[str, Any], test: PlannedTest) -> SoakProgress:
    """The persisted fold. Pinned values win over the spec (a test edited mid-run
    changes nothing already planned); a result written before pinning gets the plan's."""
    required = codec.int_or_default(result.get("segmentsRequired"), 0) or segments_required(
        test.spec
    )
    seconds = codec.int_or_default(result.get("segmentSeconds"), 0) or execution_window_seconds(
        test.spec
    )
    aggregate = result.get("aggregatedMetrics")
    return SoakProgress(
        required=required,
        segment_seconds=seconds,
        completed=max(codec.int_or_default(result.get("segmentsCompleted", 0), 0), 0),
        aggregate=(
            {str(k): str(v) for k, v in aggregate.items()} if isinstance(aggregate, Mapping) else {}
        ),
        unmeasurable=frozenset(str(n) for n in result.get("unmeasurable") or ()),
        truncated=truncated(result),
    )


def progress_to_wire(result: JSON, soak: SoakProgress) -> JSON:
    result["segmentsRequired"] = soak.required
    result["segmentSeconds"] = soak.segment_seconds
    result["segmentsCompleted"] = soak.completed
    if soak.aggregate:
        result["aggregatedMetrics"] = dict(sorted(soak.aggregate.items()))
    else:
        result.pop("aggregatedMetrics", None)
    if soak.truncated:
        result["truncatedAttempts"] = soak.truncated
    else:
        result.pop("truncatedAttempts", None)
    return result


def record(
    state: TestResultState,
    base: Mapping[str, Any],
    verdict: AttemptVerdict,
    *,
    test: PlannedTest,
    retry_on_error_limit: int,
    entry: AttemptRecord,
) -> tuple[TestResultState, SoakProgress]:
    """One segment attempt applied by the verdict package (G2-G5)."""
    return record_segment(
        state,
        progress(base, test),
        verdict,
        thresholds=[threshold_from_wire(t) for t in specs.thresholds(test.spec)],
        retry_on_error_limit=retry_on_error_limit,
        record=entry,
        abort_early=abort_early(test),
    )


def checkpoint_metrics(
    result: Mapping[str, Any], test: PlannedTest, window: Mapping[str, str]
) -> dict[str, str]:
    """G6: what a checkpoint publishes, ``fold(aggregate, window-so-far)``; the
    persisted aggregate itself is never written by a checkpoint."""
    return published_metrics(
        window, aggregate=progress(result, test).aggregate if segmented(test) else None
    )
