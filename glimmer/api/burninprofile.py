"""BurnInProfile: an ordered suite of tests and its verdict policy (api §3)."""

# field() returns attrs.field() with schema metadata; ruff cannot see that.
# ruff: noqa: RUF009

from __future__ import annotations

from datetime import datetime
from typing import ClassVar, Final

import attrs

from glimmer.api.burnintest import API_VERSION, BurnInTestSpec, Threshold
from glimmer.api.core import EnvVar, ObjectMeta
from glimmer.api.fields import Rule, field
from glimmer.api.vocabulary import CoverageState

VARIANT_NAME_PATTERN: Final = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"


@attrs.define(kw_only=True)
class TestVariant:
    """One cell of a variant matrix: overlays on the parent test, run as its own execution."""

    __test__ = False  # not a pytest test class, despite the name

    name: str = field(
        json="name",
        required=True,
        min_length=1,
        pattern=VARIANT_NAME_PATTERN,
        description="Variant name; the planned test is named <parent>-<name>.",
    )
    axes: dict[str, str] | None = field(
        json="axes",
        description="Opaque labels passed to the runner as BURNIN_VARIANT_<AXIS>; axis names "
        "must match [A-Za-z_][A-Za-z0-9_]*.",
    )
    duration_seconds: int | None = field(
        json="durationSeconds", fmt="int32", description="Overrides durationSeconds."
    )
    args: list[str] | None = field(json="args", description="Replaces runner.args.")
    env: list[EnvVar] | None = field(json="env", description="Replaces runner.env.")
    thresholds: list[Threshold] | None = field(
        json="thresholds",
        description="Replaces the thresholds (never merged); an empty list means no gates.",
    )
    repeat_count: int | None = field(
        json="repeatCount", fmt="int32", minimum=1, description="Overrides repeatCount."
    )


@attrs.define(kw_only=True)
class ProfileTest:
    """One profile entry: a BurnInTest reference or an inline test spec (exactly one)."""

    __test__ = False  # not a pytest test class, despite the name

    rules: ClassVar[tuple[Rule, ...]] = (
        Rule(
            rule="(has(self.testRef) && self.testRef != '') != has(self.inline)",
            message="set exactly one of testRef or inline",
        ),
    )

    test_ref: str | None = field(
        json="testRef",
        description="Name of a BurnInTest in the profile's namespace.",
    )
    inline: BurnInTestSpec | None = field(
        json="inline",
        description="An inline test spec; its planned name is inline-<index>-<kind>.",
    )
    required: bool = field(
        json="required",
        default=True,
        description="Only required results decide the run phase and failFast.",
    )
    variants: list[TestVariant] | None = field(
        json="variants", description="Expands the entry into one execution per variant."
    )


@attrs.define(kw_only=True)
class BurnInProfileSpec:
    """An ordered list of tests, executed one at a time across the whole target set."""

    tests: list[ProfileTest] = field(
        json="tests", required=True, min_items=1, description="Tests, executed in order."
    )
    fail_fast: bool | None = field(
        json="failFast", description="Stop at the first required Failed result."
    )
    sinks: list[str] | None = field(
        json="sinks", description="BurnInSink names in the run's namespace."
    )


@attrs.define(kw_only=True)
class ProfileCoverage:
    """The last `glimmer coverage --write-status` of this profile: which modelled
    faults it catches on the simulated GPU (additive: the Go implementation has no such
    field and never writes a profile's status)."""

    rules: ClassVar[tuple[Rule, ...]] = (
        Rule(
            rule="self.state == 'Measured' ? (has(self.caught) && has(self.missed)) : "
            "(!has(self.caught) && !has(self.missed))",
            message="only a Measured coverage carries caught and missed: a Void or "
            "NotJudged one claims no catches (N16)",
        ),
        Rule(
            rule="!has(self.caught) || !has(self.missed) || "
            "self.caught + size(self.missed) == self.modelled",
            message="caught plus the missed faults must be the modelled faults",
        ),
    )

    state: str = field(
        json="state",
        required=True,
        enum=CoverageState,
        description="Measured, or Void (the healthy control did not Pass) or NotJudged "
        "(a case wrote no result): only Measured carries caught and missed.",
    )
    summary: str = field(
        json="summary",
        required=True,
        description="One line for `kubectl get`, ending with the profile generation it "
        "was computed for, e.g. 'catches 9 of 10 modelled faults (generation 3)'.",
    )
    profile_generation: int = field(
        json="profileGeneration",
        required=True,
        fmt="int64",
        description="The profile's metadata.generation the coverage was computed for; "
        "stale when the profile's generation has moved on.",
    )
    modelled: int = field(
        json="modelled",
        required=True,
        fmt="int32",
        minimum=0,
        description="Modelled faults covered, over every simulated part.",
    )
    caught: int | None = field(
        json="caught",
        fmt="int32",
        minimum=0,
        description="Faults the profile catches (the run would not Pass); only when Measured.",
    )
    missed: list[str] | None = field(
        json="missed",
        description="Faults it misses (the run would Pass), as PART:FAULT when more than "
        "one part was covered; only when Measured.",
    )
    unjudged: list[str] | None = field(
        json="unjudged",
        description="Cases not judged: a control that did not Pass, a case that wrote no result.",
    )
    sims: list[str] = field(
        json="sims",
        required=True,
        min_items=1,
        description="The simulated parts covered (e.g. h200x2).",
    )
    computed_at: datetime = field(
        json="computedAt",
        required=True,
        fmt="date-time",
        description="When the coverage finished.",
    )
    glimmer_version: str = field(
        json="glimmerVersion",
        required=True,
        description="The glimmer that computed it.",
    )


@attrs.define(kw_only=True)
class BurnInProfileStatus:
    """Observed state of a BurnInProfile (never written by the upstream controller)."""

    observed_generation: int | None = field(
        json="observedGeneration",
        fmt="int64",
        description="Generation last observed by the controller.",
    )
    coverage: ProfileCoverage | None = field(
        json="coverage",
        description="The last coverage written by `glimmer coverage --profile-ref "
        "--write-status` (additive).",
    )


@attrs.define(kw_only=True)
class BurnInProfile:
    """BurnInProfile is an ordered suite of burn-in tests plus verdict policy."""

    api_version: str = field(json="apiVersion", default=API_VERSION, description="API version.")
    kind: str = field(json="kind", default="BurnInProfile", description="Kind.")
    metadata: ObjectMeta = field(json="metadata", factory=ObjectMeta, description="Metadata.")
    spec: BurnInProfileSpec = field(json="spec", required=True, description="The profile.")
    status: BurnInProfileStatus | None = field(json="status", description="Observed state.")
