"""Small builders shared by the verdict tests."""

from __future__ import annotations

from typing import Any

from glimmer.contract import read_report
from glimmer.verdict import AttemptVerdict, Threshold, judge_attempt


def gte(metric: str, value: str, applicability: str = "Required") -> Threshold:
    return Threshold(metric, "GreaterThanOrEqual", value, applicability)


def lte(metric: str, value: str, applicability: str = "Required") -> Threshold:
    return Threshold(metric, "LessThanOrEqual", value, applicability)


def eq(metric: str, value: str) -> Threshold:
    return Threshold(metric, "Equal", value)


def judge(
    output: str,
    thresholds: list[Threshold],
    *,
    exit_code: int = 0,
    kind: str = "custom",
    **kwargs: Any,
) -> AttemptVerdict:
    report = read_report(output.encode(), kind=kind, exit_code=exit_code)
    return judge_attempt(report, kind=kind, thresholds=thresholds, **kwargs)
