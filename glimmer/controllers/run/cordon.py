"""Cordon stamps, prior schedulability and heat markers on Nodes (E6, E10-E12, E21).

Pure: each function reads a Node (as JSON) and returns the merge patches to write,
in order; the reconciler sends them with the node's resourceVersion as a
precondition, reading the node uncached first (E22). A stamp is the owning run's
:class:`~glimmer.controllers.run.ref.RunRef`, as ``<namespace>/<name>/<uid>``. It is
never set without it: the stamp and ``spec.unschedulable=true`` go in one merge patch,
which the apiserver applies atomically (E10 asks for the stamp first so that a crash
between two writes leaves a harmless stamp, never an ownerless cordon; one write has no
"between", and costs one request a cordon instead of two: issue 18). Another owner's
cordon is never taken.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from glimmer.controllers.run import labels
from glimmer.controllers.run.ref import RunRef

JSON = dict[str, Any]


@dataclass(frozen=True, slots=True)
class HeatMarker:
    """``<namespace>/<name>/<uid>/<RFC3339 UTC expiry>``: a deliberate soak, not a fault."""

    stamp: RunRef
    expiry: datetime

    def render(self) -> str:
        return f"{self.stamp.render()}/{self.expiry.astimezone(UTC):%Y-%m-%dT%H:%M:%SZ}"

    @classmethod
    def parse(cls, text: str | None) -> HeatMarker | None:
        if not text:
            return None
        parts = text.split("/")
        if len(parts) != 4 or not all(parts):
            return None
        try:
            expiry = datetime.strptime(parts[3], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
        except ValueError:
            return None
        return cls(stamp=RunRef(parts[0], parts[1], parts[2]), expiry=expiry)


def node_annotations(node: Mapping[str, Any]) -> Mapping[str, str]:
    return (node.get("metadata") or {}).get("annotations") or {}


def unschedulable(node: Mapping[str, Any]) -> bool:
    return bool((node.get("spec") or {}).get("unschedulable"))


def owner_of(node: Mapping[str, Any]) -> RunRef | None:
    return RunRef.parse(node_annotations(node).get(labels.CORDON_OWNER))


def _precondition(node: Mapping[str, Any]) -> JSON:
    version = (node.get("metadata") or {}).get("resourceVersion")
    return {"resourceVersion": version} if version else {}


def prior_for_capture(node: Mapping[str, Any]) -> bool:
    """E6: schedulability to restore later. A node already carrying *any* cordon-owner
    stamp reports its prior annotation, not its current (already cordoned) flag."""
    notes = node_annotations(node)
    if labels.CORDON_OWNER in notes:
        return notes.get(labels.PRIOR_UNSCHEDULABLE) == "true"
    return unschedulable(node)


def _heat_value(
    node: Mapping[str, Any], *, stamp: RunRef, heat_until: datetime | None
) -> str | bool | None:
    """The heat-marker value to write: a string, None to delete it, False to leave it."""
    current_text = node_annotations(node).get(labels.HEAT_EXPECTED)
    current = HeatMarker.parse(current_text)
    ours = current is not None and current.stamp.uid == stamp.uid
    if current_text and not ours:
        return False  # another run's or an unparseable marker: never touched
    if heat_until is None:
        return None if ours else False  # a non-load test withdraws our own marker
    if current is not None and ours and current.expiry >= heat_until:
        return False  # expiry only moves forward
    return HeatMarker(stamp=stamp, expiry=heat_until).render()


def cordon_patches(
    node: Mapping[str, Any],
    *,
    stamp: RunRef,
    prior: bool | None,
    heat_until: datetime | None,
) -> tuple[list[JSON], bool]:
    """E10/E11: the patch that cordons ``node`` for ``stamp`` (a list of at most one:
    stamp, prior, heat marker and ``unschedulable`` together), and whether the run
    should record the node in ``status.cordonedNodes``.

    ``prior`` is the run's start-time record for this node (None: fall back to what is
    observed). ``heat_until`` is set only for sustained-load kinds.
    """
    owner = owner_of(node)
    if owner is not None and owner.uid != stamp.uid:
        return [], False
    if owner is None and labels.CORDON_OWNER in node_annotations(node):
        return [], False  # an unparseable stamp is someone else's business
    heat = _heat_value(node, stamp=stamp, heat_until=heat_until)
    if owner is None:
        stamp_notes: JSON = {
            labels.CORDON_OWNER: stamp.render(),
            labels.PRIOR_UNSCHEDULABLE: "true"
            if (prior if prior is not None else unschedulable(node))
            else "false",
        }
        if heat is not False:
            stamp_notes[labels.HEAT_EXPECTED] = heat
        stamp_and_cordon = {
            "metadata": {**_precondition(node), "annotations": stamp_notes},
            "spec": {"unschedulable": True},
        }
        return [stamp_and_cordon], True
    patch: JSON = {}
    if heat is not False:
        patch["metadata"] = {**_precondition(node), "annotations": {labels.HEAT_EXPECTED: heat}}
    if not unschedulable(node):
        patch["spec"] = {"unschedulable": True}
    return ([patch] if patch else []), True


def conditioned(patches: list[JSON], node: Mapping[str, Any]) -> list[JSON] | None:
    """``patches`` with the first one preconditioned on ``node``'s resourceVersion, so
    that a node read from a cache is written only if the cache was current (a stale
    view is a 409, never a write); None when nothing is to be written or ``node`` has
    no resourceVersion to condition on."""
    version = _precondition(node)
    if not patches or not version:
        return None
    first = dict(patches[0])
    first["metadata"] = {**(first.get("metadata") or {}), **version}
    return [first, *patches[1:]]


def release_patch(node: Mapping[str, Any], *, stamp: RunRef, prior: bool | None) -> JSON | None:
    """E12: restore what was there if the stamp is still ours; None when it is not."""
    owner = owner_of(node)
    if owner is None or owner.uid != stamp.uid:
        return None
    if prior is None:
        prior = node_annotations(node).get(labels.PRIOR_UNSCHEDULABLE) == "true"
    notes: JSON = {labels.CORDON_OWNER: None, labels.PRIOR_UNSCHEDULABLE: None}
    heat = HeatMarker.parse(node_annotations(node).get(labels.HEAT_EXPECTED))
    if heat is not None and heat.stamp.uid == stamp.uid:
        notes[labels.HEAT_EXPECTED] = None
    return {
        "metadata": {**_precondition(node), "annotations": notes},
        "spec": {"unschedulable": prior or None},
    }


def reap_patch(node: Mapping[str, Any], *, owner_alive: bool) -> JSON | None:
    """E21: a stamp whose run is gone (NotFound or another UID) is removed and the
    node's schedulability restored from its prior annotation."""
    owner = owner_of(node)
    if owner is None or owner_alive:
        return None
    return release_patch(node, stamp=owner, prior=None)


def heat_until(now: datetime, *, seconds: int) -> datetime:
    return (now + timedelta(seconds=seconds)).replace(microsecond=0)
