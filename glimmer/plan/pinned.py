"""The pinned plan and its annotation codec (api §11, rule E5).

A run reads its profile and tests exactly once; from then on everything (targets and
their order, which fixes Pair roles and Group ranks; test specs including host
access; required flags; sinks; failFast; baseline; variant axes) comes from the copy
pinned in the run's ``burnin.glimmer.ai/plan`` annotation. Mid-run edits to a profile
therefore cannot rewrite history or widen host access.

The codec is wire-compatible with the Go implementation: the same JSON keys and
omitempty rules, raw JSON up to 131072 bytes, otherwise gzip (best compression) in
standard base64, and a reader that sniffs the first non-space character. Output is
deterministic: top-level and per-test keys in Go struct order, map keys sorted (as Go's
encoding/json sorts map keys), and ``<``, ``>``, ``&``, U+2028, U+2029 escaped exactly
as Go escapes them, so sizes measured against the 128 KiB limit agree with Go's.

Decoding fails closed: anything that is not a well-formed version-1 plan with at least
one target and one test raises :class:`PlanDecodeError`; a plan read with guessed
fields (say, ``required`` missing and read as false) could settle a run Passed on
tests that never decided anything.
"""

from __future__ import annotations

import base64
import binascii
import functools
import gzip
import json
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from glimmer.plan import spec as specs

PLAN_VERSION: Final = 1
#: Largest annotation value stored (raw JSON, or base64 text once compressed).
MAX_ANNOTATION_BYTES: Final = 131072
#: Largest decompressed plan a reader accepts (a gzip bomb must not exhaust memory).
MAX_DECOMPRESSED_BYTES: Final = 4 * 1024 * 1024


class PlanDecodeError(ValueError):
    """The annotation is not a readable version-1 plan; the run finalises as Error."""


class PlanTooLargeError(ValueError):
    """The plan exceeds the annotation limit even after compression (an E4 refusal)."""


@dataclass(frozen=True)
class PlannedTest:
    """One concrete test of the plan (after variant expansion).

    ``spec`` is the BurnInTestSpec as wire JSON (scope normalised); treat it as
    read-only. ``parent`` is the profile entry's name when this test is a variant cell.
    """

    name: str
    required: bool
    spec: Mapping[str, Any]
    axes: Mapping[str, str] = field(default_factory=dict)
    parent: str = ""

    @property
    def kind(self) -> str:
        return specs.kind(self.spec)

    @property
    def scope(self) -> str:
        return specs.scope(self.spec)


