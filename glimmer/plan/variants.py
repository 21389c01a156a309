"""Variant expansion (rule I1): one profile entry becomes one planned test per variant cell.

Expansion happens once, before anything else looks at the plan, so that every later
stage (validation, pinning, pod names, results) sees only concrete tests and never has
to know that a matrix existed. Overlays *replace* the parent's value and never merge
with it: merged thresholds would quietly keep a gate the author removed from a cell,
which is the mistake this rule exists to prevent. A variant's ``thresholds: []`` is
therefore "no gates", while an absent ``thresholds`` inherits the parent's.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from glimmer.plan import spec as specs
from glimmer.plan.pinned import PlannedTest

#: Variant fields copied over the parent spec when present (and not null). ``args`` and
#: ``env`` land inside ``runner``; the rest are top-level spec fields.
_TOP_LEVEL_OVERLAYS = ("durationSeconds", "thresholds", "repeatCount")
_RUNNER_OVERLAYS = ("args", "env")


def inline_name(*, entry_index: int, kind: str) -> str:
    """Planned name of an ``inline`` profile entry (api §3): ``inline-<entryIndex>-<kind>``."""
    return f"inline-{entry_index}-{kind}"


def normalise_spec(spec: Mapping[str, Any]) -> dict[str, Any]:
    """A private deep copy of ``spec`` with an empty/unset scope written as ``Node``."""
    result: dict[str, Any] = copy.deepcopy(dict(spec))
    result["scope"] = specs.scope(result)
    return result


def expand_entry(
    *, entry: Mapping[str, Any], name: str, spec: Mapping[str, Any]
) -> list[PlannedTest]:
    """Expand one profile entry whose test spec has been resolved to ``spec``.

    ``name`` is the entry's planned name (the BurnInTest's name, or the inline name).
    Without variants the entry is planned unchanged (scope normalised).
    """
    required = entry.get("required")
    if required is None:
        required = True  # the schema default: only an explicit false makes a test advisory
    if not isinstance(required, bool):
        raise specs.SpecError(f"profile entry {name!r}: required must be a boolean")
    base = normalise_spec(spec)
    variants = entry.get("variants")
    if not variants:
        return [PlannedTest(name=name, required=required, spec=base)]
    if not isinstance(variants, list | tuple):
        raise specs.SpecError(f"profile entry {name!r}: variants must be a list")
    return [
        _expand_variant(parent=name, required=required, base=base, variant=variant)
        for variant in variants
    ]


def _expand_variant(
    *, parent: str, required: bool, base: Mapping[str, Any], variant: Any
) -> PlannedTest:
    if not isinstance(variant, Mapping):
        raise specs.SpecError(f"{parent}: each variant must be an object, got {variant!r}")
    variant_name = variant.get("name")
    if not isinstance(variant_name, str) or not variant_name:
        raise specs.SpecError(f"{parent}: every variant needs a non-empty name")
    axes = _axes(variant, where=f"{parent}-{variant_name}")
    cell: dict[str, Any] = copy.deepcopy(dict(base))
    for key in _TOP_LEVEL_OVERLAYS:
        if variant.get(key) is not None:
            cell[key] = copy.deepcopy(variant[key])
    for key in _RUNNER_OVERLAYS:
        if variant.get(key) is not None:
            runner = cell.get("runner")
            if not isinstance(runner, dict):
                runner = {}
                cell["runner"] = runner
            runner[key] = copy.deepcopy(variant[key])
    return PlannedTest(
        name=f"{parent}-{variant_name}",
        required=required,
        spec=cell,
        axes=axes,
        parent=parent,
    )


def _axes(variant: Mapping[str, Any], *, where: str) -> dict[str, str]:
    raw = variant.get("axes")
    if raw is None:
        return {}
    if not isinstance(raw, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in raw.items()
    ):
        raise specs.SpecError(f"{where}: variant axes must map strings to strings")
    return dict(raw)
