"""Schema metadata carried on attrs fields.

The Python types, the CRD OpenAPI schemas and ``docs/api.md`` are all derived from
the attrs classes in this package, so each field states its JSON name, validation
and description exactly once, here, via :func:`field`. The schema generator
(``glimmer.api.crd``) and the converter (``glimmer.api.convert``) read that metadata
back with :func:`spec_of`; nothing else keeps a parallel list of names.

Defaults follow the apiserver: a field with a schema ``default`` is never ``None`` in
Python (it holds the default, exactly what a server-defaulted object would read back
as), a field without one is ``None`` when absent, and a required field has no Python
default at all.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum
from typing import Any, Final, NewType

import attrs

METADATA_KEY: Final = "glimmer.api"

#: A resource quantity (``"2Gi"``, ``"500m"``); the apiserver also accepts a bare
#: number, which the converter normalises to its decimal string.
Quantity = NewType("Quantity", str)

#: The Kubernetes int-or-string pattern for quantities (as controller-gen emits it).
QUANTITY_PATTERN: Final = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?"
    r"(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)


@attrs.frozen
class Rule:
    """One ``x-kubernetes-validations`` (CEL) rule on an object schema."""

    rule: str
    message: str
    field_path: str | None = None


@attrs.frozen(kw_only=True)
class FieldSpec:
    """Everything the schema and the docs need to know about one field."""

    json: str
    description: str
    required: bool = False
    default: Any = None
    has_default: bool = False
    enum: tuple[str, ...] | None = None
    minimum: int | None = None
    maximum: int | None = None
    min_length: int | None = None
    max_length: int | None = None
    min_items: int | None = None
    max_items: int | None = None
    pattern: str | None = None
    fmt: str | None = None
    list_type: str | None = None
    list_map_keys: tuple[str, ...] | None = None
    map_type: str | None = None
    #: Why a limit exists that the upstream reference lacks (documented in the docs).
    limit_note: str | None = None


_UNSET: Final[Any] = object()


def field(
    *,
    json: str,
    description: str,
    required: bool = False,
    default: Any = _UNSET,
    factory: Callable[[], Any] | None = None,
    enum: tuple[str, ...] | list[str] | type[Enum] | None = None,
    minimum: int | None = None,
    maximum: int | None = None,
    min_length: int | None = None,
    max_length: int | None = None,
    min_items: int | None = None,
    max_items: int | None = None,
    pattern: str | None = None,
    fmt: str | None = None,
    list_type: str | None = None,
    list_map_keys: tuple[str, ...] | None = None,
    map_type: str | None = None,
    limit_note: str | None = None,
) -> Any:
    """An attrs field that also carries its wire name and OpenAPI validation.

    ``default`` is both the Python default and the schema ``default`` (only scalar
    defaults exist in this API). Required fields get no Python default; optional
    fields without a default read as ``None`` when absent. ``factory`` is a
    Python-only default (no schema default), for envelope fields like ``metadata``.
    """
    if required and default is not _UNSET:
        raise ValueError(f"{json}: a required field cannot have a default")
    enum_values: tuple[str, ...] | None
    if enum is None:
        enum_values = None
    elif isinstance(enum, type):
        enum_values = tuple(str(member.value) for member in enum.__members__.values())
    else:
        enum_values = tuple(enum)
    spec = FieldSpec(
        json=json,
        description=description,
        required=required,
        default=None if default is _UNSET else default,
        has_default=default is not _UNSET,
        enum=enum_values,
        minimum=minimum,
        maximum=maximum,
        min_length=min_length,
        max_length=max_length,
        min_items=min_items,
        max_items=max_items,
        pattern=pattern,
        fmt=fmt,
        list_type=list_type,
        list_map_keys=list_map_keys,
        map_type=map_type,
        limit_note=limit_note,
    )
    metadata = {METADATA_KEY: spec}
    if factory is not None:
        return attrs.field(kw_only=True, factory=factory, metadata=metadata)
    if required:
        return attrs.field(kw_only=True, metadata=metadata)
    if default is _UNSET:
        return attrs.field(kw_only=True, default=None, metadata=metadata)
    return attrs.field(kw_only=True, default=default, metadata=metadata)


def spec_of(attribute: attrs.Attribute[Any]) -> FieldSpec:
    """The schema metadata of an attrs attribute declared with :func:`field`."""
    spec = attribute.metadata.get(METADATA_KEY)
    if not isinstance(spec, FieldSpec):
        raise TypeError(f"{attribute.name} was not declared with glimmer.api.fields.field()")
    return spec
