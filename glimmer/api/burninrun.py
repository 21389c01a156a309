"""BurnInRun: one execution of a profile against a target, and its checkpointed result
(api §4).

The status is the controller's checkpoint store, so every field the upstream
controller persists is modelled here with its exact wire name; ``results[].kind`` is
always serialised (an empty kind marks a synthetic result).
"""

# field() returns attrs.field() with schema metadata; ruff cannot see that.
# ruff: noqa: RUF009

from __future__ import annotations

from datetime import datetime

import attrs

from glimmer.api.burnintest import API_VERSION
from glimmer.api.core import KubeCondition, ObjectMeta
from glimmer.api.fields import field
from glimmer.api.target import TargetSelector
from glimmer.api.vocabulary import AttemptTrigger, CancelPolicy, Provenance, RunPhase, TestScope


@attrs.define(kw_only=True)
class LinkBlameSpec:
    """Link blame: extra, diagnostic re-pairs that attribute a Failed Pair (F10-F13)."""

    max_extra_pairs: int = field(
        json="maxExtraPairs",
        default=2,
        fmt="int32",
        minimum=0,
        maximum=64,
        description="Most re-pair (and Group probe) executions this run may add (two per "
        "attributed Pair); a Pair the budget cannot cover is undetermined, never "
        "half-attributed.",
    )
    topology_label: str | None = field(
        json="topologyLabel",
        max_length=316,
        description="Node label (e.g. topology.kubernetes.io/zone, or a rail/leaf label) "
        "whose value a partner must share with the side it re-pairs; unset: any node whose "
        "link Passed.",
    )


@attrs.define(kw_only=True)
class BurnInRunSpec:
    """Which profile to run against which nodes, and how."""

    profile_ref: str = field(
        json="profileRef",
        required=True,
        description="BurnInProfile in the run's namespace (resolved once, then pinned).",
    )
    target: TargetSelector = field(
        json="target", required=True, description="Nodes to test (resolved once, then pinned)."
    )
    max_concurrent_nodes: int = field(
        json="maxConcurrentNodes",
        default=1,
        fmt="int32",
        minimum=1,
        description="Most nodes under test at once (a Pair holds 2, a Group all of its ranks); "
        "read live.",
    )
    force: bool = field(
        json="force",
        default=False,
        description="Admit the run even though an active run holds an overlapping node.",
    )
    retry_on_error_limit: int = field(
        json="retryOnErrorLimit",
        default=0,
        fmt="int32",
        minimum=0,
        description="Extra attempts after an Error (never after a Fail); read live.",
    )
    deadline_seconds: int | None = field(
        json="deadlineSeconds",
        fmt="int32",
        minimum=0,
        description="Bound on the whole run from status.startedAt; 0 or unset means none; "
        "expiry ends the run as Error.",
    )
    suspend: bool = field(
        json="suspend",
        default=False,
        description="Launch nothing new while set (reversible; running pods continue).",
    )
    baseline: bool = field(
        json="baseline",
        default=False,
        description="Measurement run: refused if any planned test has thresholds.",
    )
    cancel: bool = field(
        json="cancel", default=False, description="Stop the run as Cancelled (one-way)."
    )
    cancel_policy: str = field(
        json="cancelPolicy",
        default=CancelPolicy.GRACEFUL.value,
        enum=CancelPolicy,
        description="Graceful lets running pods finish their grace period; Immediate deletes "
        "them at once.",
    )
    cancel_reason: str | None = field(
        json="cancelReason",
        max_length=512,
        description="Reason echoed in the delivery envelope when Cancelled.",
    )
    ttl_seconds_after_finished: int | None = field(
        json="ttlSecondsAfterFinished",
        fmt="int32",
        description="Delete the run this long after it finished; 0, negative or unset keeps it.",
    )
    # --- link blame (F10-F13, docs/link-blame.md) ---
    link_blame: LinkBlameSpec | None = field(
        json="linkBlame",
        description="Attribute a Failed Pair to one node or to the link by re-pairing each "
        "side with a node whose link Passed in this run, and bisect a Failed Group to the "
        "rank that drags it (docs/link-blame.md); set, a Pair test may also take an even "
        "number of targets, paired in order; unset: no re-pairs, and a Pair takes exactly 2.",
    )