@dataclass(frozen=True, kw_only=True)
class PinnedPlan:
    """Everything a run executes, fixed at start. Test index = position in ``tests``."""

    version: int = PLAN_VERSION
    targets: tuple[str, ...]
    sinks: tuple[str, ...] = ()
    fail_fast: bool = False
    baseline: bool = False
    profile_entries: int = 0
    tests: tuple[PlannedTest, ...]

    @functools.cached_property
    def target_set(self) -> frozenset[str]:
        """``targets`` as a set: the only nodes the run may ever cordon (E10), and so the
        only ones its release scan must read (E19)."""
        return frozenset(self.targets)

    @property
    def expanded_variants(self) -> bool:
        """Whether some entry had variants (drives the ``PlanExpanded`` condition)."""
        return any(test.parent for test in self.tests)

    def to_json(self) -> str:
        """The marshalled plan, byte-for-byte what Go's encoding/json would write."""
        document: dict[str, Any] = {"version": self.version, "targets": list(self.targets)}
        if self.sinks:
            document["sinks"] = list(self.sinks)
        if self.fail_fast:
            document["failFast"] = True
        if self.baseline:
            document["baseline"] = True
        if self.profile_entries:
            document["profileEntries"] = self.profile_entries
        document["tests"] = [_test_document(test) for test in self.tests]
        text = json.dumps(document, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        return _go_escape(text)

    def to_annotation(self) -> str:
        """The annotation value; raises :class:`PlanTooLargeError` past the limit."""
        raw = self.to_json()
        encoded = raw.encode("utf-8")
        if len(encoded) <= MAX_ANNOTATION_BYTES:
            return raw
        # mtime=0 keeps the output deterministic (Go's gzip writer also leaves it 0).
        packed = base64.b64encode(gzip.compress(encoded, compresslevel=9, mtime=0)).decode()
        if len(packed) > MAX_ANNOTATION_BYTES:
            raise PlanTooLargeError(
                f"the pinned plan is {len(encoded)} bytes ({len(packed)} compressed), over the "
                f"{MAX_ANNOTATION_BYTES}-byte annotation limit; split the profile or trim "
                "variants, env and args"
            )
        return packed

    @classmethod
    def from_annotation(cls, text: str) -> PinnedPlan:
        """Read an annotation written by this codec or by the Go implementation."""
        stripped = text.lstrip()
        raw = stripped if stripped.startswith("{") else _unpack(stripped)
        try:
            document = json.loads(raw, parse_constant=_reject_constant)
        except (ValueError, RecursionError) as err:
            raise PlanDecodeError(f"pinned plan is not valid JSON: {err}") from err
        return _plan_from_document(document)


def _test_document(test: PlannedTest) -> dict[str, Any]:
    document: dict[str, Any] = {
        "name": test.name,
        "required": test.required,
        "spec": _sorted_keys(test.spec),
    }
    if test.axes:
        document["axes"] = _sorted_keys(test.axes)
    if test.parent:
        document["parent"] = test.parent
    return document


def _sorted_keys(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {key: _sorted_keys(value[key]) for key in sorted(value)}
    if isinstance(value, list | tuple):
        return [_sorted_keys(item) for item in value]
    return value


# Go's encoder escapes these even inside otherwise plain strings (HTML safety and
# JavaScript line terminators). They can only occur inside JSON strings, so a global
# replacement is exact.
_GO_ESCAPES: Final = str.maketrans(
    {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
)


def _go_escape(text: str) -> str:
    return text.translate(_GO_ESCAPES)


def _reject_constant(name: str) -> Any:
    raise PlanDecodeError(f"pinned plan contains {name}, which is not JSON")


def _unpack(text: str) -> str:
    try:
        packed = base64.b64decode("".join(text.split()), validate=True)
    except (binascii.Error, ValueError) as err:
        raise PlanDecodeError(f"pinned plan is neither JSON nor base64: {err}") from err
    try:
        inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
        data = inflater.decompress(packed, MAX_DECOMPRESSED_BYTES + 1)
    except zlib.error as err:
        raise PlanDecodeError(f"pinned plan is not valid gzip: {err}") from err
    if len(data) > MAX_DECOMPRESSED_BYTES:
        raise PlanDecodeError(
            f"pinned plan decompresses past the {MAX_DECOMPRESSED_BYTES}-byte limit"
        )
    if not inflater.eof:
        raise PlanDecodeError("pinned plan gzip stream is truncated")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise PlanDecodeError(f"pinned plan is not UTF-8: {err}") from err


def _plan_from_document(document: Any) -> PinnedPlan:
    if not isinstance(document, dict):
        raise PlanDecodeError("pinned plan must be a JSON object")
    version = document.get("version")
    if version != PLAN_VERSION or isinstance(version, bool) or not isinstance(version, int):
        raise PlanDecodeError(
            f"pinned plan version {version!r} is not supported (this controller reads "
            f"version {PLAN_VERSION}); the run cannot continue"
        )
    targets = _strings(document.get("targets"), what="targets")
    if not targets:
        raise PlanDecodeError("pinned plan has no targets")
    raw_tests = document.get("tests")
    if not isinstance(raw_tests, list) or not raw_tests:
        raise PlanDecodeError("pinned plan has no tests")
    profile_entries = document.get("profileEntries", 0)
    if isinstance(profile_entries, bool) or not isinstance(profile_entries, int):
        raise PlanDecodeError(f"pinned plan profileEntries is not an integer: {profile_entries!r}")
    return PinnedPlan(
        version=version,
        targets=targets,
        sinks=_strings(document.get("sinks"), what="sinks", allow_null=True),
        fail_fast=_flag(document, "failFast"),
        baseline=_flag(document, "baseline"),
        profile_entries=profile_entries,
        tests=tuple(_test_from_document(index, item) for index, item in enumerate(raw_tests)),
    )


def _test_from_document(index: int, item: Any) -> PlannedTest:
    where = f"pinned plan tests[{index}]"
    if not isinstance(item, dict):
        raise PlanDecodeError(f"{where} is not an object")
    name = item.get("name")
    if not isinstance(name, str) or not name:
        raise PlanDecodeError(f"{where} has no name")
    required = item.get("required")
    if not isinstance(required, bool):
        raise PlanDecodeError(f"{where} ({name}) has no boolean 'required'")
    spec = item.get("spec")
    if not isinstance(spec, dict):
        raise PlanDecodeError(f"{where} ({name}) has no spec object")
    try:
        specs.kind(spec)
        specs.scope(spec)
    except specs.SpecError as err:
        raise PlanDecodeError(f"{where} ({name}): {err}") from err
    axes = item.get("axes") or {}
    if not isinstance(axes, dict) or not all(isinstance(v, str) for v in axes.values()):
        raise PlanDecodeError(f"{where} ({name}) axes must map strings to strings")
    parent = item.get("parent") or ""
    if not isinstance(parent, str):
        raise PlanDecodeError(f"{where} ({name}) parent must be a string")
    return PlannedTest(name=name, required=required, spec=spec, axes=axes, parent=parent)


def _strings(value: Any, *, what: str, allow_null: bool = False) -> tuple[str, ...]:
    if value is None and allow_null:
        return ()
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise PlanDecodeError(f"pinned plan {what} must be a list of strings")
    return tuple(value)


def _flag(document: Mapping[str, Any], key: str) -> bool:
    value = document.get(key, False)
    if not isinstance(value, bool):
        raise PlanDecodeError(f"pinned plan {key} must be a boolean, got {value!r}")
    return value
