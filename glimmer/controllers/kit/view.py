"""How the controllers see an object: the raw JSON behind typed accessors (any kind's
metadata, and Glimmer's own kinds: BurnInRun, NodeFingerprint, BurnInSchedule).

I7's decision, for this controller and the ones that follow it: the object
stays the apiserver's JSON (so every write sends back exactly what was read, unknown
and newer fields included, with no re-encoding in between), and every *read* of
``metadata``, ``spec`` or ``status`` goes through a view (:class:`RunView` and its
siblings here; Pods, Nodes and Services in :mod:`~glimmer.controllers.kit.core_view`),
rule I7. A field's meaning, its coercion and its default live here once; the defaults
are taken from the ``glimmer.api`` models (the attrs types the CRDs are generated
from), so the CRD schema's ``default``, the typed model and the controller cannot
disagree. Writes edit the status dict in place (:attr:`RunView.status` is that dict),
and results are decoded once per pass by the result codec (``glimmer.verdict.codec``),
not here.

Reads never crash on a malformed value: an unreadable number reads as the API's
default, an unreadable list or map as empty.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from typing import Any, Final, TypeGuard

import attrs

from glimmer.api import BurnInRunSpec, BurnInRunStatus, BurnInScheduleSpec
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
SCHEDULE_DEFAULTS: Final = _defaults(BurnInScheduleSpec)


def _is_map(value: Any) -> TypeGuard[Mapping[str, Any]]:
    # A dict (or an absent field) is told by type first: an isinstance check against the
    # Mapping ABC costs several times more, and these reads run per pod per pass.
    return type(value) is dict or (value is not None and isinstance(value, Mapping))


def _map(value: Any) -> Mapping[str, Any]:
    return value if _is_map(value) else {}


def _list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list | tuple) else []


def _entries(value: Any) -> list[Any] | tuple[Any, ...]:
    """A list to walk in place (not copied), or none."""
    return value if isinstance(value, list | tuple) else ()


def _maps(value: Any) -> list[Mapping[str, Any]]:
    """The readable (mapping) entries of a list; anything else is skipped."""
    return [v for v in _entries(value) if _is_map(v)]


def _whole(value: Any) -> int | None:
    """A JSON integer as stored (a boolean or a string of digits is not one), else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class ObjectView:
    """Typed reads of any object's metadata (``obj`` is the dict itself, not a copy):
    what every kind's view is built on, so no reconciler walks ``metadata`` itself."""

    __slots__ = ("obj",)

    def __init__(self, obj: Mapping[str, Any]) -> None:
        self.obj = obj

    # meta, spec and stored_status take a dict by type first: every other read starts there.

    @property
    def meta(self) -> Mapping[str, Any]:
        value = self.obj.get("metadata")
        return value if type(value) is dict else _map(value)

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
    def resource_version(self) -> str:
        return str(self.meta.get("resourceVersion") or "")

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
    def deletion_timestamp(self) -> str:
        """When a deletion's grace period ends ("" when the object is not being deleted)."""
        return str(self.meta.get("deletionTimestamp") or "")

    @property
    def deletion_grace_seconds(self) -> int:
        """The grace period a deletion gave (0 when none or unreadable)."""
        return max(int_or_default(self.meta.get("deletionGracePeriodSeconds"), 0), 0)

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
        return _maps(self.meta.get("ownerReferences"))

    def controlled_by(self, uid: str) -> bool:
        """Whether the object's controller reference names ``uid``."""
        for owner in _entries(self.meta.get("ownerReferences")):
            if _is_map(owner) and owner.get("controller") and owner.get("uid") == uid:
                return True
        return False

    def owned_by(self, uid: str) -> bool:
        """Whether any owner reference names ``uid``."""
        for owner in _entries(self.meta.get("ownerReferences")):
            if _is_map(owner) and owner.get("uid") == uid:
                return True
        return False

    @property
    def spec(self) -> Mapping[str, Any]:
        """The spec for reading (empty when absent or unreadable)."""
        value = self.obj.get("spec")
        return value if type(value) is dict else _map(value)

    @property
    def stored_status(self) -> Mapping[str, Any]:
        """The status for reading, as stored (never created by a read)."""
        value = self.obj.get("status")
        return value if type(value) is dict else _map(value)

    @property
    def conditions(self) -> list[Mapping[str, Any]]:
        """The readable entries of ``status.conditions``."""
        return _maps(self.stored_status.get("conditions"))

    def condition(self, type_: str) -> str | None:
        """The status text (compare with :class:`~glimmer.api.vocabulary.ConditionStatus`)
        of the first condition of ``type_``; None when there is none."""
        for entry in _entries(self.stored_status.get("conditions")):
            if _is_map(entry) and entry.get("type") == type_:
                return str(entry.get("status") or "")
        return None

    def conditions_of(self, type_: str, status: str) -> Iterator[Mapping[str, Any]]:
        """The conditions of ``type_`` whose status is ``status``, in order (for what
        else they say: reason, message, lastTransitionTime)."""
        for entry in _entries(self.stored_status.get("conditions")):
            if _is_map(entry) and entry.get("type") == type_ and entry.get("status") == status:
                yield entry


