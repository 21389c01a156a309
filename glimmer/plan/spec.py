"""Typed reads of a ``BurnInTestSpec`` mapping, with the wire defaults applied in one place.

The plan carries test specs exactly as they arrived on the wire (camelCase JSON), so
that what is pinned is what the author wrote. Every reader of a spec field goes
through these functions instead of indexing the mapping itself, because the defaults
(``scope`` ⇒ ``Node``, ``repeatCount`` ⇒ 1, ``durationSeconds`` 0/unset ⇒ 600 s at
execution time) and the type checks must agree between the plan builder, the pod
builder and the bare-host dispatcher. A value of the wrong JSON type (possible only
for objects that bypassed apiserver validation) raises :class:`SpecError` rather than
being coerced: a guessed duration or scope would be a plausible-looking wrong answer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

DEFAULT_SCOPE: Final = "Node"
SCOPES: Final[tuple[str, ...]] = ("Node", "Pair", "Group")

#: Execution window when ``durationSeconds`` is 0 or unset (api §2).
DEFAULT_DURATION_SECONDS: Final = 600


class SpecError(ValueError):
    """A spec field has a JSON type the schema does not allow."""


def _int(spec: Mapping[str, Any], key: str, *, where: str) -> int | None:
    value = spec.get(key)
    if value is None:
        return None
    # bool is an int subclass in Python; JSON true is never a number.
    if isinstance(value, bool) or not isinstance(value, int):
        raise SpecError(f"{where}.{key} must be an integer, got {value!r}")
    return value


def _mapping(spec: Mapping[str, Any], key: str, *, where: str) -> Mapping[str, Any] | None:
    value = spec.get(key)
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise SpecError(f"{where}.{key} must be an object, got {type(value).__name__}")
    return value


def _list(spec: Mapping[str, Any], key: str, *, where: str) -> Sequence[Any]:
    value = spec.get(key)
    if value is None:
        return ()
    if not isinstance(value, list | tuple):
        raise SpecError(f"{where}.{key} must be a list, got {type(value).__name__}")
    return value


def kind(spec: Mapping[str, Any]) -> str:
    value = spec.get("kind")
    if not isinstance(value, str) or not value:
        raise SpecError(f"spec.kind must be a non-empty string, got {value!r}")
    return value


def scope(spec: Mapping[str, Any]) -> str:
    """The declared scope, empty/unset normalised to ``Node`` (api §1.2).

    An unknown word is returned as is; the plan builder refuses it.
    """
    value = spec.get("scope")
    if value is None or value == "":
        return DEFAULT_SCOPE
    if not isinstance(value, str):
        raise SpecError(f"spec.scope must be a string, got {value!r}")
    return value


def duration_seconds(spec: Mapping[str, Any]) -> int:
    """The declared ``durationSeconds``; 0 when unset (0 means "use the default")."""
    return _int(spec, "durationSeconds", where="spec") or 0


def repeat_count(spec: Mapping[str, Any]) -> int:
    value = _int(spec, "repeatCount", where="spec")
    return 1 if value is None else value


def checkpoint_interval_seconds(spec: Mapping[str, Any]) -> int:
    return _int(spec, "checkpointIntervalSeconds", where="spec") or 0


def soak(spec: Mapping[str, Any]) -> Mapping[str, Any] | None:
    return _mapping(spec, "soak", where="spec")


def segment_seconds(spec: Mapping[str, Any]) -> int | None:
    """``soak.segmentSeconds``, or ``None`` when the test is not segmented."""
    block = soak(spec)
    if block is None:
        return None
    value = _int(block, "segmentSeconds", where="spec.soak")
    if value is None:
        raise SpecError("spec.soak.segmentSeconds is required when spec.soak is set")
    return value


def runner(spec: Mapping[str, Any]) -> Mapping[str, Any]:
    """The ``runner`` block, or an empty mapping when there is none."""
    return _mapping(spec, "runner", where="spec") or {}


def runner_image(spec: Mapping[str, Any]) -> str:
    value = runner(spec).get("image")
    if value is None:
        return ""
    if not isinstance(value, str):
        raise SpecError(f"spec.runner.image must be a string, got {value!r}")
    return value


def runner_env(spec: Mapping[str, Any]) -> Sequence[Mapping[str, Any]]:
    entries = _list(runner(spec), "env", where="spec.runner")
    for entry in entries:
        if not isinstance(entry, Mapping) or not isinstance(entry.get("name"), str):
            raise SpecError(f"spec.runner.env entries must be objects with a name: {entry!r}")
    return entries


def host_paths(spec: Mapping[str, Any]) -> Sequence[Mapping[str, Any]]:
    entries = _list(runner(spec), "hostPaths", where="spec.runner")
    for entry in entries:
        if not isinstance(entry, Mapping):
            raise SpecError(f"spec.runner.hostPaths entries must be objects: {entry!r}")
    return entries


def thresholds(spec: Mapping[str, Any]) -> Sequence[Mapping[str, Any]]:
    entries = _list(spec, "thresholds", where="spec")
    for entry in entries:
        if not isinstance(entry, Mapping):
            raise SpecError(f"spec.thresholds entries must be objects: {entry!r}")
    return entries


def resource_limits(spec: Mapping[str, Any]) -> Mapping[str, Any]:
    resources = _mapping(spec, "resources", where="spec") or {}
    return _mapping(resources, "limits", where="spec.resources") or {}
