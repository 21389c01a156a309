"""Bare-host Group records are merged only within one session (N3).

Every rank record carries the session rank 0 created (or was given) and every other rank
was given through GLIMMER_SESSION; ``glimmer merge`` folds only records of rank 0's
session whose attempts ran at the same time. Yesterday's passing ``rank-01.json`` copied
beside today's ranks must never Pass over today's failing rank 1: it is refused, exit 3,
naming the file, and nothing is written."""

from __future__ import annotations

import json
import shutil
from datetime import datetime, timedelta
from pathlib import Path

from glimmer.local.records import rank_record_path, read_record
from tests.local.bare_sides import SESSION, glimmer_merge, glimmer_run, profile, rank_run

#: Rank 1 fails when the flag file exists (today): the same test on both days, so only
#: the session and the time tell yesterday's record from today's.
SCRIPT = 'echo bw=20; if [ "$BURNIN_RANK" = 1 ] && [ -e "$RANK1_FAILS_IF" ]; then exit 1; fi'
YESTERDAY = "yesterday-session-42"


def a_day_earlier(stamp: str) -> str:
    when = datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ") - timedelta(days=1)
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def _group(tmp_path: Path, name: str, *, session: str, rank1_fails: bool) -> Path:
    """Three ranks of one session, each in its own results directory under ``name``."""
    flag = tmp_path / "rank1-fails"
    if rank1_fails:
        flag.touch()
    else:
        flag.unlink(missing_ok=True)
    suite = profile(
        tmp_path / "group.yaml", scope="Group", script=SCRIPT, env={"RANK1_FAILS_IF": str(flag)}
    )
    for rank in range(3):
        out = tmp_path / name / f"r{rank}"
        done = rank_run(suite, rank=rank, nranks=3, out=out, session=session)
        assert done.exit_code == 2, done.output
    return tmp_path / name


def _merge_dir(tmp_path: Path, sources: dict[int, Path]) -> Path:
    merged = tmp_path / "merged"
    (merged / "ranks").mkdir(parents=True)
    for rank, folder in sources.items():
        shutil.copy(folder / f"r{rank}" / rank_record_path(rank), merged / rank_record_path(rank))
    return merged


def test_a_rank_record_of_another_session_is_refused_naming_the_file(tmp_path: Path) -> None:
    yesterday = _group(tmp_path, "yesterday", session=YESTERDAY, rank1_fails=False)
    today = _group(tmp_path, "today", session=SESSION, rank1_fails=True)
    # Today's own turnout is judged: rank 1 failed.
    own = _merge_dir(tmp_path / "own", {0: today, 1: today, 2: today})
    assert glimmer_merge("--results-dir", str(own), "--nranks", "3").exit_code == 1
    # Yesterday's passing rank 1 beside today's ranks 0 and 2.
    merged = _merge_dir(tmp_path, {0: today, 1: yesterday, 2: today})
    result = glimmer_merge("--results-dir", str(merged), "--nranks", "3")
    assert result.exit_code == 3, result.output
    assert str(merged / rank_record_path(1)) in result.output
    assert YESTERDAY in result.output and SESSION in result.output
    assert "GLIMMER_SESSION" in result.output  # how to re-run
    assert not (merged / "run.json").exists()


def test_a_rank_attempt_that_did_not_run_beside_the_others_is_refused_naming_the_file(
    tmp_path: Path,
) -> None:
    today = _group(tmp_path, "today", session=SESSION, rank1_fails=False)
    merged = _merge_dir(tmp_path, {0: today, 1: today, 2: today})
    path = merged / rank_record_path(1)
    body = json.loads(path.read_text())
    for attempt in body["tests"][0]["attempts"]:  # the same session, a day earlier
        for key in ("startedAt", "finishedAt"):
            attempt[key] = a_day_earlier(attempt[key])
    path.write_text(json.dumps(body))
    result = glimmer_merge("--results-dir", str(merged), "--nranks", "3")
    assert result.exit_code == 3, result.output
    assert str(path) in result.output and "not one session's attempt" in result.output
    assert not (merged / "run.json").exists()