@functools.lru_cache(maxsize=32)
def _decoded_plan(text: str) -> PinnedPlan:
    """:meth:`PinnedPlan.from_annotation`, once per distinct text: every pass of a run
    reads its pinned plan, which never changes (a fleet's targets are thousands of
    names to decode). The plan is frozen and its test specs are read-only, so one
    decoded plan serves every reader; an unreadable text raises each time."""
    return PinnedPlan.from_annotation(text)


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
        return _decoded_plan(text) if text else None

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
        return _maps(self.target.get("tolerations"))

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
        """The status dict itself (created if absent): what a write edits. A run held
        as a read-only mapping (a cached object read in place) is never written."""
        status = self.obj.get("status")
        if isinstance(status, dict):
            return status
        if not isinstance(self.obj, dict):
            raise TypeError("a run read in place is never written")
        status = self.obj["status"] = {}
        return status

    @property
    def phase_text(self) -> str:
        """``status.phase`` as written ("" when unset)."""
        return str(self.stored_status.get("phase") or "")

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
        return self.stored_status.get("startedAt") or None

    @property
    def finished_at(self) -> str | None:
        return self.stored_status.get("finishedAt") or None

    @property
    def results(self) -> list[JSON]:
        """Every result: ``status.results`` entries (each a dict; anything else is
        dropped) after the compact records of ``status.packedResults``, if any."""
        return status_results(self.stored_status)

    @property
    def counts(self) -> tuple[int, int, int, int]:
        """``(passed, failed, errored, skipped)`` as the status records them."""
        passed, failed, errored, skipped = (
            max(int_or_default(self.stored_status.get(k), 0), 0)
            for k in ("passed", "failed", "errored", "skipped")
        )
        return passed, failed, errored, skipped

    @property
    def cordoned_nodes(self) -> list[str]:
        return [str(n) for n in _list(self.stored_status.get("cordonedNodes"))]

    @property
    def prior_unschedulable(self) -> dict[str, bool]:
        prior = _map(self.stored_status.get("priorUnschedulable"))
        return {str(k): bool(v) for k, v in prior.items()}

    @property
    def fingerprint(self) -> dict[str, str]:
        prints = _map(self.stored_status.get("fingerprint"))
        return {str(k): str(v) for k, v in prints.items()}

    def held_nodes(self) -> set[str]:
        """Nodes this run holds by its status: its cordons and every open result's."""
        held = set(self.cordoned_nodes)
        for result in self.results:
            if result.get("phase") == str(Phase.RUNNING):
                held.update(str(n) for n in _list(result.get("nodes")))
        return held


class FingerprintView(ObjectView):
    """Typed reads of one NodeFingerprint (``obj`` is the dict itself, not a copy)."""

    __slots__ = ()

    @property
    def node_name(self) -> str:
        """``spec.nodeName``: the node this fingerprint describes ("" when unreadable)."""
        name = self.spec.get("nodeName")
        return name if isinstance(name, str) else ""

    @property
    def max_verdict_age_seconds(self) -> int | None:
        """``spec.maxVerdictAgeSeconds`` when a positive integer, else None (the default)."""
        age = _whole(self.spec.get("maxVerdictAgeSeconds"))
        return age if age is not None and age > 0 else None

    @property
    def digest(self) -> str:
        """``status.digest`` ("" before the first capture)."""
        return str(self.stored_status.get("digest") or "")

    @property
    def captured_at(self) -> str:
        return str(self.stored_status.get("capturedAt") or "")

    @property
    def verdict(self) -> Mapping[str, Any] | None:
        """The bound ``status.verdict``, None when there is none (or it is unreadable)."""
        verdict = self.stored_status.get("verdict")
        return verdict if verdict and _is_map(verdict) else None

    @property
    def hardware_identity(self) -> Any:
        """``status.hardwareIdentity`` as stored (its reader, ``probe_from_json``, decides)."""
        return self.stored_status.get("hardwareIdentity")

    @property
    def gpus(self) -> list[Mapping[str, Any]]:
        """The readable entries of ``status.gpus``."""
        return _maps(self.stored_status.get("gpus"))


class ScheduleView(ObjectView):
    """Typed reads of one BurnInSchedule (``obj`` is the dict itself, not a copy); an
    integer field reads as stored (a string of digits is not one) or its default."""

    __slots__ = ()

    def _spec_count(self, key: str) -> int:
        value = _whole(self.spec.get(key))
        return value if value is not None else int(SCHEDULE_DEFAULTS[key])

    @property
    def schedule(self) -> str | None:
        """The cron expression as written (its parser refuses what is not one)."""
        value = self.spec.get("schedule")
        return value if isinstance(value, str) else None

    @property
    def time_zone(self) -> str | None:
        value = self.spec.get("timeZone")
        return value if isinstance(value, str) else None

    @property
    def suspend(self) -> bool:
        return self.spec.get("suspend") is True

    @property
    def concurrency_policy(self) -> str:
        return str(self.spec.get("concurrencyPolicy") or SCHEDULE_DEFAULTS["concurrencyPolicy"])

    @property
    def starting_deadline_seconds(self) -> int | None:
        return _whole(self.spec.get("startingDeadlineSeconds"))

    @property
    def successful_runs_history_limit(self) -> int:
        return self._spec_count("successfulRunsHistoryLimit")

    @property
    def failed_runs_history_limit(self) -> int:
        return self._spec_count("failedRunsHistoryLimit")

    @property
    def profile_ref(self) -> str | None:
        value = self.spec.get("profileRef")
        return value if isinstance(value, str) else None

    @property
    def target(self) -> Mapping[str, Any]:
        return _map(self.spec.get("target"))

    @property
    def target_verdicts(self) -> list[str]:
        return [str(v) for v in _list(self.spec.get("targetVerdicts"))]

    @property
    def max_verdict_age_seconds(self) -> int | None:
        return _whole(self.spec.get("maxVerdictAgeSeconds"))

    @property
    def run_template(self) -> Mapping[str, Any]:
        return _map(self.spec.get("runTemplate"))

    @property
    def last_schedule_time(self) -> str | None:
        value = self.stored_status.get("lastScheduleTime")
        return value if isinstance(value, str) and value else None
