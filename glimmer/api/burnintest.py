"""BurnInTest: one reusable test (api reference §1.3, §2).

``BurnInTestSpec`` is also the shape of ``BurnInProfile.spec.tests[].inline``, so the
CEL rules below guard both places with one declaration. The rules only restate
refusals the controller already makes at run start (semantics E4) for a single
object; moving them to apply time tells the author before any node is cordoned.
"""

# field() returns attrs.field() with schema metadata; ruff cannot see that.
# ruff: noqa: RUF009

from __future__ import annotations

from typing import ClassVar, Final

import attrs

from glimmer.api.core import EnvVar, ObjectMeta, Probe, ResourceRequirements
from glimmer.api.fields import Rule, field
from glimmer.api.vocabulary import Applicability, Comparison, HostPathType, TestScope, Vendor
from glimmer.contract.kinds import BURST_ONLY_KINDS

API_VERSION: Final = "burnin.glimmer.ai/v1alpha1"

#: Metric-name grammar (semantics B1).
METRIC_NAME_PATTERN: Final = r"^[a-z][a-zA-Z0-9]*$"
#: Finite decimal numbers only: no NaN, no Inf, no words (api §1.3).
THRESHOLD_VALUE_PATTERN: Final = r"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?$"
#: A finite decimal that is not negative (relativeTo's deviations, C8).
NON_NEGATIVE_DECIMAL_PATTERN: Final = r"^[+]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?$"
#: Execution window when ``durationSeconds`` is 0 or unset.
DEFAULT_DURATION_SECONDS: Final = 600

_BURST_ONLY_CEL = ", ".join(f"'{kind}'" for kind in sorted(BURST_ONLY_KINDS))


@attrs.define(kw_only=True)
class MaxDeviation:
    """How far a node may sit on the bad side of its cohort's median (C8)."""

    rules: ClassVar[tuple[Rule, ...]] = (
        Rule(
            rule="has(self.robustSigma) != has(self.percent)",
            message="maxDeviation needs exactly one of robustSigma and percent",
        ),
    )

    robust_sigma: str | None = field(
        json="robustSigma",
        pattern=NON_NEGATIVE_DECIMAL_PATTERN,
        description="Allow this many robust standard deviations (1.4826 x the median "
        'absolute deviation around the median), e.g. "4".',
    )
    percent: str | None = field(
        json="percent",
        pattern=NON_NEGATIVE_DECIMAL_PATTERN,
        description='Allow this percentage of the cohort median\'s magnitude, e.g. "10".',
    )
    floor_percent: str | None = field(
        json="floorPercent",
        pattern=NON_NEGATIVE_DECIMAL_PATTERN,
        description="Never allow less than this percentage of the median's magnitude (the "
        "slack a quantised metric needs when half the cohort reads the median exactly and "
        "the MAD is 0); unset means 0.",
    )


@attrs.define(kw_only=True)
class RelativeTo:
    """Judge the metric against the node's cohort in this run, too (C7-C10)."""

    cohort: str = field(
        json="cohort",
        default="fingerprint",
        enum=("fingerprint",),
        description="fingerprint: the run's nodes with the same NodeFingerprint digest (same "
        "product, count, memory, driver, OS and kernel).",
    )
    max_deviation: MaxDeviation = field(
        json="maxDeviation",
        required=True,
        description="The allowed deviation on the bad side (below the median for "
        "GreaterThanOrEqual, above it for LessThanOrEqual).",
    )
    min_cohort_size: int = field(
        json="minCohortSize",
        default=3,
        fmt="int32",
        minimum=3,
        description="Fewest measured nodes a cohort needs; below it the relative gate is not "
        "evaluated (and passes nothing by itself).",
    )


