"""Hypothesis strategies derived from the glimmer.api attrs types and their field metadata.

Values are drawn from what the schema admits (enums, patterns, bounds, list-map keys)
and then bent to satisfy the CEL rules, so every drawn object is one the apiserver
must accept: these strategies feed both the converter round-trip unit tests and the
model -> apiserver -> model round trip.
"""

from __future__ import annotations

import functools
import string
import types
from datetime import UTC, datetime
from typing import Any, Union, get_args, get_origin, get_type_hints

import attrs
from hypothesis import strategies as st

from glimmer.api import (
    BurnInTestSpec,
    CoverageState,
    ObjectMeta,
    ProfileCoverage,
    ProfileTest,
    TargetSelector,
)
from glimmer.api.burninschedule import BurnInScheduleSpec
from glimmer.api.burnintest import MaxDeviation, Threshold
from glimmer.api.fields import FieldSpec, Quantity, spec_of
from glimmer.api.kinds import KINDS
from glimmer.contract.kinds import BURST_ONLY_KINDS

_PRINTABLE = st.characters(codec="utf-8", exclude_categories=("Cs", "Cc"))
_ASCII = st.sampled_from(string.ascii_letters + string.digits + "-_./")

_INT_BOUNDS = {
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
    None: (-(2**31), 2**31 - 1),
}


def _string(spec: FieldSpec) -> st.SearchStrategy[str]:
    if spec.enum is not None:
        return st.sampled_from(spec.enum)
    if spec.pattern is not None:
        strategy = st.from_regex(spec.pattern, fullmatch=True, alphabet=_ASCII)
        if spec.max_length is not None:
            limit = spec.max_length
            strategy = strategy.filter(lambda s: len(s) <= limit)
        return strategy
    return st.text(
        _PRINTABLE, min_size=spec.min_length or 0, max_size=min(spec.max_length or 12, 12)
    )


def _unwrap(type_: Any) -> Any:
    if get_origin(type_) in (Union, types.UnionType):
        args = [a for a in get_args(type_) if a is not type(None)]
        if len(args) == 1:
            return args[0]
    return type_


def _value(type_: Any, spec: FieldSpec) -> st.SearchStrategy[Any]:
    type_ = _unwrap(type_)
    origin = get_origin(type_)
    if type_ is Quantity:
        return st.from_regex(r"\A[1-9][0-9]{0,3}(Mi|Gi|m|k)?\Z").map(Quantity)
    if origin in (Union, types.UnionType) and set(get_args(type_)) == {int, str}:
        return st.integers(1, 65535) | st.from_regex(r"\A[a-z]{1,15}\Z")
    if type_ is str:
        return _string(spec)
    if type_ is bool:
        return st.booleans()
    if type_ is int:
        low, high = _INT_BOUNDS[spec.fmt]
        return st.integers(
            low if spec.minimum is None else spec.minimum,
            high if spec.maximum is None else spec.maximum,
        )
    if type_ is datetime:
        return st.datetimes(
            min_value=datetime(1971, 1, 1), max_value=datetime(2099, 12, 31), timezones=st.just(UTC)
        ).map(lambda d: d.replace(microsecond=0))
    if origin is list:
        (item,) = get_args(type_)
        item_spec = attrs.evolve(spec, min_items=None, max_items=None)
        keys = spec.list_map_keys

        def key_of(value: Any) -> Any:
            assert keys is not None
            return tuple(
                getattr(value, a.name) for a in attrs.fields(type(value)) if spec_of(a).json in keys
            )

        # A listType=set list holds each value once (the apiserver refuses duplicates).
        unique_by = key_of if keys else (lambda v: v) if spec.list_type == "set" else None
        return st.lists(
            _value(item, item_spec),
            min_size=spec.min_items or 0,
            max_size=min(spec.max_items or 3, 3),
            unique_by=unique_by,
        )
    if origin is dict:
        _, value = get_args(type_)
        return st.dictionaries(
            st.text(_ASCII, min_size=1, max_size=10),
            _value(value, FieldSpec(json="value", description="")),
            max_size=3,
        )
    if attrs.has(type_):
        return model(type_)
    raise TypeError(f"no strategy for {type_!r}")


