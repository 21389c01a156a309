"""The runner contract: exit code + stdout -> what a runner declared.

Pure: standard library only, no I/O. Both dispatchers (the operator and
``glimmer run``) and every runner (``runners/``) share it.
"""

from glimmer.contract.artifacts import (
    Artifact,
    DroppedArtifact,
    DropReason,
    artifact_name_ok,
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
    "REGISTRY",
    "SIM_GPU_ENV",
    "SPREAD_METRICS",
    "Aggregation",
    "Artifact",
    "Combination",
    "DropReason",
    "DroppedArtifact",
    "MetricSpec",
    "Outcome",
    "ReportReader",
    "RunnerReport",
    "ThresholdUse",
    "artifact_name_ok",
    "canonical_name",
    "format_go_g",
    "format_go_plain",
    "grammar_ok",
    "is_builtin",
    "is_hardware_dependent",
    "is_valid_metric_name",
    "name_problem",
    "outcome_for_exit",
    "parse_go_float",
    "read_report",
    "unit_of",
]