@attrs.define(kw_only=True)
class Threshold:
    """One pass/fail gate on a reported metric, compared as float64 with no epsilon."""

    rules: ClassVar[tuple[Rule, ...]] = (
        Rule(
            rule="!has(self.relativeTo) || self.comparison in "
            "['GreaterThanOrEqual', 'LessThanOrEqual']",
            message="relativeTo needs a side to fail on: use comparison GreaterThanOrEqual (a "
            "low outlier fails) or LessThanOrEqual (a high outlier fails), or remove relativeTo",
            field_path=".relativeTo",
        ),
    )

    metric: str = field(
        json="metric",
        required=True,
        pattern=METRIC_NAME_PATTERN,
        description="Canonical metric name (lowerCamelCase, ASCII letters and digits only).",
    )
    comparison: str = field(
        json="comparison",
        required=True,
        enum=Comparison,
        description="How the reported value is compared with value (exact, no tolerance; "
        "express a band as GreaterThanOrEqual plus LessThanOrEqual).",
    )
    value: str = field(
        json="value",
        required=True,
        pattern=THRESHOLD_VALUE_PATTERN,
        description="Finite decimal number the metric is compared with (NaN and Inf are rejected).",
    )
    applicability: str = field(
        json="applicability",
        default=Applicability.REQUIRED.value,
        enum=Applicability,
        description="Required: a metric the runner declares unmeasurable fails the gate. "
        "RequiredIfMeasurable: it is reported as not evaluated instead (use for spread metrics).",
    )
    relative_to: RelativeTo | None = field(
        json="relativeTo",
        description="Also fail a node that passes this gate but is an outlier from its cohort "
        "(Node-scope tests only: a Pair or Group test's relativeTo refuses the run at start); "
        "judged once the run's results have settled.",
    )


@attrs.define(kw_only=True)
class SoakSpec:
    """Opt-in segmentation of a long test into fixed windows whose metrics are folded."""

    segment_seconds: int = field(
        json="segmentSeconds",
        required=True,
        fmt="int32",
        minimum=300,
        description="Length of each segment (a full execution window); must not exceed "
        "durationSeconds.",
    )
    abort_early: bool = field(
        json="abortEarly",
        default=False,
        description="Stop as Failed at a segment boundary once the aggregate provably violates "
        "a threshold.",
    )


@attrs.define(kw_only=True)
class VendorImage:
    """A runner image for nodes of one accelerator vendor."""

    vendor: str = field(
        json="vendor", required=True, enum=Vendor, description="Accelerator vendor."
    )
    image: str = field(
        json="image", required=True, min_length=1, description="Image reference for that vendor."
    )


@attrs.define(kw_only=True)
class HostPathMount:
    """A host path mounted into the runner container: the only host access ever granted."""

    path: str = field(
        json="path",
        required=True,
        min_length=1,
        pattern="^/",
        description="Absolute path on the host.",
    )
    mount_path: str = field(
        json="mountPath",
        required=True,
        min_length=1,
        pattern="^/",
        description="Absolute path in the container; identifies the entry in the list.",
    )
    read_only: bool = field(
        json="readOnly", default=True, description="Mount read-only (the default)."
    )
    type: str | None = field(
        json="type",
        enum=HostPathType,
        description="Check the host path has this type before mounting; unset means no check.",
    )


@attrs.define(kw_only=True)
class RunnerSpec:
    """How the runner container is built."""

    image: str | None = field(
        json="image", description="Runner image; an explicit pin wins over every default."
    )
    images_by_vendor: list[VendorImage] | None = field(
        json="imagesByVendor",
        max_items=8,
        list_type="map",
        list_map_keys=("vendor",),
        description="Per-vendor images, used when image is unset.",
    )
    command: list[str] | None = field(json="command", description="Container command.")
    args: list[str] | None = field(json="args", description="Container args.")
    env: list[EnvVar] | None = field(
        json="env",
        description="Extra environment, appended after the operator-injected BURNIN_* "
        "variables (so it can override them in-cluster).",
    )
    privileged: bool | None = field(json="privileged", description="Run the container privileged.")
    run_as_user: int | None = field(
        json="runAsUser",
        fmt="int64",
        description="UID of the container process; runAsNonRoot is set when it is not 0.",
    )
    priority_class_name: str | None = field(
        json="priorityClassName",
        description="PriorityClass of the runner pod (never created by the operator).",
    )
    host_paths: list[HostPathMount] | None = field(
        json="hostPaths",
        list_type="map",
        list_map_keys=("mountPath",),
        description="Host paths mounted into the runner container.",
    )
    readiness_probe: Probe | None = field(
        json="readinessProbe",
        description="Readiness probe of the runner container; gates the Pair client and Group "
        "workers.",
    )