@attrs.define(kw_only=True)
class Violation:
    """One failed gate of the deciding evaluation."""

    index: int = field(
        json="index",
        required=True,
        fmt="int32",
        minimum=0,
        description="Position of the threshold in the test's thresholds.",
    )
    metric: str = field(json="metric", required=True, description="Gated metric.")
    cause: str = field(
        json="cause",
        required=True,
        description="Who acts: Measurement (hardware), Evidence (nobody yet), Authoring "
        "(profile author).",
    )
    kind: str = field(
        json="kind",
        required=True,
        description="Violation kind, e.g. Unsatisfied, NotReported, NonFinite.",
    )
    reason: str | None = field(json="reason", description="Human-readable reason.")


@attrs.define(kw_only=True)
class NotEvaluated:
    """A gate that was not applied."""

    metric: str = field(json="metric", required=True, description="Gated metric.")
    reason: str = field(json="reason", required=True, description="Why it was not applied.")


@attrs.define(kw_only=True)
class ArtifactRef:
    """Evidence stored by reference (or a record of why it was dropped)."""

    name: str = field(json="name", required=True, description="Artifact name.")
    media_type: str | None = field(json="mediaType", description="Media type.")
    size_bytes: int | None = field(
        json="sizeBytes",
        fmt="int64",
        minimum=0,
        description="True size in bytes (also on dropped artifacts).",
    )
    digest: str | None = field(json="digest", description="sha256:<hex> of the content.")
    config_map: str | None = field(json="configMap", description="ConfigMap holding it.")
    key: str | None = field(json="key", description="Key in that ConfigMap.")
    dropped: str | None = field(
        json="dropped", description="Non-empty when the artifact was not stored, saying why."
    )


@attrs.define(kw_only=True)
class TestAttempt:
    """One execution of a test unit."""

    __test__ = False  # not a pytest test class, despite the name

    attempt: int = field(
        json="attempt",
        required=True,
        fmt="int32",
        minimum=1,
        description="1-based attempt index within the unit.",
    )
    trigger: str = field(
        json="trigger",
        required=True,
        enum=AttemptTrigger,
        description="Why the attempt started.",
    )
    node: str | None = field(
        json="node", description="Node (Pair: server node; Group: rank-0 node)."
    )
    pod_name: str | None = field(
        json="podName", description="Runner pod (Pair: server pod; Group: root pod)."
    )
    pod_uid: str | None = field(
        json="podUID",
        description="UID of the runner pod this attempt adopted; a pod under the same name "
        "with another UID is foreign (Glimmer extension).",
    )
    phase: str | None = field(
        json="phase", enum=RunPhase, description="This execution's own outcome."
    )
    exit_code: int | None = field(
        json="exitCode",
        fmt="int32",
        description="Runner exit code; -1 if the pod failed before the runner terminated.",
    )
    started_at: datetime | None = field(json="startedAt", fmt="date-time", description="Start.")
    finished_at: datetime | None = field(json="finishedAt", fmt="date-time", description="End.")
    last_checkpoint_at: datetime | None = field(
        json="lastCheckpointAt", fmt="date-time", description="Last mid-flight refresh."
    )
    metrics: dict[str, str] | None = field(json="metrics", description="This execution's metrics.")
    message: str | None = field(json="message", description="Human-readable outcome.")
    provenance: str | None = field(
        json="provenance",
        enum=Provenance,
        description="sim, unknown or silicon: sim when the pod ran against the simulated GPU "
        "(its node or pod spec says so) or its output declared provenance=sim anywhere; "
        "silicon only when the runner declared provenance=silicon and nothing weaker was "
        "seen; otherwise (no declaration, another value, an unreadable line) unknown.",
    )
    deciding: bool | None = field(
        json="deciding",
        description="This attempt decided its settled result: its metrics and message are the "
        "result's and are stored there once (Glimmer extension).",
    )


