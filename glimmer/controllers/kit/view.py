"""How the run controller sees a BurnInRun: the raw JSON object behind typed accessors.

I7's decision, for this controller and the ones that follow it: the object
stays the apiserver's JSON (so every write sends back exactly what was read, unknown
and newer fields included, with no re-encoding in between), and every *read* of
``metadata``, ``spec`` or ``status`` goes through :class:`RunView`. A field's meaning,
its coercion and its default live here once; the defaults are taken from the
``glimmer.api`` models (the attrs types the CRDs are generated from), so the CRD
schema's ``default``, the typed model and the controller cannot disagree. Writes edit
the status dict in place (:attr:`RunView.status` is that dict), and results are
decoded once per pass by the result codec (``glimmer.verdict.codec``), not here.

Reads never crash on a malformed value: an unreadable number reads as the API's
default, an unreadable list or map as empty.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import attrs

from glimmer.api import BurnInRunSpec, BurnInRunStatus
from glimmer.api.fields import spec_of
from glimmer.api.status_layout import status_results
from glimmer.controllers.kit import names
from glimmer.plan import PinnedPlan, PlanDecodeError
from glimmer.verdict import Phase
from glimmer.verdict.codec import int_or_default

JSON = dict[str, Any]


def _defaults(model: type[Any]) -> dict[str, Any]:
    """The schema defaults of ``model``, by wire name."""
    out: dict[str, Any] = {}
    for attribute in attrs.fields(model):
        spec = spec_of(attribute)
        if spec.has_default:
            out[spec.json] = spec.default
    return out


SPEC_DEFAULTS: Final = _defaults(BurnInRunSpec)
STATUS_DEFAULTS: Final = _defaults(BurnInRunStatus)


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list | tuple) else []


class ObjectView:
    """Typed reads of any object's metadata (``obj`` is the dict itself, not a copy):
    what every kind's view is built on, so no reconciler walks ``metadata`` itself."""

    __slots__ = ("obj",)

    def __init__(self, obj: JSON) -> None:
        self.obj = obj

    @property
    def meta(self) -> Mapping[str, Any]:
        return _map(self.obj.get("metadata"))

    @property
    def name(self) -> str:
        return str(self.meta.get("name") or "")

    @property
    def namespace(self) -> str:
        return str(self.meta.get("namespace") or "")

    @property
    def uid(self) -> str:
        return str(self.meta.get("uid") or "")

    @property
    def key(self) -> str:
        """``namespace/name`` (a workqueue key; ``/name`` for a cluster-scoped object)."""
        return f"{self.namespace}/{self.name}"

    @property
    def generation(self) -> int | None:
        return int_or_default(self.meta.get("generation"), None) or None

    @property
    def created_at(self) -> str | None:
        return self.meta.get("creationTimestamp") or None

    @property
    def deleting(self) -> bool:
        return bool(self.meta.get("deletionTimestamp"))

    @property
    def labels(self) -> Mapping[str, str]:
        return _map(self.meta.get("labels"))

    @property
    def annotations(self) -> Mapping[str, str]:
        return _map(self.meta.get("annotations"))

    @property
    def finalizers(self) -> list[str]:
        return [str(f) for f in _list(self.meta.get("finalizers"))]

    @property
    def owner_references(self) -> list[Mapping[str, Any]]:
        """The readable entries of ``metadata.ownerReferences`` (others are skipped)."""
        return [o for o in _list(self.meta.get("ownerReferences")) if isinstance(o, Mapping)]

    def controlled_by(self, uid: str) -> bool:
        """Whether the object's controller reference names ``uid``."""
        return any(o.get("controller") and o.get("uid") == uid for o in self.owner_references)

    def owned_by(self, uid: str) -> bool:
        """Whether any owner reference names ``uid``."""
        return any(o.get("uid") == uid for o in self.owner_references)

    @property
    def conditions(self) -> list[Mapping[str, Any]]:
        """The readable entries of ``status.conditions``."""
        status = _map(self.obj.get("status"))
        return [c for c in _list(status.get("conditions")) if isinstance(c, Mapping)]


