"""Builders for the link (Pair/Group) verdict tests: one runner report, one side."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from glimmer.contract import Artifact, Outcome, RunnerReport, outcome_for_exit, read_report
from glimmer.verdict import SideReport

DEFAULT_EXIT = {"Pass": 0, "Fail": 1, "Skip": 2, "Error": 3}


def report(
    outcome: str = "Pass",
    *,
    exit_code: int | None = None,
    metrics: Mapping[str, str] | None = None,
    na: Iterable[str] = (),
    message: str = "",
    skip_declared: bool | None = None,
    provenance: str | None = None,
    invalid: tuple[str, ...] = (),
    invalid_count: int | None = None,
    unreadable: int = 0,
    artifacts: tuple[Artifact, ...] = (),
) -> RunnerReport:
    """A report as a runner could have produced it (outcome agrees with the exit code)."""
    code = DEFAULT_EXIT[outcome] if exit_code is None else exit_code
    declared = (outcome == "Skip") if skip_declared is None else skip_declared
    derived = outcome_for_exit(code, skip_declared=declared)
    assert derived is Outcome(outcome), (outcome, code, declared)
    return RunnerReport(
        exit_code=code,
        outcome=derived,
        metrics=dict(metrics or {}),
        unmeasurable=frozenset(na),
        invalid_names=invalid,
        invalid_name_count=len(invalid) if invalid_count is None else invalid_count,
        message=message,
        skip_declared=declared,
        artifacts=artifacts,
        dropped_artifacts=(),
        unreadable_lines=unreadable,
        declared_provenance=provenance,
        artifacts_in_order=artifacts,
    )


def parsed(output: str, *, exit_code: int = 0, kind: str = "custom") -> RunnerReport:
    """A report read from real runner output."""
    return read_report(output.encode(), kind=kind, exit_code=exit_code)


def side(label: str, node: str, rep: RunnerReport | None) -> SideReport:
    return SideReport(label=label, node=node, report=rep)


def ranks(*reports: RunnerReport | None) -> list[SideReport]:
    return [
        SideReport(label=f"rank {i}", node=f"node-{i}", report=r) for i, r in enumerate(reports)
    ]


def artifact(name: str) -> Artifact:
    return Artifact(name=name, media_type="application/json", payload=b"{}\n", digest="sha256:x")
