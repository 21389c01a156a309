"""JSON <-> model conversion with the apiserver's reading of a custom resource.

Why cattrs with per-field renames instead of ``attrs.asdict``: the wire names are
camelCase and live on the field metadata, optional fields must be *omitted* (Go
``omitempty``) rather than sent as ``null``, and reading must behave like the
apiserver does for a structural schema:

* unknown fields are dropped (pruning), so a newer manifest still reads;
* ``null`` on a field is treated as absent, and absent fields take the schema
  default (the attrs default carries it);
* primitives are checked strictly: ``"false"`` is not a boolean and ``"5"`` is not an
  integer. A malformed object raises :class:`MalformedObjectError`, which callers treat
  as a configuration error, never as a pass.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any, Final, TypeVar, get_args, get_type_hints

import attrs
import cattrs
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override

from glimmer.api.burnintest import API_VERSION
from glimmer.api.fields import Quantity, spec_of
from glimmer.api.kinds import KINDS_BY_NAME

__all__ = [
    "MalformedObjectError",
    "format_time",
    "from_json",
    "from_object",
    "parse_time",
    "to_json",
]

T = TypeVar("T")


class MalformedObjectError(ValueError):
    """An object whose JSON does not fit the v1alpha1 types."""


def format_time(value: datetime) -> str:
    """A status time on the wire (M8): RFC 3339, UTC ``Z``, exactly three fractional
    digits (``2026-12-02T15:04:05.123Z``).

    The one formatter of every time the controllers write into a status (and the
    model's ``datetime`` fields): whole seconds would make a sub-second attempt read
    "0 s" in a cluster report. The CRD fields are ``format: date-time``, which allows a
    fraction, and Go's ``metav1.Time`` reads one, so this stays wire compatible. The
    fraction is truncated, never rounded: a stamp is never later than the moment.
    """
    if value.tzinfo is None:
        raise ValueError("naive datetimes are ambiguous; use an aware UTC datetime")
    utc = value.astimezone(UTC).replace(tzinfo=None)
    return utc.isoformat(timespec="milliseconds") + "Z"


def parse_time(value: str) -> datetime:
    """Read an RFC3339 timestamp as an aware UTC datetime: whole seconds (what the Go
    implementation, the kubelet and older Glimmer versions write) or any fraction
    (what :func:`format_time` writes; digits past microseconds are dropped)."""
    parsed = datetime.fromisoformat(value)
    if parsed.tzinfo is None:
        raise ValueError(f"timestamp {value!r} has no time zone")
    return parsed.astimezone(UTC)


def _strict(kind: type[Any]) -> Callable[[Any, Any], Any]:
    def structure(value: Any, _: Any) -> Any:
        # bool is an int subclass; a JSON boolean is never a count.
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise TypeError(f"expected {kind.__name__}, got {type(value).__name__} {value!r}")
        return value

    return structure


def _structure_time(value: Any, _: Any) -> datetime:
    if not isinstance(value, str):
        raise TypeError(f"expected an RFC3339 string, got {value!r}")
    return parse_time(value)


def _structure_quantity(value: Any, _: Any) -> Quantity:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise TypeError(f"expected a quantity, got {value!r}")
    return Quantity(str(value))


def _is_int_or_string(type_: Any) -> bool:
    return set(get_args(type_)) == {int, str}


def _structure_int_or_string(value: Any, _: Any) -> int | str:
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise TypeError(f"expected an integer or a string, got {value!r}")
    return value


def _build_converter() -> cattrs.Converter:
    converter = cattrs.Converter()
    for kind in (str, int, bool):
        converter.register_structure_hook(kind, _strict(kind))
    converter.register_structure_hook(datetime, _structure_time)
    converter.register_unstructure_hook(datetime, format_time)
    converter.register_structure_hook(Quantity, _structure_quantity)
    converter.register_structure_hook_func(_is_int_or_string, _structure_int_or_string)

    def structure_factory(cls: type[Any]) -> Callable[[Any, Any], Any]:
        overrides = {a.name: override(rename=spec_of(a).json) for a in attrs.fields(cls)}
        # cattrs types **kwargs as its own bool options too, so a dict of overrides
        # cannot be expressed; the overrides are exactly the AttributeOverrides it takes.
        return make_dict_structure_fn(cls, converter, **overrides)  # type: ignore[arg-type]

    def unstructure_factory(cls: type[Any]) -> Callable[[Any], Any]:
        overrides = {
            a.name: override(rename=spec_of(a).json, omit_if_default=a.default is None)
            for a in attrs.fields(cls)
        }
        # As above: typed-kwargs limitation of cattrs, not a mismatch.
        return make_dict_unstructure_fn(cls, converter, **overrides)  # type: ignore[arg-type]

    converter.register_structure_hook_factory(attrs.has, structure_factory)
    converter.register_unstructure_hook_factory(attrs.has, unstructure_factory)
    return converter


_CONVERTER = _build_converter()


def _drop_nulls(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {key: _drop_nulls(item) for key, item in value.items() if item is not None}
    if isinstance(value, list):
        return [_drop_nulls(item) for item in value]
    return value


def _wire_names() -> dict[str, str]:
    """Attribute name -> JSON name over every model (one mapping: names are consistent)."""
    names: dict[str, str] = {}
    pending: list[type[Any]] = [info.model for info in KINDS_BY_NAME.values()]
    seen: set[type[Any]] = set()
    while pending:
        cls = pending.pop()
        if cls in seen:
            continue
        seen.add(cls)
        hints = get_type_hints(cls)
        for attribute in attrs.fields(cls):
            names.setdefault(attribute.name, spec_of(attribute).json)
            pending.extend(_attrs_classes(hints[attribute.name]))
    return names


def _attrs_classes(type_: Any) -> list[type[Any]]:
    if isinstance(type_, type) and attrs.has(type_):
        return [type_]
    return [found for arg in get_args(type_) for found in _attrs_classes(arg)]


_WIRE_NAMES: Final[dict[str, str]] = _wire_names()


def _to_wire_path(message: str) -> str:
    """Rewrite the attribute path cattrs reports (``$.spec.host_network``) in wire names."""
    head, sep, path = message.rpartition(" @ ")
    if not sep:
        return message
    return (
        head + sep + re.sub(r"[A-Za-z_][A-Za-z0-9_]*", lambda m: _WIRE_NAMES.get(m[0], m[0]), path)
    )


def to_json(obj: Any) -> dict[str, Any]:
    """The wire form of a model object (optional fields omitted when ``None``)."""
    result = _CONVERTER.unstructure(obj)
    if not isinstance(result, dict):
        raise TypeError(f"{type(obj).__name__} is not an API object")
    return result


def from_json(data: Mapping[str, Any], cls: type[T]) -> T:
    """Read ``data`` as ``cls``, the way the apiserver reads a structural object.

    For the six kinds, a ``kind`` or ``apiVersion`` other than the model's is refused:
    a BurnInRun must never be read as some other kind whose fields happen to fit.
    """
    _check_envelope(data, cls)
    try:
        return _CONVERTER.structure(_drop_nulls(data), cls)
    except (cattrs.BaseValidationError, TypeError, ValueError) as exc:
        details = (
            "; ".join(_to_wire_path(m) for m in cattrs.transform_error(exc))
            if isinstance(exc, cattrs.BaseValidationError)
            else str(exc)
        )
        raise MalformedObjectError(f"malformed {cls.__name__}: {details}") from exc


_ROOT_MODELS: Final[dict[type[Any], str]] = {
    info.model: info.kind for info in KINDS_BY_NAME.values()
}


def _check_envelope(data: Mapping[str, Any], cls: type[Any]) -> None:
    expected_kind = _ROOT_MODELS.get(cls)
    if expected_kind is None:
        return
    kind = data.get("kind")
    if kind is not None and kind != expected_kind:
        raise MalformedObjectError(f"expected kind {expected_kind}, got {kind!r}")
    api_version = data.get("apiVersion")
    if api_version is not None and api_version != API_VERSION:
        raise MalformedObjectError(f"expected apiVersion {API_VERSION}, got {api_version!r}")


def from_object(data: Mapping[str, Any]) -> Any:
    """Read any of the six kinds, dispatching on ``kind``."""
    kind = data.get("kind")
    info = KINDS_BY_NAME.get(kind) if isinstance(kind, str) else None
    if info is None:
        raise MalformedObjectError(f"not a burnin.glimmer.ai kind: {kind!r}")
    return from_json(data, info.model)
