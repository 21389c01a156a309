"""Variant expansion (rule I1): one profile entry becomes one planned test per variant cell.

Expansion happens once, before anything else looks at the plan, so that every later
stage (validation, pinning, pod names, results) sees only concrete tests and never has
to know that a matrix existed. Overlays *replace* the parent's value and never merge
with it: merged thresholds would quietly keep a gate the author removed from a cell,
which is the mistake this rule exists to prevent. A variant's ``thresholds: []`` is
therefore "no gates", while an absent ``thresholds`` inherits the parent's.

:func:`expand_profile` resolves and expands a whole profile without targets, so that
``glimmer lint`` reviews exactly the tests a run would evaluate (C4, C5).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
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


@dataclass(frozen=True)
class ProfileEntryTests:
    """What one profile entry plans: its concrete tests, and the BurnInTest it names."""

    index: int
    #: The ``testRef`` ("" for an inline entry).
    test_ref: str
    tests: tuple[PlannedTest, ...]


@dataclass(frozen=True)
class ProfileExpansion:
    """Every concrete test a profile plans (I1), without targets: what a run evaluates."""

    entries: tuple[ProfileEntryTests, ...]
    #: ``testRef`` names that ``tests`` did not hold, in entry order.
    unresolved: tuple[str, ...]

    @property
    def tests(self) -> tuple[PlannedTest, ...]:
        return tuple(test for entry in self.entries for test in entry.tests)


def expand_profile(
    *, profile: Mapping[str, Any], tests: Mapping[str, Mapping[str, Any]]
) -> ProfileExpansion:
    """Resolve each entry of ``profile`` (a BurnInProfile ``spec``) to its test spec,
    ``testRef`` from ``tests`` or ``inline``, and expand it with :func:`expand_entry`, as
    the plan builder does. A ``testRef`` missing from ``tests`` is listed, not guessed;
    an entry the builder would refuse raises ``SpecError`` naming it."""
    entries = profile.get("tests")
    if not isinstance(entries, list | tuple):
        raise specs.SpecError("profile spec.tests must be a list")
    found: list[ProfileEntryTests] = []
    unresolved: list[str] = []
    for index, entry in enumerate(entries):
        where = f"profile entry {index}"
        if not isinstance(entry, Mapping):
            raise specs.SpecError(f"{where} is not an object")
        ref = entry.get("testRef") or ""
        inline = entry.get("inline")
        if ref and inline is not None:
            raise specs.SpecError(f"{where} sets both testRef {ref!r} and inline; keep one")
        if ref:
            if not isinstance(ref, str):
                raise specs.SpecError(f"{where}: testRef must be a string, got {ref!r}")
            spec = tests.get(ref)
            if spec is None:
                unresolved.append(ref)
                continue
            name = ref
        elif isinstance(inline, Mapping):
            spec = inline
            name = inline_name(entry_index=index, kind=specs.kind(inline))
        else:
            raise specs.SpecError(f"{where} needs exactly one of testRef and inline (an object)")
        planned = expand_entry(entry=entry, name=name, spec=spec)
        found.append(ProfileEntryTests(index=index, test_ref=ref, tests=tuple(planned)))
    return ProfileExpansion(entries=tuple(found), unresolved=tuple(unresolved))
