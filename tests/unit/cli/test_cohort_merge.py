"""N17: C7-C10 on bare hosts: ``glimmer merge --cohort`` over several hosts' run.json files
judges the cohort-relative gates with the operator's rule, and reaches the operator's
verdict from the same evidence (one brain, two dispatchers)."""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import example, given, settings
from hypothesis import strategies as st

from glimmer.cli import main
from tests.unit.controllers.run.test_cohort_judgement import drive, started

PROFILE = """\
apiVersion: burnin.glimmer.ai/v1alpha1
kind: BurnInProfile
metadata: {name: cohort}
spec:
  tests:
  - inline:
      kind: custom
      durationSeconds: 10
      runner:
        command: ["sh", "-c", "echo provenance=silicon; echo tflops=%(value)s"]
      thresholds:
      - metric: tflops
        comparison: GreaterThanOrEqual
        value: "50"
        relativeTo: {cohort: fingerprint, maxDeviation: {robustSigma: "4"}%(extra)s}
"""
TFLOPS = {"n0": "100", "n1": "101", "n2": "99", "n3": "88"}


def host_runs(tmp_path: Path, values: dict[str, str], *, extra: str = "") -> list[Path]:
    """One ``glimmer run`` per host (``--node``), each judging itself alone."""
    documents = []
    for node, value in values.items():
        profile = tmp_path / f"{node}.yaml"
        profile.write_text(PROFILE % {"value": value, "extra": extra})
        out = tmp_path / node
        ran = CliRunner().invoke(main, ["run", str(profile), "--report-dir", str(out),
                                        "--node", node])  # fmt: skip
        assert ran.exit_code == 0, ran.output  # the absolute gate passes every host
        documents.append(out / "run.json")
    return documents


def merge(tmp_path: Path, documents: list[Path]) -> tuple[int, dict[str, Any]]:
    out = tmp_path / "fleet"
    args = ["merge", "--results-dir", str(out)]
    for document in documents:
        args += ["--cohort", str(document)]
    merged = CliRunner().invoke(main, args)
    cohort = out / "cohort.json"
    return merged.exit_code, json.loads(cohort.read_text()) if cohort.exists() else {}


def test_N17_merge_fails_the_slow_host_of_a_bare_host_cohort(tmp_path: Path) -> None:
    code, document = merge(tmp_path, host_runs(tmp_path, TFLOPS))
    assert code == 1
    assert document["kind"] == "BurnInLocalCohort" and document["phase"] == "Failed"
    phases = {r["nodes"][0]: r["phase"] for r in document["results"]}
    assert phases == {"n0": "Passed", "n1": "Passed", "n2": "Passed", "n3": "Failed"}
    (record,) = document["cohortVerdicts"]
    assert (record["size"], record["median"], record["mad"], record["outliers"]) == (
        4, "99.5", "1", ["n3"])  # fmt: skip
    assert record["fingerprint"].startswith("glimmer-v1:")  # the host's own digest (K4)


async def test_N17_two_dispatchers_reach_the_same_cohort_verdict(tmp_path: Path) -> None:
    """The operator over four nodes and ``glimmer merge --cohort`` over four hosts'
    run.json, fed the same numbers: the same phases, violations and cohort numbers."""
    _, bare = merge(tmp_path, host_runs(tmp_path, TFLOPS))
    cluster = await started(digests=dict.fromkeys(TFLOPS, "glimmer-v1:aaa"))
    run = await drive(cluster, TFLOPS)
    status = run["status"]

    def verdicts(results: list[dict[str, Any]]) -> dict[str, Any]:
        return {r["nodes"][0]: (r["phase"], r.get("message"), r.get("violations"),
                                r.get("notEvaluated")) for r in results}  # fmt: skip

    def numbers(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
        # The digests differ by what was observed (a Node, a host), the stamps by clock.
        return [{k: v for k, v in r.items() if k not in ("fingerprint", "judgedAt", "test")}
                for r in records]  # fmt: skip

    assert verdicts(bare["results"]) == verdicts(status["results"])
    assert numbers(bare["cohortVerdicts"]) == numbers(status["cohortVerdicts"])
    assert bare["phase"] == status["phase"] == "Failed"


def _both(tmp_path: Path, values: dict[str, str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The same numbers through ``glimmer merge --cohort`` and through the operator."""
    _, bare = merge(tmp_path, host_runs(tmp_path, values))

    async def operator() -> dict[str, Any]:
        cluster = await started(digests=dict.fromkeys(values, "glimmer-v1:aaa"))
        return await drive(cluster, values)

    return bare, asyncio.run(operator())["status"]


@settings(max_examples=6, deadline=None)
@given(st.lists(st.integers(min_value=51, max_value=400), min_size=4, max_size=4))
@example([100, 101, 99, 88])  # one outlier
@example([100, 100, 100, 100])  # MAD 0, none
def test_N17_property_both_dispatchers_judge_any_cohort_alike(numbers: list[int]) -> None:
    """For any four values that each pass the absolute gate, the bare-host merge and the
    operator fail exactly the same nodes, for the same reasons, with the same numbers."""
    values = {f"n{i}": str(v) for i, v in enumerate(numbers)}
    with tempfile.TemporaryDirectory() as scratch:
        bare, status = _both(Path(scratch), values)

    def judged(results: list[dict[str, Any]]) -> dict[str, Any]:
        return {r["nodes"][0]: (r["phase"], r.get("violations")) for r in results}

    def numbers_of(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{k: v for k, v in r.items() if k not in ("fingerprint", "judgedAt", "test")}
                for r in records]  # fmt: skip

    assert judged(bare["results"]) == judged(status["results"])
    assert numbers_of(bare["cohortVerdicts"]) == numbers_of(status["cohortVerdicts"])
    assert bare["phase"] == status["phase"]


def test_N17_merge_below_min_cohort_size_judges_nothing_and_says_so(tmp_path: Path) -> None:
    small = {"n0": "100", "n3": "88"}
    code, document = merge(tmp_path, host_runs(tmp_path, small))
    assert code == 0  # the hosts' own verdicts stand: the relative gate passed nothing
    (record,) = document["cohortVerdicts"]
    assert record["evaluated"] is False and "below minCohortSize 3" in record["reason"]
    assert {r["phase"] for r in document["results"]} == {"Passed"}


@pytest.mark.parametrize("case", ["twice", "other-profile", "no-nranks"])
def test_N17_merge_refuses_what_is_not_one_cohort(tmp_path: Path, case: str) -> None:
    documents = host_runs(tmp_path, {"n0": "100", "n1": "100", "n2": "100"})
    if case == "twice":
        documents.append(documents[0])
    elif case == "other-profile":
        (tmp_path / "o").mkdir()
        other = host_runs(tmp_path / "o", {"n9": "100"}, extra=", minCohortSize: 4")
        documents += other
    args = ["merge", "--results-dir", str(tmp_path / "fleet")]
    if case != "no-nranks":
        for document in documents:
            args += ["--cohort", str(document)]
    merged = CliRunner().invoke(main, args)
    assert merged.exit_code == 3, merged.output
    assert not (tmp_path / "fleet" / "cohort.json").exists()
