"""The runner contract: exit code + stdout -> what a runner declared; and the
delivery envelope, the document a sink receives (:mod:`glimmer.contract.envelope`).

Pure: standard library only, no I/O. Both dispatchers (the operator and
``glimmer run``) and every runner (``runners/``) share it.
"""

from glimmer.contract.artifacts import (
    Artifact,
    DroppedArtifact,
    DropReason,
    artifact_name_ok,
)
from glimmer.contract.envelope import (
    REASONS,
    VERSION,
    ArtifactRef,
    ClusterRef,
    Envelope,
    EnvelopeDecodeError,
    EnvelopeInvalidError,
    NodeVerdictRef,
    NotEvaluated,
    RunRef,
    SegmentSummary,
    Summary,
    TestResult,
    Violation,
    decode,
    delivery_id,
    encode,
    event_key_for_result,
    format_sent_at,
    validate,
)
from glimmer.contract.environment import SIM_GPU_ENV
from glimmer.contract.kinds import is_builtin, is_hardware_dependent
from glimmer.contract.names import ALIASES, canonical_name, grammar_ok, name_problem, unit_of
from glimmer.contract.numbers import format_go_g, format_go_plain, parse_go_float
from glimmer.contract.registry import (
    REGISTRY,
    SPREAD_METRICS,
    Aggregation,
    Combination,
    MetricSpec,
    ThresholdUse,
)
from glimmer.contract.report import (
    PROVENANCE_METRIC,
    Outcome,
    ReportReader,
    RunnerReport,
    outcome_for_exit,
    read_report,
)


def is_valid_metric_name(name: str) -> bool:
    """Whether a runner may print ``name`` as a metric key (B1, incl. registered unit)."""
    spec = REGISTRY.get(name)
    return name_problem(name, spec.unit if spec else None) is None


__all__ = [
    "ALIASES",
    "PROVENANCE_METRIC",
    "REASONS",
    "REGISTRY",
    "SIM_GPU_ENV",
    "SPREAD_METRICS",
    "VERSION",
    "Aggregation",
    "Artifact",
    "ArtifactRef",
    "ClusterRef",
    "Combination",
    "DropReason",
    "DroppedArtifact",
    "Envelope",
    "EnvelopeDecodeError",
    "EnvelopeInvalidError",
    "MetricSpec",
    "NodeVerdictRef",
    "NotEvaluated",
    "Outcome",
    "ReportReader",
    "RunRef",
    "RunnerReport",
    "SegmentSummary",
    "Summary",
    "TestResult",
    "ThresholdUse",
    "Violation",
    "artifact_name_ok",
    "canonical_name",
    "decode",
    "delivery_id",
    "encode",
    "event_key_for_result",
    "format_go_g",
    "format_go_plain",
    "format_sent_at",
    "grammar_ok",
    "is_builtin",
    "is_hardware_dependent",
    "is_valid_metric_name",
    "name_problem",
    "outcome_for_exit",
    "parse_go_float",
    "read_report",
    "unit_of",
    "validate",
]
