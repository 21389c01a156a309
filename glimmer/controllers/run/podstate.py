"""What a runner pod's status says, read the way E15, E16 and A14 need it.

Start times come from the kubelet (``status.startTime`` or a container that is or was
running), never from pod creation: a stuck pod must not look like a slow test.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from glimmer.controllers.run import labels
from glimmer.verdict import Termination

#: Waiting reasons that mean the image will not arrive by waiting longer.
PERMANENT_IMAGE_REASONS: Final = frozenset({"InvalidImageName", "ErrImageNeverPull"})
#: Waiting reasons that usually mean the image cannot be pulled (retried by the kubelet).
IMAGE_PULL_REASONS: Final = frozenset({"ErrImagePull", "ImagePullBackOff"})


def _status(pod: Mapping[str, Any]) -> Mapping[str, Any]:
    return pod.get("status") or {}


def runner_status(pod: Mapping[str, Any]) -> Mapping[str, Any]:
    for entry in _status(pod).get("containerStatuses") or []:
        if entry.get("name") == labels.RUNNER_CONTAINER:
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
        if condition.get("type") == "PodScheduled" and condition.get("status") == "False":
            return str(condition.get("message") or condition.get("reason") or "")
    return ""


def termination(pod: Mapping[str, Any]) -> Termination:
    """A14: the pod-level reason when the pod Failed with one, else the runner container's
    terminated reason; with no terminated runner the code is -1 and the account comes from
    a waiting container or the pod."""
    status = _status(pod)
    pod_reason = str(status.get("reason") or "") if status.get("phase") == "Failed" else ""
    pod_message = str(status.get("message") or "")
    state = runner_status(pod).get("state") or {}
    done = state.get("terminated")
    if done is not None:
        return Termination(
            exit_code=int(done.get("exitCode", -1)),
            reason=pod_reason or str(done.get("reason") or ""),
            detail=pod_message if pod_reason else str(done.get("message") or ""),
            deadline_exceeded=pod_reason == "DeadlineExceeded",
        )
    reason, message = waiting(pod)
    return Termination(
        exit_code=-1,
        reason=pod_reason or reason or str(status.get("reason") or ""),
        detail=pod_message or message,
        deadline_exceeded=pod_reason == "DeadlineExceeded",
    )


def exit_code(pod: Mapping[str, Any]) -> int:
    done = (runner_status(pod).get("state") or {}).get("terminated")
    return -1 if done is None else int(done.get("exitCode", -1))


def owned_by(pod: Mapping[str, Any], uid: str) -> bool:
    refs = (pod.get("metadata") or {}).get("ownerReferences") or []
    return any(ref.get("uid") == uid and ref.get("controller") for ref in refs)


def live(pod: Mapping[str, Any]) -> bool:
    return not terminated(pod)