@attrs.define(kw_only=True)
class BurnInTestSpec:
    """What one test runs and how its result is judged."""

    rules: ClassVar[tuple[Rule, ...]] = (
        Rule(
            rule=f"!has(self.soak) || !(self.kind in [{_BURST_ONLY_CEL}])",
            message="soak is not supported by burst-only kinds (compute-smoke, "
            "fingerprint-probe): remove soak or use a sustained-load kind",
            field_path=".soak",
        ),
        Rule(
            rule="!has(self.soak) || (has(self.durationSeconds) && self.durationSeconds > 0 ? "
            f"self.durationSeconds : {DEFAULT_DURATION_SECONDS}) >= self.soak.segmentSeconds",
            message="soak.segmentSeconds must not exceed durationSeconds (600 when unset): "
            "raise durationSeconds or shorten soak.segmentSeconds",
            field_path=".soak.segmentSeconds",
        ),
        Rule(
            rule="!has(self.soak) || !has(self.repeatCount) || self.repeatCount == 1",
            message="a soak runs once: set repeatCount to 1 when soak is set",
            field_path=".repeatCount",
        ),
    )

    kind: str = field(
        json="kind",
        required=True,
        description="Test kind: a built-in kind (gpu-burn, compute-smoke, gemm-sweep, dcgm-diag, "
        "thermal-soak, nccl, ib-write-bw, gpudirect-rdma, tcp-baseline, memory-bw, disk-io, "
        "fabric-soak, fingerprint-probe, host-health, clockprobe, memory-stress), custom, or "
        "any other string (treated like custom).",
    )
    scope: str = field(
        json="scope",
        default=TestScope.NODE.value,
        enum=TestScope,
        description="Node: one execution per node. Pair: one server/client execution across "
        "two nodes. Group: one collective across all targets.",
    )
    duration_seconds: int | None = field(
        json="durationSeconds",
        fmt="int32",
        minimum=0,
        description="Execution budget in seconds; 0 or unset means 600.",
    )
    repeat_count: int = field(
        json="repeatCount",
        default=1,
        fmt="int32",
        minimum=1,
        description="Passing executions required per node or unit, run one after another.",
    )
    checkpoint_interval_seconds: int | None = field(
        json="checkpointIntervalSeconds",
        fmt="int32",
        minimum=0,
        description="Publish mid-flight metrics this often; 0 or unset disables checkpoints.",
    )
    soak: SoakSpec | None = field(json="soak", description="Run the test as a segmented soak.")
    runner: RunnerSpec | None = field(json="runner", description="Runner container settings.")
    thresholds: list[Threshold] | None = field(
        json="thresholds",
        description="Gates on the reported metrics; empty means pass on a clean exit 0.",
    )
    resources: ResourceRequirements | None = field(
        json="resources", description="Resources of the runner container, copied verbatim."
    )
    host_network: bool | None = field(
        json="hostNetwork", description="Run the runner pod in the host network namespace."
    )


@attrs.define(kw_only=True)
class BurnInTestStatus:
    """Observed state of a BurnInTest (never written by the upstream controller)."""

    observed_generation: int | None = field(
        json="observedGeneration",
        fmt="int64",
        description="Generation last observed by the controller.",
    )


@attrs.define(kw_only=True)
class BurnInTest:
    """BurnInTest is one reusable burn-in test: a kind, a scope, a runner and thresholds."""

    api_version: str = field(json="apiVersion", default=API_VERSION, description="API version.")
    kind: str = field(json="kind", default="BurnInTest", description="Kind.")
    metadata: ObjectMeta = field(json="metadata", factory=ObjectMeta, description="Metadata.")
    spec: BurnInTestSpec = field(json="spec", required=True, description="The test.")
    status: BurnInTestStatus | None = field(json="status", description="Observed state.")
