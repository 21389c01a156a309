"""Unknown fields in a manifest, found against the CRD schema glimmer.api generates.

The operator never sees an unknown field: the apiserver refuses it under strict field
validation or prunes it. The CLI reads files directly, so without this check a typo
is read as absence: ``treshold:`` means no gates, and a misspelt ``requried: false``
leaves a test required. The schema is the one the CRDs are generated from, so every
field the cluster accepts is accepted here and nothing else: BurnInTest and
BurnInProfile documents, inline profile tests and their variants alike.

Only field *names* are judged (the apiserver's ``unknown field "spec.treshold"``);
types and values stay with the readers and the plan, which word their own fixes.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any, Final

from glimmer.local.strict_yaml import field_path

#: Kinds whose documents the CLI reads, and so checks.
CHECKED_KINDS: Final = ("BurnInTest", "BurnInProfile")

#: ``metadata`` is opaque in a CRD schema (the apiserver validates ObjectMeta itself).
OBJECT_META_FIELDS: Final[frozenset[str]] = frozenset(
    {
        "name",
        "generateName",
        "namespace",
        "selfLink",
        "uid",
        "resourceVersion",
        "generation",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "labels",
        "annotations",
        "ownerReferences",
        "finalizers",
        "managedFields",
    }
)


@functools.cache
def _root_schema(kind: str) -> Mapping[str, Any]:
    # Imported here: glimmer.api (attrs, cattrs) stays off the start-up path of commands
    # that never read a manifest.
    from glimmer.api.crd import crd_manifest
    from glimmer.api.kinds import KINDS_BY_NAME

    manifest = crd_manifest(KINDS_BY_NAME[kind])
    schema: Mapping[str, Any] = manifest["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    return schema


def unknown_fields(body: Mapping[str, Any]) -> list[str]:
    """Paths of fields in ``body`` that its kind's schema does not define, in order."""
    kind = body.get("kind")
    if kind not in CHECKED_KINDS:
        return []
    found: list[str] = []
    metadata = body.get("metadata")
    if isinstance(metadata, Mapping):
        found += [f"metadata.{key}" for key in metadata if key not in OBJECT_META_FIELDS]
    _walk(body, _root_schema(str(kind)), path=[], found=found, top=True)
    return found


def _walk(
    value: Any, schema: Mapping[str, Any], *, path: list[str | int], found: list[str], top: bool
) -> None:
    if schema.get("x-kubernetes-preserve-unknown-fields"):
        return
    if isinstance(value, Mapping):
        properties = schema.get("properties")
        extra = schema.get("additionalProperties")
        for key, item in value.items():
            if isinstance(properties, Mapping) and key in properties:
                if not (top and key == "metadata"):
                    _walk(item, properties[key], path=[*path, key], found=found, top=False)
            elif isinstance(extra, Mapping):
                _walk(item, extra, path=[*path, key], found=found, top=False)
            elif isinstance(properties, Mapping):
                found.append(field_path([*path, key]))
    elif isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, Mapping):
            for index, item in enumerate(value):
                _walk(item, items, path=[*path, index], found=found, top=False)