@attrs.define(kw_only=True)
class TestResult:
    """The result of one planned test on one node (or one Pair/Group unit)."""

    __test__ = False  # not a pytest test class, despite the name

    name: str = field(
        json="name",
        required=True,
        description="Planned test name (resolve/admission for synthetic results).",
    )
    kind: str = field(
        json="kind",
        required=True,
        description="Test kind; always serialised, empty exactly for synthetic results.",
    )
    scope: str | None = field(
        json="scope", enum=TestScope, description="Scope (absent on synthetic results)."
    )
    phase: str = field(
        json="phase", required=True, enum=RunPhase, description="Running while open."
    )
    nodes: list[str] | None = field(
        json="nodes",
        description="Node: [node]; Pair: [server, client]; Group: all targets in rank order.",
    )
    started_at: datetime | None = field(
        json="startedAt", fmt="date-time", description="First attempt's real start."
    )
    finished_at: datetime | None = field(
        json="finishedAt", fmt="date-time", description="Last attempt's end."
    )
    last_checkpoint_at: datetime | None = field(
        json="lastCheckpointAt",
        fmt="date-time",
        description="Last mid-flight refresh; with no finishedAt the metrics are unjudged.",
    )
    metrics: dict[str, str] | None = field(
        json="metrics", description="Canonical metric name to raw value, as reported."
    )
    message: str | None = field(
        json="message", description="Human-readable outcome (names the first violation)."
    )
    violations: list[Violation] | None = field(
        json="violations", description="Every failed gate, in threshold order."
    )
    not_evaluated: list[NotEvaluated] | None = field(
        json="notEvaluated", description="Gates not applied."
    )
    unmeasurable: list[str] | None = field(
        json="unmeasurable", description="Metrics the runner declared n/a (sorted)."
    )
    artifacts: list[ArtifactRef] | None = field(
        json="artifacts", description="Evidence by reference."
    )
    variant_axes: dict[str, str] | None = field(
        json="variantAxes", description="The variant cell's axes."
    )
    repeats_required: int | None = field(
        json="repeatsRequired", fmt="int32", minimum=0, description="Resolved repeatCount."
    )
    repeats_completed: int | None = field(
        json="repeatsCompleted", fmt="int32", minimum=0, description="Passing executions so far."
    )
    error_retries: int | None = field(
        json="errorRetries", fmt="int32", minimum=0, description="Error retries consumed."
    )
    segments_required: int | None = field(
        json="segmentsRequired",
        fmt="int32",
        minimum=0,
        description="Soak segments required; 0 means not segmented.",
    )
    segments_completed: int | None = field(
        json="segmentsCompleted", fmt="int32", minimum=0, description="Clean segments folded."
    )
    segment_seconds: int | None = field(
        json="segmentSeconds", fmt="int32", minimum=0, description="Pinned segment length."
    )
    aggregated_metrics: dict[str, str] | None = field(
        json="aggregatedMetrics", description="Persisted fold of the clean segments."
    )
    truncated_attempts: int | None = field(
        json="truncatedAttempts",
        fmt="int32",
        minimum=0,
        description="Passing segment attempts elided from attempts.",
    )
    attempts: list[TestAttempt] | None = field(json="attempts", description="Attempt history.")
    provenance: str | None = field(
        json="provenance",
        enum=Provenance,
        description="The weakest over every attempt (sim < unknown < silicon): any sim "
        "attempt makes it sim, any unknown one unknown; silicon only when every attempt "
        "reads silicon.",
    )
    suspect: bool | None = field(
        json="suspect",
        description="A Passed result measured on the simulated GPU for a hardware-dependent "
        "kind: it proves the plumbing, never the part.",
    )
    evidence: str | None = field(
        json="evidence",
        description="Set only on a compact record (a run too large for one object): "
        "<shard digest>/<index> of this result's full record in ConfigMap "
        "<run>-ev-<digest>, owned by the run; a shard that is missing, unreadable or "
        "disagrees reads Error, never this phase (docs/status-shards.md).",
    )


@attrs.define(kw_only=True)
class PackedResults:
    """Settled single-node results of one evidence shard that share a verdict, packed:
    how a run of many thousands of results keeps even its compact records small
    (docs/status-shards.md). Member i is node ``nodes[i]`` at entry ``indexes[i]`` of the
    shard; each stands for the compact record of that unit."""

    evidence: str = field(
        json="evidence",
        required=True,
        description="Digest of the shard (ConfigMap <run>-ev-<digest>) that holds the "
        "members' full results.",
    )
    name: str = field(json="name", required=True, description="Planned test name.")
    kind: str = field(json="kind", required=True, description="Test kind.")
    phase: str = field(
        json="phase", required=True, enum=RunPhase, description="Every member's phase."
    )
    provenance: str | None = field(
        json="provenance", enum=Provenance, description="Every member's provenance."
    )
    suspect: bool | None = field(json="suspect", description="Every member's suspect flag.")
    variant_axes: dict[str, str] | None = field(
        json="variantAxes", description="Every member's variant cell."
    )
    nodes: list[str] = field(json="nodes", required=True, description="Each member's node.")
    indexes: list[int] = field(
        json="indexes",
        required=True,
        description="Each member's entry in the shard, position for position with nodes; "
        "a group whose lists disagree reads Error for every node it names.",
    )


