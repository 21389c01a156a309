"""``glimmer evaluate -o json``: artifacts as printed (I31), and violations and
notEvaluated entries in the status's words, from the one result codec (I4)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from glimmer.cli import main
from glimmer.contract import read_report
from glimmer.verdict import Threshold, judge_attempt
from glimmer.verdict.codec import not_evaluated_from_json, violation_from_json
from tests.local.test_run_json_one_codec import IN_ORDER, INTERLEAVED_LINES

TEST_YAML = """\
kind: BurnInTest
metadata: {name: t}
spec:
  kind: custom
  thresholds:
  - {metric: bw, comparison: GreaterThanOrEqual, value: "10"}
  - {metric: peerBw, comparison: GreaterThanOrEqual, value: "5",
     applicability: RequiredIfMeasurable}
"""
GATES = [
    Threshold("bw", "GreaterThanOrEqual", "10"),
    Threshold("peerBw", "GreaterThanOrEqual", "5", "RequiredIfMeasurable"),
]


def evaluate(tmp_path: Path, output: str, exit_code: int) -> dict[str, Any]:
    (tmp_path / "t.yaml").write_text(TEST_YAML)
    (tmp_path / "out.txt").write_text(output)
    result = CliRunner().invoke(
        main,
        ["evaluate", "--test", str(tmp_path / "t.yaml"), "--exit-code", str(exit_code),
         "--stdout", str(tmp_path / "out.txt"), "-o", "json"],
    )  # fmt: skip
    doc: dict[str, Any] = json.loads(result.stdout)
    return doc


def test_I31_evaluate_lists_artifacts_in_document_order(tmp_path: Path) -> None:
    doc = evaluate(tmp_path, "\n".join(["bw=12", *INTERLEAVED_LINES]) + "\n", 0)
    assert [(a["name"], a.get("dropped", "")) for a in doc["artifacts"]] == IN_ORDER
    assert [("digest" in a) for a in doc["artifacts"]] == [not why for _, why in IN_ORDER]


def test_17_1_evaluate_violations_and_not_evaluated_are_the_codec_entries(
    tmp_path: Path,
) -> None:
    for output, phase in [
        ("bw=3\npeerBw=n/a\nslow\n", "Failed"),
        ("bw=30\npeerBw=n/a\n", "Passed"),
    ]:
        doc = evaluate(tmp_path, output, 0)
        report = read_report(output.encode(), kind="custom", exit_code=0)
        verdict = judge_attempt(report, kind="custom", thresholds=GATES)
        assert doc["phase"] == phase
        assert [violation_from_json(v) for v in doc["violations"]] == list(verdict.violations)
        assert [not_evaluated_from_json(n) for n in doc["notEvaluated"]] == list(
            verdict.not_evaluated
        )
        assert bool(doc["violations"]) is (phase == "Failed")
        assert bool(doc["notEvaluated"]) is (phase == "Passed")
        for violation in doc["violations"]:  # the codec's keys, in its order
            assert list(violation) == ["index", "metric", "cause", "kind", "reason"]
