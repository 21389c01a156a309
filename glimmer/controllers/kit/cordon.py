"""Cordon stamps, prior schedulability and heat markers on Nodes (E6, E10-E12, E21).

Pure: each function reads a Node (as JSON) and returns the merge patches to write,
in order; the reconciler sends them with the node's resourceVersion as a
precondition, reading the node uncached first (E22). A stamp is the owning run's
:class:`~glimmer.controllers.kit.ref.RunRef`, as ``<namespace>/<name>/<uid>``. It is
never set without it: the stamp and ``spec.unschedulable=true`` go in one merge patch,
which the apiserver applies atomically (E10 asks for the stamp first so that a crash
between two writes leaves a harmless stamp, never an ownerless cordon; one write has no
"between", and costs one request a cordon instead of two, at fleet scale: I9). Another owner's
cordon is never taken.

A release hands back only what the run itself placed and nobody changed since
(:func:`release_decision`): the cordon stays when the node was unschedulable before
the run cordoned it (the start record, or what the node showed when the run stamped
it), when its ``prior-unschedulable`` annotation says ``true`` although the run
recorded ``false`` (the documented way for an admin to keep a node the run holds), or
when another field manager owns ``spec.unschedulable`` (an admin who uncordoned and
cordoned again, or server-side applied the cordon, while the run held the node).
``kubectl cordon`` on a node that is already unschedulable sends no request at all
(``node/<n> already cordoned``), and a patch that changes nothing is dropped by the
apiserver without a trace, so neither can be seen; docs/operations.md says what an
admin does instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from glimmer.controllers.kit import names
from glimmer.controllers.kit.core_view import NodeView
from glimmer.controllers.kit.ref import RunRef
from glimmer.controllers.kit.view import ObjectView
from glimmer.engine import FIELD_MANAGER, compact_node

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
    return NodeView(node).annotations


def unschedulable(node: Mapping[str, Any]) -> bool:
    return NodeView(node).unschedulable


def owner_of(node: Mapping[str, Any]) -> RunRef | None:
    return RunRef.parse(node_annotations(node).get(names.CORDON_OWNER))


def _precondition(node: Mapping[str, Any]) -> JSON:
    version = NodeView(node).resource_version
    return {"resourceVersion": version} if version else {}


def prior_for_capture(node: Mapping[str, Any]) -> bool:
    """E6: schedulability to restore later. A node already carrying *any* cordon-owner
    stamp reports its prior annotation, not its current (already cordoned) flag."""
    notes = node_annotations(node)
    if names.CORDON_OWNER in notes:
        return notes.get(names.PRIOR_UNSCHEDULABLE) == "true"
    return unschedulable(node)


def _heat_value(
    node: Mapping[str, Any], *, stamp: RunRef, heat_until: datetime | None
) -> str | bool | None:
    """The heat-marker value to write: a string, None to delete it, False to leave it."""
    current_text = node_annotations(node).get(names.HEAT_EXPECTED)
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
    if owner is None and names.CORDON_OWNER in node_annotations(node):
        return [], False  # an unparseable stamp is someone else's business
    heat = _heat_value(node, stamp=stamp, heat_until=heat_until)
    if owner is None:
        # An unstamped node that is unschedulable now was cordoned by someone else (the
        # run's own cordon is always stamped, and a release removes stamp and cordon in
        # one write): that cordon is restored later even if the node was schedulable
        # when the run started (an admin's cordon placed after the start, E12).
        stamp_notes: JSON = {
            names.CORDON_OWNER: stamp.render(),
            names.PRIOR_UNSCHEDULABLE: "true" if prior is True or unschedulable(node) else "false",
        }
        if heat is not False:
            stamp_notes[names.HEAT_EXPECTED] = heat
        stamp_and_cordon = {
            "metadata": {**_precondition(node), "annotations": stamp_notes},
            "spec": {"unschedulable": True},
        }
        return [stamp_and_cordon], True
    patch: JSON = {}
    if heat is not False:
        patch["metadata"] = {**_precondition(node), "annotations": {names.HEAT_EXPECTED: heat}}
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
    first["metadata"] = {**ObjectView(first).meta, **version}
    return [first, *patches[1:]]


@dataclass(frozen=True, slots=True)
class Release:
    """E12: the one write that hands a node back, and why it stays cordoned when the
    run's own record says the node was schedulable (someone else re-asserted the
    cordon; None for a plain restore)."""

    patch: JSON
    kept: str | None = None
    #: The write hands the cordon back on a view that says nothing of who wrote it (no
    #: ``managedFields``: a cache that drops them): decide again on a live read.
    blind: bool = False


def cordon_writers(node: Mapping[str, Any], *, ours: str = FIELD_MANAGER) -> list[str] | None:
    """The field managers other than ``ours`` that own ``spec.unschedulable``, as
    ``manager (operation time)``; None when the view carries no ``managedFields`` (a
    cache that dropped them, or a server that keeps none), so nothing can be said.

    The apiserver gives a manager ownership of a field only when its write changed the
    field (an update or patch) or named it (a server-side apply), and takes it away from
    every manager when the field is removed: so after the run's own cordon (which
    changed ``false`` to ``true``) another owner means someone else wrote the cordon
    since, or applied it. A no-op write leaves no trace at all (tested on the real
    apiserver: tests/integration/run/test_admin_cordon_survives_release.py)."""
    entries = _unschedulable_owners(node)
    if entries is None:
        return None
    writers: set[str] = set()
    for entry in entries:
        manager = str(entry.get("manager") or "")
        if manager == ours:
            continue
        when = " ".join(str(entry[k]) for k in ("operation", "time") if entry.get(k))
        writers.add((manager or "an unnamed manager") + (f" ({when})" if when else ""))
    return sorted(writers)


def _unschedulable_owners(node: Mapping[str, Any]) -> list[Mapping[str, Any]] | None:
    """The ``managedFields`` entries that own ``spec.unschedulable`` (the main resource,
    not a subresource); None when the view carries no ``managedFields``."""
    entries = NodeView(node).managed_fields
    if entries is None:
        return None
    owners: list[Mapping[str, Any]] = []
    for entry in entries:
        if entry.get("subresource"):
            continue
        fields = entry.get("fieldsV1")
        spec = fields.get("f:spec") if isinstance(fields, Mapping) else None
        if isinstance(spec, Mapping) and "f:unschedulable" in spec:
            owners.append(entry)
    return owners


def release_decision(
    node: Mapping[str, Any], *, stamp: RunRef, prior: bool | None, ours: str = FIELD_MANAGER
) -> Release | None:
    """E12: restore what was there if the stamp is still ours; None when it is not.

    The node goes back to schedulable only if nobody but the run cordoned it: it stays
    cordoned when ``prior`` (the run's start record; None: the node's prior annotation)
    says it was unschedulable, when the prior annotation says ``true`` although the
    record says ``false`` (the node was cordoned by someone else when the run stamped
    it, or an admin set the annotation since), or when another field manager owns
    ``spec.unschedulable`` (:func:`cordon_writers`)."""
    owner = owner_of(node)
    if owner is None or owner.uid != stamp.uid:
        return None
    annotated = node_annotations(node).get(names.PRIOR_UNSCHEDULABLE) == "true"
    restore = prior if prior is not None else annotated
    kept: str | None = None
    if not restore and annotated:
        kept = (
            f"its {names.PRIOR_UNSCHEDULABLE} annotation says true (it was cordoned by "
            "someone else when the run cordoned it, or the annotation was set since)"
        )
    writers: list[str] | None = []
    if not restore and kept is None and unschedulable(node):
        writers = cordon_writers(node, ours=ours)
        if writers:
            kept = (
                f"spec.unschedulable was written by {', '.join(writers)} while the run "
                "held the node"
            )
    notes: JSON = {names.CORDON_OWNER: None, names.PRIOR_UNSCHEDULABLE: None}
    heat = HeatMarker.parse(node_annotations(node).get(names.HEAT_EXPECTED))
    if heat is not None and heat.stamp.uid == stamp.uid:
        notes[names.HEAT_EXPECTED] = None
    patch = {
        "metadata": {**_precondition(node), "annotations": notes},
        "spec": {"unschedulable": True if restore or kept is not None else None},
    }
    return Release(patch=patch, kept=kept, blind=writers is None)


def release_patch(node: Mapping[str, Any], *, stamp: RunRef, prior: bool | None) -> JSON | None:
    """:func:`release_decision`'s write alone."""
    decision = release_decision(node, stamp=stamp, prior=prior)
    return decision.patch if decision is not None else None