@attrs.define(kw_only=True)
class LinkRepair:
    """One re-pair of one side of a Failed Pair (diagnostic: never a result)."""

    node: str = field(
        json="node",
        required=True,
        description="The side being re-paired (a Group probe: its rank 0).",
    )
    nodes: list[str] | None = field(
        json="nodes",
        description="A Group probe's ranks, rank 0 first (a sub-group the bisection ran).",
    )
    partner: str | None = field(
        json="partner", description="The node it was re-paired with (absent: none was run)."
    )
    skipped: str | None = field(
        json="skipped",
        description="Why it was not run: no partner, the budget, or the run's deadline.",
    )
    result: TestResult | None = field(
        json="result",
        description="The re-pair's own result (server = the side, client = the partner), "
        "recorded like any unit's; never counted in results, the node verdict or the run.",
    )


@attrs.define(kw_only=True)
class LinkBlame:
    """What the re-pairs say of one Failed Pair (F11), or the probes of a Group (I44)."""

    test: str = field(json="test", required=True, description="The Pair's planned test.")
    nodes: list[str] = field(json="nodes", required=True, description="[server, client].")
    blame: str | None = field(
        json="blame",
        description="link, node/<name> or undetermined; absent while the re-pairs run.",
    )
    reason: str | None = field(json="reason", description="Why, naming every re-pair's phase.")
    provenance: str | None = field(
        json="provenance",
        enum=Provenance,
        description="The weakest over the failed link and its re-pairs: a sim blame proves "
        "the rule, never a part.",
    )
    repairs: list[LinkRepair] | None = field(
        json="repairs", description="The re-pair of each side, server's first."
    )


@attrs.define(kw_only=True)
class CohortVerdict:
    """One cohort-relative gate judged over one cohort of the run (C7-C10): written once,
    in the verdict's status write, and never judged again."""

    test: str = field(json="test", required=True, description="Planned test name.")
    threshold_index: int = field(
        json="thresholdIndex",
        required=True,
        fmt="int32",
        minimum=0,
        description="Position of the threshold in the test's thresholds.",
    )
    metric: str = field(json="metric", required=True, description="Gated metric.")
    comparison: str | None = field(
        json="comparison",
        description="The gate's comparison: GreaterThanOrEqual fails low outliers, "
        "LessThanOrEqual high ones.",
    )
    fingerprint: str = field(
        json="fingerprint",
        required=True,
        description="The cohort's NodeFingerprint digest; empty for the nodes that had none "
        "(never evaluated).",
    )
    members: int | None = field(
        json="members", fmt="int32", minimum=0, description="Nodes of the run in this cohort."
    )
    excluded: int | None = field(
        json="excluded",
        fmt="int32",
        minimum=0,
        description="Members whose value did not count (not settled Passed or Failed, missing, "
        "not a finite number, or held only in an evidence shard).",
    )
    evaluated: bool = field(
        json="evaluated",
        required=True,
        description="False when the gate was not evaluated (cohort below minCohortSize, or no "
        "fingerprint digest): it then passed nothing by itself.",
    )
    reason: str | None = field(json="reason", description="Why it was not evaluated.")
    size: int | None = field(
        json="size", fmt="int32", minimum=0, description="Members whose value counted."
    )
    median: str | None = field(json="median", description="Median of the counted values.")
    mad: str | None = field(json="mad", description="Median absolute deviation around it.")
    allowed_deviation: str | None = field(
        json="allowedDeviation",
        description="Largest deviation on the bad side that is within the cohort.",
    )
    outliers: list[str] | None = field(
        json="outliers",
        description="Nodes judged outliers (their Passed results became Failed), at most 50.",
    )
    outliers_not_named: int | None = field(
        json="outliersNotNamed",
        fmt="int32",
        minimum=0,
        description="Outliers beyond the 50 named (each outlier's result explains itself).",
    )
    judged_at: datetime | None = field(
        json="judgedAt", fmt="date-time", description="When the cohort was judged."
    )


