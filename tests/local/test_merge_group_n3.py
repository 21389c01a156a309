"""N3 ``glimmer merge``: every rank records, the merge decides through the operator's code
(F6 verdict, F7 election via combine_group, then judge_attempt), and a turnout it cannot
judge whole is refused (exit 3) naming what is missing or duplicated."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from glimmer.local.records import rank_record_path, read_record
from glimmer.plan.gates import threshold_from_wire
from glimmer.verdict import SideReport, combine_group, judge_attempt
from tests.local.bare_sides import (
    SESSION,
    free_port,
    glimmer_merge,
    profile,
    rank_run,
    run_json,
)

GLIMMER = [sys.executable, "-c", "from glimmer.cli import main; main()"]
RING_GATE = {"metric": "miscompares", "comparison": "Equal", "value": "0"}


def _collect(tmp_path: Path, nranks: int) -> Path:
    merged = tmp_path / "merged"
    (merged / "ranks").mkdir(parents=True)
    for rank in range(nranks):
        shutil.copy(tmp_path / f"r{rank}" / rank_record_path(rank), merged / rank_record_path(rank))
    return merged


def test_N3_merge_of_three_real_ranks_gives_the_group_verdict(tmp_path: Path) -> None:
    """Three ring-allreduce ranks exchange real bytes over loopback; the merge's run.json
    is what combine_group + judge_attempt over the three records predicts."""
    suite = profile(
        tmp_path / "ring.yaml",
        scope="Group",
        command=[sys.executable, "-m", "runners.ring_allreduce"],
        env={
            "BURNIN_RING_ALLREDUCE_PORT": str(free_port(0)),
            "BURNIN_RING_ALLREDUCE_RENDEZVOUS_SECONDS": "60",
            "BURNIN_RING_ALLREDUCE_ELEMENTS": "3000",
            "BURNIN_RING_ALLREDUCE_ITERATIONS": "2",
        },
        thresholds=[RING_GATE],
    )
    env = {**os.environ, "PYTHONPATH": str(Path.cwd()), "GLIMMER_SESSION": SESSION}
    ranks = [
        subprocess.Popen(
            [
                *GLIMMER,
                "run",
                str(suite),
                "--rank",
                str(r),
                "--nranks",
                "3",
                "--root",
                "127.0.0.1",
                "--node",
                f"n{r}",
                "--results-dir",
                str(tmp_path / f"r{r}"),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
        )
        for r in range(3)
    ]
    for proc in ranks:
        out, _ = proc.communicate(timeout=180)
        assert proc.returncode == 2, out  # a rank judges nothing
        assert not (tmp_path / "run.json").exists()
    merged = _collect(tmp_path, 3)
    result = glimmer_merge("--results-dir", str(merged), "--nranks", "3")
    assert result.exit_code == 0, result.output

    records = [read_record(merged / rank_record_path(r)) for r in range(3)]
    predicted = judge_attempt(
        combine_group(
            [
                SideReport(label=f"rank {r}", node=f"n{r}", report=rec.tests[0].attempts[0].report)
                for r, rec in enumerate(records)
            ]
        ),
        kind="custom",
        thresholds=[threshold_from_wire(RING_GATE)],
    )
    (got,) = run_json(merged)["results"]
    assert got["phase"] == str(predicted.phase) == "Passed"
    assert got["message"] == predicted.message
    assert got["metrics"] == predicted.metrics
    assert got["metrics"]["miscompares"] == "0"
    assert got["nodes"] == ["n0", "n1", "n2"]
    assert got["attempts"][0]["node"] == "n0"  # F9: recorded on rank 0's node


def _ranks(
    tmp_path: Path,
    script: str,
    *,
    nranks: int = 3,
    thresholds: list[dict[str, str]] | None = None,
    repeat: int = 1,
) -> Path:
    suite = profile(
        tmp_path / "g.yaml", scope="Group", script=script, thresholds=thresholds, repeat=repeat
    )
    for rank in range(nranks):
        done = rank_run(suite, rank=rank, nranks=nranks, out=tmp_path / f"r{rank}")
        assert done.exit_code == 2, done.output
    return _collect(tmp_path, nranks)


def test_F6_group_failed_names_the_failing_rank(tmp_path: Path) -> None:
    merged = _ranks(
        tmp_path,
        'if [ "$BURNIN_RANK" = 1 ]; then echo RING_FAIL: lane 7 wrong; exit 1; fi; echo x=1',
    )
    result = glimmer_merge("--results-dir", str(merged), "--nranks", "3")
    assert result.exit_code == 1, result.output
    (got,) = run_json(merged)["results"]
    assert got["phase"] == "Failed" and "rank 1 (n1)" in got["message"]


def test_F6_group_error_names_the_rank_that_crashed(tmp_path: Path) -> None:
    merged = _ranks(tmp_path, 'if [ "$BURNIN_RANK" = 2 ]; then exit 9; fi; echo x=1')
    result = glimmer_merge("--results-dir", str(merged), "--nranks", "3")
    assert result.exit_code == 3, result.output
    (got,) = run_json(merged)["results"]
    assert got["phase"] == "Error" and "rank 2 (n2)" in got["message"]


def test_F7_one_ranks_na_makes_the_key_unmeasurable(tmp_path: Path) -> None:
    merged = _ranks(
        tmp_path,
        'if [ "$BURNIN_RANK" = 2 ]; then echo eccErrors=n/a; else echo eccErrors=0; fi',
        thresholds=[{"metric": "eccErrors", "comparison": "Equal", "value": "0"}],
    )
    result = glimmer_merge("--results-dir", str(merged), "--nranks", "3")
    (got,) = run_json(merged)["results"]
    assert "eccErrors" not in got.get("metrics", {})
    assert "eccErrors" in got["unmeasurable"]
    assert got["phase"] == "Failed" and result.exit_code == 1  # UnmeasurableRequired


def test_N3_partial_turnout_is_refused_naming_the_missing_rank(tmp_path: Path) -> None:
    merged = _ranks(tmp_path, "echo x=1")
    (merged / rank_record_path(1)).unlink()
    (merged / "run.json").write_text("{}")  # a stale verdict must not survive a refusal
    result = glimmer_merge("--results-dir", str(merged), "--nranks", "3")
    assert result.exit_code == 3
    assert "partial turnout" in result.output and "(rank 1)" in result.output
    assert not (merged / "run.json").exists()
    four = glimmer_merge("--results-dir", str(merged), "--nranks", "4")
    assert four.exit_code == 3 and "group of 3, not --nranks 4" in four.output


def test_N3_a_rank_recorded_twice_is_refused(tmp_path: Path) -> None:
    merged = _ranks(tmp_path, "echo x=1")
    shutil.copy(merged / rank_record_path(1), merged / "ranks" / "rank-1.json")
    result = glimmer_merge("--results-dir", str(merged), "--nranks", "3")
    assert result.exit_code == 3
    assert "duplicate turnout" in result.output and "rank 1:" in result.output
    assert not (merged / "run.json").exists()


def test_N3_two_ranks_on_one_node_are_a_duplicate_turnout(tmp_path: Path) -> None:
    suite = profile(tmp_path / "g.yaml", scope="Group", script="echo x=1")
    for rank in range(3):
        node = "same" if rank else "root"
        assert (
            rank_run(suite, rank=rank, nranks=3, out=tmp_path / f"r{rank}", node=node).exit_code
            == 2
        )
    merged = _collect(tmp_path, 3)
    result = glimmer_merge("--results-dir", str(merged), "--nranks", "3")
    assert result.exit_code == 3 and "ranks 1 and 2 both ran on node 'same'" in result.output


def test_N3_a_mixed_test_turnout_is_refused(tmp_path: Path) -> None:
    merged = _ranks(tmp_path, "echo x=1")
    other = profile(tmp_path / "other.yaml", scope="Group", script="echo y=2")
    assert rank_run(other, rank=2, nranks=3, out=tmp_path / "other").exit_code == 2
    shutil.copy(tmp_path / "other" / rank_record_path(2), merged / rank_record_path(2))
    result = glimmer_merge("--results-dir", str(merged), "--nranks", "3")
    assert result.exit_code == 3 and "mixed turnout" in result.output


@pytest.mark.parametrize(
    ("edit", "named"),
    [
        (lambda body: body.update(kind="BurnInLocalRun"), "is not a"),
        (lambda body: body.update(recordVersion=3), "recordVersion"),
        (lambda body: body.update(complete=False), "has not finished writing"),
        (lambda body: body.update(extra=1), "unknown field(s) extra"),
        (lambda body: body["side"].update(rank=1), "its name says another rank"),
        (lambda body: body["side"].update(role="server"), "unknown field(s) nranks, rank"),
        (
            lambda body: body["tests"][0]["attempts"][0]["report"]["metrics"].update(
                {"bad name": "1"}
            ),
            "not a metric name",
        ),
    ],
    ids=["kind", "version", "incomplete", "extra-field", "rank-mismatch", "role", "metric-name"],
)
def test_N3_a_foreign_or_malformed_rank_record_is_refused(
    tmp_path: Path, edit: Callable[[dict[str, Any]], None], named: str
) -> None:
    merged = _ranks(tmp_path, "echo x=1")
    path = merged / rank_record_path(2)
    body = json.loads(path.read_text())
    edit(body)
    path.write_text(json.dumps(body))
    result = glimmer_merge("--results-dir", str(merged), "--nranks", "3")
    assert result.exit_code == 3, result.output
    assert named in result.output and str(path) in result.output
    assert not (merged / "run.json").exists()


@pytest.mark.parametrize(
    "text",
    ['{"a": 1, "a": 2}', '{"x": NaN}', "\xff\xfe", "[" * 100_000, ""],
    ids=["duplicate-key", "nan", "not-utf8", "deep", "empty"],
)
def test_N3_rank_records_are_strict_json(tmp_path: Path, text: str) -> None:
    merged = _ranks(tmp_path, "echo x=1")
    path = merged / rank_record_path(0)
    path.write_bytes(text.encode("latin-1"))
    result = glimmer_merge("--results-dir", str(merged), "--nranks", "3")
    assert result.exit_code == 3, result.output
    assert "not a side record" in result.output or "must be an object" in result.output


def test_N3_a_stray_file_under_ranks_is_refused(tmp_path: Path) -> None:
    merged = _ranks(tmp_path, "echo x=1")
    (merged / "ranks" / "notes.json").write_text("{}")
    result = glimmer_merge("--results-dir", str(merged), "--nranks", "3")
    assert result.exit_code == 3 and "notes.json: not a rank record" in result.output


def test_D2_group_repeats_are_judged_attempt_by_attempt(tmp_path: Path) -> None:
    merged = _ranks(tmp_path, "echo x=1", repeat=2)
    result = glimmer_merge("--results-dir", str(merged), "--nranks", "3")
    assert result.exit_code == 0, result.output
    (got,) = run_json(merged)["results"]
    assert [a["trigger"] for a in got["attempts"]] == ["Initial", "Repeat"]
    assert got["repeatsCompleted"] == 2