def _fix_test_spec(spec: BurnInTestSpec) -> BurnInTestSpec:
    """Bend a drawn spec into one the CEL rules admit (a soak is a single, long, sustained run)."""
    if spec.soak is None:
        return spec
    kind = "thermal-soak" if spec.kind in BURST_ONLY_KINDS else spec.kind
    duration = max(spec.duration_seconds or 0, spec.soak.segment_seconds)
    return attrs.evolve(spec, kind=kind, repeat_count=1, duration_seconds=duration)


def _fix_profile_test(entry: ProfileTest) -> ProfileTest:
    if entry.inline is not None:
        return attrs.evolve(entry, test_ref=None)
    return attrs.evolve(entry, test_ref=entry.test_ref or "a-test")


def _fix_target(target: TargetSelector) -> TargetSelector:
    if target.node_names or target.node_selector:
        return target
    return attrs.evolve(target, node_names=["node-0"])


def _fix_profile_coverage(coverage: ProfileCoverage) -> ProfileCoverage:
    """Only a Measured coverage counts (N16), and its catches and misses add up."""
    if coverage.state != CoverageState.MEASURED:
        return attrs.evolve(coverage, caught=None, missed=None)
    caught = min(coverage.caught or 0, 1000)
    missed = coverage.missed or []
    return attrs.evolve(coverage, caught=caught, missed=missed, modelled=caught + len(missed))


def _fix_max_deviation(deviation: MaxDeviation) -> MaxDeviation:
    """Exactly one of robustSigma and percent (C8)."""
    if (deviation.robust_sigma is None) != (deviation.percent is None):
        return deviation
    if deviation.robust_sigma is None:
        return attrs.evolve(deviation, robust_sigma="4")
    return attrs.evolve(deviation, percent=None)


def _fix_threshold(threshold: Threshold) -> Threshold:
    """A relative gate needs a bad side (C7)."""
    if threshold.relative_to is None or threshold.comparison in (
        "GreaterThanOrEqual",
        "LessThanOrEqual",
    ):
        return threshold
    return attrs.evolve(threshold, comparison="GreaterThanOrEqual")


def _fix_schedule_spec(spec: BurnInScheduleSpec) -> BurnInScheduleSpec:
    """Exactly one of a cron schedule and a trigger (J6)."""
    if (spec.schedule is None) != (spec.trigger is None):
        return spec
    if spec.schedule is None:
        return attrs.evolve(spec, schedule="@daily")
    return attrs.evolve(spec, trigger=None)


_FIXES: dict[type[Any], Any] = {
    BurnInScheduleSpec: _fix_schedule_spec,
    BurnInTestSpec: _fix_test_spec,
    MaxDeviation: _fix_max_deviation,
    Threshold: _fix_threshold,
    ProfileCoverage: _fix_profile_coverage,
    ProfileTest: _fix_profile_test,
    TargetSelector: _fix_target,
}


_ROOTS = frozenset(info.model for info in KINDS)


@functools.cache
def model(cls: type[Any]) -> st.SearchStrategy[Any]:
    """Instances of an attrs model class the apiserver would accept."""
    if cls is ObjectMeta:
        return st.builds(ObjectMeta)
    hints = get_type_hints(cls)
    fields: dict[str, st.SearchStrategy[Any]] = {}
    for attribute in attrs.fields(cls):
        spec = spec_of(attribute)
        strategy = st.deferred(lambda t=hints[attribute.name], s=spec: _value(t, s))
        if not spec.required and not spec.has_default and attribute.default is None:
            strategy = st.none() | strategy
        fields[attribute.name] = strategy
    if cls in _ROOTS:
        # The envelope is fixed; the apiserver owns metadata.
        fields["api_version"] = st.just(attrs.fields(cls).api_version.default)
        fields["kind"] = st.just(attrs.fields(cls).kind.default)
        fields["metadata"] = st.builds(ObjectMeta)
    built = st.builds(cls, **fields)
    fix = _FIXES.get(cls)
    return built.map(fix) if fix is not None else built