def test_a_rank_record_written_before_sessions_is_refused_with_how_to_rerun(
    tmp_path: Path,
) -> None:
    today = _group(tmp_path, "today", session=SESSION, rank1_fails=False)
    merged = _merge_dir(tmp_path, {0: today, 1: today, 2: today})
    path = merged / rank_record_path(2)
    body = json.loads(path.read_text())
    del body["session"]
    body["recordVersion"] = 1
    path.write_text(json.dumps(body))
    result = glimmer_merge("--results-dir", str(merged), "--nranks", "3")
    assert result.exit_code == 3, result.output
    assert str(path) in result.output and "before side records carried a session" in result.output
    assert "GLIMMER_SESSION" in result.output
    assert not (merged / "run.json").exists()


def test_a_rank_other_than_0_is_refused_without_the_groups_session(tmp_path: Path) -> None:
    suite = profile(tmp_path / "g.yaml", scope="Group", script="exit 0")
    result = glimmer_run(
        str(suite), "--rank", "1", "--nranks", "2", "--root", "127.0.0.1", "--node", "n1",
        "--results-dir", str(tmp_path / "r1"), session=None,
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    assert "GLIMMER_SESSION" in result.output and "--rank 1" in result.output
    assert not (tmp_path / "r1" / rank_record_path(1)).exists()


def test_rank_0_creates_prints_and_records_the_session(tmp_path: Path) -> None:
    suite = profile(tmp_path / "g.yaml", scope="Group", script="echo bw=1")
    result = glimmer_run(
        str(suite), "--rank", "0", "--nranks", "2", "--root", "127.0.0.1", "--node", "n0",
        "--results-dir", str(tmp_path / "r0"), session=None,
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    record = read_record(tmp_path / "r0" / rank_record_path(0))
    assert f"GLIMMER_SESSION={record.session}" in result.output
    assert len(record.session) >= 16


def test_a_malformed_session_is_a_usage_error(tmp_path: Path) -> None:
    suite = profile(tmp_path / "g.yaml", scope="Group", script="exit 0")
    result = glimmer_run(
        str(suite), "--rank", "0", "--nranks", "2", "--root", "127.0.0.1", "--node", "n0",
        "--results-dir", str(tmp_path / "r0"), session="a b",
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    assert "is not a session" in result.output


def test_a_rank_record_with_a_malformed_session_is_refused_naming_the_file(
    tmp_path: Path,
) -> None:
    today = _group(tmp_path, "today", session=SESSION, rank1_fails=False)
    merged = _merge_dir(tmp_path, {0: today, 1: today, 2: today})
    path = merged / rank_record_path(1)
    body = json.loads(path.read_text())
    body["session"] = ""
    path.write_text(json.dumps(body))
    result = glimmer_merge("--results-dir", str(merged), "--nranks", "3")
    assert result.exit_code == 3, result.output
    assert str(path) in result.output and "is not a session" in result.output


def test_a_rank_recorded_under_sim_makes_the_group_sim(tmp_path: Path) -> None:
    suite = profile(
        tmp_path / "g.yaml", scope="Group", script="echo provenance=silicon; echo bw=20"
    )
    for rank in range(2):
        sim = ["--sim", "h200"] if rank == 1 else []
        done = glimmer_run(
            str(suite), "--rank", str(rank), "--nranks", "2", "--root", "127.0.0.1",
            "--node", f"n{rank}", "--results-dir", str(tmp_path / "g" / f"r{rank}"), *sim,
        )  # fmt: skip
        assert done.exit_code == 2, done.output
    merged = _merge_dir(tmp_path, {0: tmp_path / "g", 1: tmp_path / "g"})
    result = glimmer_merge("--results-dir", str(merged), "--nranks", "2")
    assert result.exit_code == 0, result.output
    doc = json.loads((merged / "run.json").read_text())
    (got,) = doc["results"]
    assert got["provenance"] == "sim" and doc["certifiesSilicon"] is False
