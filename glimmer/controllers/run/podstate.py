"""What a runner pod's status says, read the way E15, E16 and A14 need it.

Start times come from the kubelet (``status.startTime`` or a container that is or was
running), never from pod creation: a stuck pod must not look like a slow test.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Any, Final

from glimmer.api import parse_time
from glimmer.api.vocabulary import ConditionStatus
from glimmer.controllers.kit import names
from glimmer.verdict import Termination

#: Waiting reasons that mean the image will not arrive by waiting longer.
PERMANENT_IMAGE_REASONS: Final = frozenset({"InvalidImageName", "ErrImageNeverPull"})
#: Waiting reasons that usually mean the image cannot be pulled (retried by the kubelet).
IMAGE_PULL_REASONS: Final = frozenset({"ErrImagePull", "ImagePullBackOff"})
#: Terminated reasons of a runner container that ended by itself (its exit code
#: decides). Any other (OOMKilled, ContainerStatusUnknown, StartError...) means the
#: kubelet or the runtime ended it.
SELF_ENDED_REASONS: Final = frozenset({"", "Completed", "Error"})
#: The pod condition the kubelet, the eviction API, the scheduler (preemption) and the
#: taint manager set on a pod they are about to stop.
DISRUPTION_CONDITION: Final = "DisruptionTarget"


def _status(pod: Mapping[str, Any]) -> Mapping[str, Any]:
    return pod.get("status") or {}


def pinned_node(pod: Mapping[str, Any]) -> str:
    """The node the builder pinned the pod to (its hostname selector), "" if none."""
    selector = (pod.get("spec") or {}).get("nodeSelector") or {}
    return str(selector.get(names.HOSTNAME_LABEL) or "")


def node_of(pod: Mapping[str, Any]) -> str:
    """The node the pod was bound to, else the one it was pinned to."""
    return str((pod.get("spec") or {}).get("nodeName") or "") or pinned_node(pod)


def runner_status(pod: Mapping[str, Any]) -> Mapping[str, Any]:
    for entry in _status(pod).get("containerStatuses") or []:
        if entry.get("name") == names.RUNNER_CONTAINER:
            return dict(entry)
    return {}


def terminated(pod: Mapping[str, Any]) -> bool:
    return _status(pod).get("phase") in ("Succeeded", "Failed")


def started_at(pod: Mapping[str, Any]) -> str | None:
    """The kubelet's StartTime once the runner has run at all; None while it has not."""
    state = runner_status(pod).get("state") or {}
    if not (state.get("running") or state.get("terminated") or terminated(pod)):
        return None
    stamp = (
        _status(pod).get("startTime")
        or (state.get("running") or {}).get("startedAt")
        or (state.get("terminated") or {}).get("startedAt")
    )
    return str(stamp) if stamp else None


def finished_at(pod: Mapping[str, Any]) -> str | None:
    state = runner_status(pod).get("state") or {}
    return (state.get("terminated") or {}).get("finishedAt")


def waiting(pod: Mapping[str, Any]) -> tuple[str, str]:
    """``(reason, message)`` of the runner container's Waiting state ("" when none)."""
    state = runner_status(pod).get("state") or {}
    wait = state.get("waiting") or {}
    return str(wait.get("reason", "")), str(wait.get("message", ""))


def scheduler_message(pod: Mapping[str, Any]) -> str:
    for condition in _status(pod).get("conditions") or []:
        if (
            condition.get("type") == "PodScheduled"
            and condition.get("status") == ConditionStatus.FALSE
        ):
            return str(condition.get("message") or condition.get("reason") or "")
    return ""


def termination(pod: Mapping[str, Any]) -> Termination:
    """A14: the pod-level reason when the pod Failed with one, else the runner container's
    terminated reason; with no terminated runner the code is -1 and the account comes from
    a waiting container or the pod. I17: ``interrupted`` when anything but the runner
    ended it, with what did in ``reason``/``detail``."""
    status = _status(pod)
    pod_reason = str(status.get("reason") or "") if status.get("phase") == "Failed" else ""
    pod_message = str(status.get("message") or "")
    state = runner_status(pod).get("state") or {}
    done = state.get("terminated")
    stopper = interruption(pod)
    if done is not None:
        account = Termination(
            exit_code=int(done.get("exitCode", -1)),
            reason=pod_reason or str(done.get("reason") or ""),
            detail=pod_message if pod_reason else str(done.get("message") or ""),
            deadline_exceeded=pod_reason == "DeadlineExceeded",
        )
    else:
        reason, message = waiting(pod)
        account = Termination(
            exit_code=-1,
            reason=pod_reason or reason or str(status.get("reason") or ""),
            detail=pod_message or message,
            deadline_exceeded=pod_reason == "DeadlineExceeded",
        )
    if stopper is None:
        return account
    return Termination(
        exit_code=account.exit_code,
        reason=stopper[0],
        detail=stopper[1],
        deadline_exceeded=account.deadline_exceeded,
        interrupted=True,
    )


def interruption(pod: Mapping[str, Any]) -> tuple[str, str] | None:
    """``(reason, detail)`` of whatever ended the runner when the runner did not end by
    itself (I17), None when it did.

    The kubelet's own terminal account (a Failed pod with a pod-level reason: Evicted,
    DeadlineExceeded, node shutdown, admission), a container the runtime ended
    (OOMKilled...), a DisruptionTarget condition (eviction, preemption, taint manager,
    node pressure) or a deletion; the last two only when the runner was still running
    when they came (a runner that finished first completed on its own)."""
    status = _status(pod)
    if status.get("phase") == "Failed" and status.get("reason"):
        return str(status["reason"]), str(status.get("message") or "")
    done = (runner_status(pod).get("state") or {}).get("terminated")
    if done is not None and str(done.get("reason") or "") not in SELF_ENDED_REASONS:
        return str(done["reason"]), str(done.get("message") or "")
    finished = str(done.get("finishedAt") or "") if done is not None else ""
    for condition in status.get("conditions") or []:
        if (
            condition.get("type") != DISRUPTION_CONDITION
            or condition.get("status") != ConditionStatus.TRUE
        ):
            continue
        if not _strictly_before(finished, str(condition.get("lastTransitionTime") or "")):
            reason = str(condition.get("reason") or DISRUPTION_CONDITION)
            return reason, str(condition.get("message") or "")
    meta = pod.get("metadata") or {}
    deleted = str(meta.get("deletionTimestamp") or "")
    if deleted:
        # deletionTimestamp is the end of the grace period: the request came that long before.
        grace = int(meta.get("deletionGracePeriodSeconds") or 0)
        if not _strictly_before(finished, deleted, minus_seconds=grace):
            return "Deleted", f"the pod was deleted (deletionTimestamp {deleted}) while it ran"
    return None


def _strictly_before(first: str, second: str, *, minus_seconds: int = 0) -> bool:
    """``first < second - minus_seconds``; False when either is missing or unreadable, so
    an unprovable order reads as "the runner did not finish first" (fail closed)."""
    try:
        return parse_time(first) < parse_time(second) - timedelta(seconds=minus_seconds)
    except (ValueError, TypeError):
        return False


def exit_code(pod: Mapping[str, Any]) -> int:
    done = (runner_status(pod).get("state") or {}).get("terminated")
    return -1 if done is None else int(done.get("exitCode", -1))


def owned_by(pod: Mapping[str, Any], uid: str) -> bool:
    refs = (pod.get("metadata") or {}).get("ownerReferences") or []
    return any(ref.get("uid") == uid and ref.get("controller") for ref in refs)


def live(pod: Mapping[str, Any]) -> bool:
    return not terminated(pod)