class RunView(ObjectView):
    """Typed reads of one BurnInRun object (``obj`` is the dict itself, not a copy)."""

    __slots__ = ()

    @property
    def plan_text(self) -> str | None:
        """The pinned plan annotation (E5), if pinned."""
        return self.annotations.get(names.PLAN_ANNOTATION) or None

    def pinned_plan(self) -> PinnedPlan | None:
        """The pinned plan (E5) decoded, None when none is pinned; an unreadable one
        raises :class:`~glimmer.plan.PlanDecodeError` (the run then ends Error)."""
        text = self.plan_text
        return PinnedPlan.from_annotation(text) if text else None

    def readable_plan(self) -> PinnedPlan | None:
        """The pinned plan, or None when none is pinned or it cannot be read."""
        try:
            return self.pinned_plan()
        except PlanDecodeError:
            return None

    @property
    def cancelling(self) -> str | None:
        """E18's one-way cancel record (its reason), once written."""
        return self.annotations.get(names.CANCELLING_ANNOTATION)

    # --- spec -------------------------------------------------------------------------

    @property
    def spec(self) -> Mapping[str, Any]:
        return _map(self.obj.get("spec"))

    def _spec_int(self, key: str) -> int | None:
        value = int_or_default(self.spec.get(key), None)
        return value if value is not None else SPEC_DEFAULTS.get(key)

    def _spec_bool(self, key: str) -> bool:
        value = self.spec.get(key)
        return bool(value) if value is not None else bool(SPEC_DEFAULTS.get(key, False))

    @property
    def profile_ref(self) -> str:
        return str(self.spec.get("profileRef") or "")

    @property
    def target(self) -> Mapping[str, Any]:
        return _map(self.spec.get("target"))

    @property
    def node_names(self) -> list[str]:
        return [str(n) for n in _list(self.target.get("nodeNames"))]

    @property
    def node_selector(self) -> Mapping[str, Any]:
        return _map(self.target.get("nodeSelector"))

    @property
    def tolerations(self) -> list[Mapping[str, Any]]:
        return [t for t in _list(self.target.get("tolerations")) if isinstance(t, Mapping)]

    @property
    def max_concurrent_nodes(self) -> int:
        """E9's cap, read live each pass."""
        value = self._spec_int("maxConcurrentNodes")
        return value if value is not None else 1

    @property
    def retry_on_error_limit(self) -> int:
        """D3's Error budget, read live each pass."""
        return max(self._spec_int("retryOnErrorLimit") or 0, 0)

    @property
    def deadline_seconds(self) -> int:
        """E7's bound from ``status.startedAt``; 0 means none."""
        return max(self._spec_int("deadlineSeconds") or 0, 0)

    @property
    def ttl_seconds_after_finished(self) -> int:
        return max(self._spec_int("ttlSecondsAfterFinished") or 0, 0)

    @property
    def suspend(self) -> bool:
        return self._spec_bool("suspend")

    @property
    def baseline(self) -> bool:
        return self._spec_bool("baseline")

    @property
    def force(self) -> bool:
        return self._spec_bool("force")

    @property
    def cancel(self) -> bool:
        return self._spec_bool("cancel")

    @property
    def cancel_policy(self) -> str:
        return str(self.spec.get("cancelPolicy") or SPEC_DEFAULTS["cancelPolicy"])

    @property
    def cancel_reason(self) -> str:
        return str(self.spec.get("cancelReason") or "")

    # --- status -----------------------------------------------------------------------

    @property
    def status(self) -> JSON:
        """The status dict itself (created if absent): what a write edits."""
        status = self.obj.get("status")
        if not isinstance(status, dict):
            status = self.obj["status"] = {}
        return status

    @property
    def _status(self) -> Mapping[str, Any]:
        """The status for reading (never created by a read)."""
        return _map(self.obj.get("status"))

    @property
    def phase_text(self) -> str:
        """``status.phase`` as written ("" when unset)."""
        return str(self._status.get("phase") or "")

    @property
    def phase(self) -> Phase | None:
        """The phase, defaulted as the API defaults it; None when it is not one."""
        text = self.phase_text or str(STATUS_DEFAULTS["phase"])
        try:
            return Phase(text)
        except ValueError:
            return None

    @property
    def terminal(self) -> bool:
        phase = self.phase
        return phase is not None and phase.terminal

    @property
    def started_at(self) -> str | None:
        return self._status.get("startedAt") or None

    @property
    def finished_at(self) -> str | None:
        return self._status.get("finishedAt") or None

    @property
    def results(self) -> list[JSON]:
        """Every result: ``status.results`` entries (each a dict; anything else is
        dropped) after the compact records of ``status.packedResults``, if any."""
        return status_results(self._status)

    @property
    def counts(self) -> tuple[int, int, int, int]:
        """``(passed, failed, errored, skipped)`` as the status records them."""
        passed, failed, errored, skipped = (
            max(int_or_default(self._status.get(k), 0), 0)
            for k in ("passed", "failed", "errored", "skipped")
        )
        return passed, failed, errored, skipped

    @property
    def cordoned_nodes(self) -> list[str]:
        return [str(n) for n in _list(self._status.get("cordonedNodes"))]

    @property
    def prior_unschedulable(self) -> dict[str, bool]:
        prior = _map(self._status.get("priorUnschedulable"))
        return {str(k): bool(v) for k, v in prior.items()}

    @property
    def fingerprint(self) -> dict[str, str]:
        prints = _map(self._status.get("fingerprint"))
        return {str(k): str(v) for k, v in prints.items()}

    def held_nodes(self) -> set[str]:
        """Nodes this run holds by its status: its cordons and every open result's."""
        held = set(self.cordoned_nodes)
        for result in self.results:
            if result.get("phase") == str(Phase.RUNNING):
                held.update(str(n) for n in _list(result.get("nodes")))
        return held