def kept_message(node: str, kept: str) -> str:
    """The Event that says why a released node stays cordoned."""
    return f"node {node} stays cordoned after the run released it: {kept}"


def compact_cordon_node(obj: JSON) -> JSON:
    """:func:`~glimmer.engine.compact_node`, keeping of ``managedFields`` only the
    entries that own ``spec.unschedulable`` (cut to that field), so that a release
    decided on the cached node sees who wrote its cordon (:func:`cordon_writers`)
    without a live read. The list is always there, empty when nobody owns the field
    (what a live read would say too), so a cached node says it kept the owners."""
    owners = _unschedulable_owners(obj) or []
    compacted = compact_node(obj)
    compacted.setdefault("metadata", {})["managedFields"] = [
        {
            **{k: entry[k] for k in ("manager", "operation", "time") if k in entry},
            "fieldsV1": {"f:spec": {"f:unschedulable": {}}},
        }
        for entry in owners
    ]
    return compacted


def reap_decision(node: Mapping[str, Any], *, owner_alive: bool) -> Release | None:
    """E21: a stamp whose run is gone (NotFound or another UID) is removed and the
    node's schedulability restored from its prior annotation (unless someone else
    wrote its cordon, :func:`release_decision`)."""
    owner = owner_of(node)
    if owner is None or owner_alive:
        return None
    return release_decision(node, stamp=owner, prior=None)


def reap_patch(node: Mapping[str, Any], *, owner_alive: bool) -> JSON | None:
    """:func:`reap_decision`'s write alone."""
    decision = reap_decision(node, owner_alive=owner_alive)
    return decision.patch if decision is not None else None


def heat_until(now: datetime, *, seconds: int) -> datetime:
    return (now + timedelta(seconds=seconds)).replace(microsecond=0)
