"""What a runner pod's status says, read the way E15, E16 and A14 need it.

Start times come from the kubelet (``status.startTime`` or a container that is or was
running), never from pod creation: a stuck pod must not look like a slow test.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Any, Final

from glimmer.api import parse_time
from glimmer.api.vocabulary import ConditionStatus, PodPhase
from glimmer.controllers.kit.core_view import PodView
from glimmer.verdict import Termination
from glimmer.verdict.codec import int_or_default

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


def pinned_node(pod: Mapping[str, Any]) -> str:
    """The node the builder pinned the pod to (its hostname selector), "" if none."""
    return PodView(pod).pinned_node


def node_of(pod: Mapping[str, Any]) -> str:
    """The node the pod was bound to, else the one it was pinned to."""
    return PodView(pod).node


def runner_status(pod: Mapping[str, Any]) -> Mapping[str, Any]:
    return PodView(pod).runner_status


def _ended(view: PodView) -> bool:
    return view.phase in (PodPhase.SUCCEEDED, PodPhase.FAILED)


def terminated(pod: Mapping[str, Any]) -> bool:
    return _ended(PodView(pod))


def started_at(pod: Mapping[str, Any]) -> str | None:
    """The kubelet's StartTime once the runner has run at all; None while it has not."""
    view = PodView(pod)
    running, done = view.runner_running, view.runner_terminated
    if not (running or done or _ended(view)):
        return None
    stamp = view.start_time or running.get("startedAt") or (done or {}).get("startedAt")
    return str(stamp) if stamp else None


def finished_at(pod: Mapping[str, Any]) -> str | None:
    return (PodView(pod).runner_terminated or {}).get("finishedAt")


def waiting(pod: Mapping[str, Any]) -> tuple[str, str]:
    """``(reason, message)`` of the runner container's Waiting state ("" when none)."""
    return _waiting(PodView(pod))


def _waiting(view: PodView) -> tuple[str, str]:
    wait = view.runner_waiting
    return str(wait.get("reason", "")), str(wait.get("message", ""))


def scheduler_message(pod: Mapping[str, Any]) -> str:
    for condition in PodView(pod).conditions_of("PodScheduled", ConditionStatus.FALSE):
        return str(condition.get("message") or condition.get("reason") or "")
    return ""


def termination(pod: Mapping[str, Any]) -> Termination:
    """A14: the pod-level reason when the pod Failed with one, else the runner container's
    terminated reason; with no terminated runner the code is -1 and the account comes from
    a waiting container or the pod. I17: ``interrupted`` when anything but the runner
    ended it, with what did in ``reason``/``detail``."""
    view = PodView(pod)
    pod_reason = view.reason if view.phase == PodPhase.FAILED else ""
    pod_message = view.message
    done = view.runner_terminated
    stopper = _interruption(view)
    if done is not None:
        account = Termination(
            exit_code=_exit_code(done),
            reason=pod_reason or str(done.get("reason") or ""),
            detail=pod_message if pod_reason else str(done.get("message") or ""),
            deadline_exceeded=pod_reason == "DeadlineExceeded",
        )
    else:
        reason, message = _waiting(view)
        account = Termination(
            exit_code=-1,
            reason=pod_reason or reason or view.reason,
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
    return _interruption(PodView(pod))


def _interruption(view: PodView) -> tuple[str, str] | None:
    if view.phase == PodPhase.FAILED and view.reason:
        return view.reason, view.message
    done = view.runner_terminated
    if done is not None and str(done.get("reason") or "") not in SELF_ENDED_REASONS:
        return str(done["reason"]), str(done.get("message") or "")
    finished = str(done.get("finishedAt") or "") if done is not None else ""
    for condition in view.conditions_of(DISRUPTION_CONDITION, ConditionStatus.TRUE):
        if not _strictly_before(finished, str(condition.get("lastTransitionTime") or "")):
            reason = str(condition.get("reason") or DISRUPTION_CONDITION)
            return reason, str(condition.get("message") or "")
    deleted = view.deletion_timestamp
    if deleted:
        # deletionTimestamp is the end of the grace period: the request came that long before.
        grace = view.deletion_grace_seconds
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


def _exit_code(done: Mapping[str, Any]) -> int:
    """A terminated state's exit code; -1 when it records none that can be read."""
    return int_or_default(done.get("exitCode"), -1)


def exit_code(pod: Mapping[str, Any]) -> int:
    done = PodView(pod).runner_terminated
    return -1 if done is None else _exit_code(done)


def owned_by(pod: Mapping[str, Any], uid: str) -> bool:
    return PodView(pod).controlled_by(uid)


def live(pod: Mapping[str, Any]) -> bool:
    return not terminated(pod)


#: The apiserver's default ``terminationGracePeriodSeconds``.
DEFAULT_GRACE_SECONDS: Final = 30


def grace_seconds(pod: Mapping[str, Any]) -> int:
    """The pod's termination grace period: how long the kubelet waits after SIGTERM."""
    value = PodView(pod).spec.get("terminationGracePeriodSeconds")
    return value if isinstance(value, int) and value >= 0 else DEFAULT_GRACE_SECONDS