@attrs.define(kw_only=True)
class BurnInRunStatus:
    """Observed state of a run: the controller's checkpoint store."""

    phase: str = field(
        json="phase",
        default=RunPhase.PENDING.value,
        enum=RunPhase,
        description="Run phase.",
    )
    fingerprint: dict[str, str] | None = field(
        json="fingerprint", description="Per node: kernel, OS image, arch and hardware labels."
    )
    started_at: datetime | None = field(
        json="startedAt", fmt="date-time", description="When the run went Running."
    )
    finished_at: datetime | None = field(
        json="finishedAt", fmt="date-time", description="When the run became terminal."
    )
    results: list[TestResult] | None = field(json="results", description="Per-test results.")
    packed_results: list[PackedResults] | None = field(
        json="packedResults",
        description="Only on a run too large for compact records alone: settled results "
        "packed by shard and verdict, each member standing for one result (read with "
        "results; docs/status-shards.md).",
    )
    fingerprint_shards: list[str] | None = field(
        json="fingerprintShards",
        description="Only when the per-node fingerprint is too large for the status: the "
        "digests of the ConfigMaps <run>-fp-<digest>, owned by the run, that hold it.",
    )
    passed: int | None = field(json="passed", fmt="int32", description="Passed results.")
    failed: int | None = field(json="failed", fmt="int32", description="Failed results.")
    errored: int | None = field(json="errored", fmt="int32", description="Error results.")
    skipped: int | None = field(json="skipped", fmt="int32", description="Skipped results.")
    cordoned_nodes: list[str] | None = field(
        json="cordonedNodes",
        description=(
            "Nodes this run cordoned and still owes a release, while it runs (sorted). "
            "The terminal status write clears it; the unload then releases every node "
            "whose owner stamp names the run."
        ),
    )
    prior_unschedulable: dict[str, bool] | None = field(
        json="priorUnschedulable",
        description="Per target, whether it was unschedulable when the run started.",
    )
    sink_status: dict[str, str] | None = field(
        json="sinkStatus",
        description=(
            "Per sink, the outcome of the terminal delivery: `Delivered <time>` or "
            "`Failed <time>: <error>` (re-sent every 5 minutes until delivered)."
        ),
    )
    observed_generation: int | None = field(
        json="observedGeneration",
        fmt="int64",
        description="Generation observed when the run went Running.",
    )
    conditions: list[KubeCondition] | None = field(
        json="conditions", description="Admitted, ThresholdsSound, PlanExpanded, Measured."
    )
    provenance: str | None = field(
        json="provenance",
        enum=Provenance,
        description="The weakest over the results (sim < unknown < silicon); unknown when "
        "no result was recorded, never silicon by default.",
    )
    certifies_silicon: bool | None = field(
        json="certifiesSilicon",
        description="True only for a Passed, non-baseline run in which some required result "
        "was measured and every required result Passed on silicon, with no simulated or "
        "suspect result; an all-Skipped run certifies nothing.",
    )
    # --- link blame (F10-F13, docs/link-blame.md) ---
    link_blame: list[LinkBlame] | None = field(
        json="linkBlame",
        description="Per Failed Pair (or Group) under spec.linkBlame: its re-pairs (probes) "
        "and the blame.",
    )
    # --- cohort-relative gates (C7-C10, docs/thresholds.md) -------------------------
    cohort_verdicts: list[CohortVerdict] | None = field(
        json="cohortVerdicts",
        description="The run-level judgement of every threshold with relativeTo, one entry "
        "per cohort, checkpointed: a gate listed here is never judged again.",
    )


@attrs.define(kw_only=True)
class BurnInRun:
    """BurnInRun is one execution of a BurnInProfile against a set of nodes."""

    api_version: str = field(json="apiVersion", default=API_VERSION, description="API version.")
    kind: str = field(json="kind", default="BurnInRun", description="Kind.")
    metadata: ObjectMeta = field(json="metadata", factory=ObjectMeta, description="Metadata.")
    spec: BurnInRunSpec = field(json="spec", required=True, description="The run.")
    status: BurnInRunStatus | None = field(json="status", description="Observed state.")
