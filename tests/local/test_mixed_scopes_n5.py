"""N5: a profile that mixes Node, Pair and Group tests on bare hosts.

Each invocation runs its own scope (plain: the Node tests; ``--role``: the Pair tests;
``--rank``: the Group tests) and reports every other test Skipped, with no attempt,
saying why and which command runs it; it warns once. Those skips never certify: a run
whose required test was not run here certifies no silicon, its node verdict is
NotJudged, and ``glimmer merge`` never passes a test no rank ran. A profile with nothing
of the invocation's scope is still refused (N1), and a test not run here is still
validated with the whole plan.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from glimmer.contract.envelope import decode
from glimmer.local.dispatcher import LocalOptions, run_plan
from glimmer.local.links import host_plan, not_run_here
from glimmer.local.records import (
    RecordError,
    SideRecord,
    SideTest,
    rank_record_path,
    read_record,
    record_from_json,
    record_to_json,
)
from glimmer.local.results import exit_status
from glimmer.plan import PinnedPlan
from glimmer.verdict import AttemptVerdict, Phase
from tests.local.bare_sides import glimmer_merge, glimmer_run, rank_run, run_json

SILICON_OK = "echo bw=12; echo provenance=silicon; echo OK"
GATE = [{"metric": "bw", "comparison": "GreaterThanOrEqual", "value": "10"}]


def _test(scope: str, script: str = SILICON_OK, **extra: Any) -> dict[str, Any]:
    runner: dict[str, Any] = {"command": ["sh", "-c", script]}
    if scope == "Group":
        runner["image"] = "example.invalid/group-capable:dev"  # P5: only an image bypasses
    return {"kind": "custom", "scope": scope, "runner": runner, "thresholds": GATE, **extra}


def mixed_profile(path: Path, *entries: dict[str, Any]) -> Path:
    """A profile named ``suite`` of the given entries (``{"testRef"/"inline": ...}``)."""
    path.write_text(
        yaml.safe_dump(
            {
                "kind": "BurnInProfile",
                "metadata": {"name": "suite"},
                "spec": {"tests": list(entries)},
            }
        )
    )
    return path


def node_pair_group(path: Path, *, pair_required: bool = True) -> Path:
    return mixed_profile(
        path,
        {"inline": _test("Node")},
        {"inline": _test("Pair"), "required": pair_required},
        {"inline": _test("Group")},
    )


def test_N5_a_plain_run_runs_the_node_tests_and_reports_the_links_skipped(tmp_path: Path) -> None:
    suite = node_pair_group(tmp_path / "suite.yaml")
    out = tmp_path / "r"
    result = glimmer_run(str(suite), "--node", "host-a", "--results-dir", str(out))
    assert result.exit_code == 0, result.output  # N4: the Node test that ran Passed
    doc = run_json(out)
    phases = {r["name"]: (r["scope"], r["phase"]) for r in doc["results"]}
    assert phases == {
        "inline-0-custom": ("Node", "Passed"),
        "inline-1-custom": ("Pair", "Skipped"),
        "inline-2-custom": ("Group", "Skipped"),
    }
    pair, group = doc["results"][1], doc["results"][2]
    for skipped in (pair, group):
        assert skipped["attempts"] == [] and skipped["provenance"] == "unknown"
        assert skipped["nodes"] == ["host-a"]
        assert skipped["message"].startswith("not run on this host")
        assert f"glimmer run {suite}" in skipped["message"]
    assert "--role server --peer-node NODE" in pair["message"]
    assert "--role client --peer HOST --peer-node NODE" in pair["message"]
    assert "--rank R --nranks N --root HOST" in group["message"]
    assert "glimmer merge" in group["message"]
    assert doc["notRunHere"] == ["inline-1-custom", "inline-2-custom"]
    # Warned once, and the run's own line says it is not a full run of the profile.
    assert result.output.count("are not run on this host and are reported Skipped") == 1
    assert "NOT A FULL RUN OF THE PROFILE" in result.output
    assert not (out / "raw" / "inline-1-custom.a1.log").exists()  # nothing ran for them


def test_N5_a_required_test_not_run_here_means_the_host_is_not_certified(tmp_path: Path) -> None:
    """The Node test Passed on silicon, but the link was not run here: the run, its
    envelope and its node verdict certify nothing."""
    out = tmp_path / "r"
    suite = node_pair_group(tmp_path / "suite.yaml")
    result = glimmer_run(str(suite), "--node", "host-a", "--results-dir", str(out))
    assert result.exit_code == 0, result.output
    doc = run_json(out)
    assert doc["results"][0]["provenance"] == "silicon"
    assert doc["phase"] == "Passed" and doc["certifiesSilicon"] is False
    assert "(does not certify silicon)" in result.output
    envelope = decode((out / "envelopes" / "001-RunPhaseChanged.json").read_bytes())
    assert envelope.certifies_silicon is False
    (verdict,) = envelope.node_verdicts
    assert (verdict.node, verdict.verdict) == ("host-a", "NotJudged")
    assert "inline-1-custom" in verdict.reason and "inline-2-custom" in verdict.reason


def test_N5_an_optional_test_not_run_here_does_not_decide(tmp_path: Path) -> None:
    """Skipped never decides, and an optional test never does: the required Node test
    on silicon certifies the host, the optional link still reads Skipped."""
    out = tmp_path / "r"
    suite = mixed_profile(
        tmp_path / "suite.yaml",
        {"inline": _test("Node")},
        {"inline": _test("Pair"), "required": False},
    )
    result = glimmer_run(str(suite), "--node", "host-a", "--results-dir", str(out))
    assert result.exit_code == 0, result.output
    doc = run_json(out)
    assert doc["results"][1]["phase"] == "Skipped" and doc["certifiesSilicon"] is True


def test_N5_a_failed_node_test_still_fails_a_mixed_run(tmp_path: Path) -> None:
    out = tmp_path / "r"
    suite = mixed_profile(
        tmp_path / "suite.yaml",
        {"inline": _test("Node", "echo bw=3; echo slow")},
        {"inline": _test("Pair")},
    )
    result = glimmer_run(str(suite), "--node", "host-a", "--results-dir", str(out))
    assert result.exit_code == 1, result.output
    assert run_json(out)["phase"] == "Failed"


def test_N5_a_pair_client_reports_the_node_and_group_tests_not_run_here(tmp_path: Path) -> None:
    out = tmp_path / "client"
    suite = node_pair_group(tmp_path / "suite.yaml")
    result = glimmer_run(
        str(suite), "--role", "client", "--node", "host-b", "--peer", "127.0.0.1",
        "--peer-node", "host-a", "--results-dir", str(out),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    doc = run_json(out)
    by_name = {r["name"]: r for r in doc["results"]}
    assert by_name["inline-1-custom"]["phase"] == "Passed"  # the link, judged by the client
    assert by_name["inline-1-custom"]["nodes"] == ["host-a", "host-b"]
    node, group = by_name["inline-0-custom"], by_name["inline-2-custom"]
    assert node["phase"] == group["phase"] == "Skipped"
    assert node["nodes"] == ["host-b"] and "(no --role or --rank)" in node["message"]
    assert "--rank R" in group["message"]
    assert doc["certifiesSilicon"] is False


def test_N5_a_pair_server_records_the_tests_it_does_not_run(tmp_path: Path) -> None:
    out = tmp_path / "server"
    suite = node_pair_group(tmp_path / "suite.yaml")
    result = glimmer_run(
        str(suite), "--role", "server", "--node", "host-a", "--peer-node", "host-b",
        "--results-dir", str(out),
    )  # fmt: skip
    assert result.exit_code == 2, result.output  # a server decides nothing (N3)
    record = read_record(out / "sidecar" / "server-record.json")
    assert [(t.test.name, bool(t.not_run_here), len(t.attempts)) for t in record.tests] == [
        ("inline-0-custom", True, 0),
        ("inline-1-custom", False, 1),
        ("inline-2-custom", True, 0),
    ]


def test_N5_a_group_merge_never_passes_a_test_no_rank_ran(tmp_path: Path) -> None:
    """Every rank runs the Group test and records the others as not run here; the merge
    reports those Skipped with the rank's reason, never a Pass, and the merged run
    certifies nothing."""
    suite = node_pair_group(tmp_path / "suite.yaml")
    merged = tmp_path / "merged"
    (merged / "ranks").mkdir(parents=True)
    for rank in range(2):
        folder = tmp_path / f"r{rank}"
        result = rank_run(suite, rank=rank, nranks=2, out=folder)
        assert result.exit_code == 2, result.output
        shutil.copy(folder / rank_record_path(rank), merged / rank_record_path(rank))
        record = read_record(folder / rank_record_path(rank))
        assert [bool(t.not_run_here) for t in record.tests] == [True, True, False]
    result = glimmer_merge("--results-dir", str(merged), "--nranks", "2")
    doc = run_json(merged)
    by_name = {r["name"]: r for r in doc["results"]}
    assert by_name["inline-2-custom"]["phase"] == "Passed", result.output
    for name in ("inline-0-custom", "inline-1-custom"):
        assert by_name[name]["phase"] == "Skipped", result.output
    assert doc["notRunHere"] == ["inline-0-custom", "inline-1-custom"]
    assert doc["certifiesSilicon"] is False


def test_N5_a_record_that_ran_a_test_it_says_it_did_not_run_is_refused(tmp_path: Path) -> None:
    suite = node_pair_group(tmp_path / "suite.yaml")
    folder = tmp_path / "r0"
    assert rank_run(suite, rank=0, nranks=2, out=folder).exit_code == 2
    body = json.loads((folder / rank_record_path(0)).read_text())
    ran = next(t for t in body["tests"] if "notRunHere" not in t)
    body["tests"][0]["attempts"] = ran["attempts"]
    with pytest.raises(RecordError, match="set on a test that has attempts"):
        record_from_json(body, where="forged.json")


def test_N5_a_record_of_one_scope_reads_as_before() -> None:
    """``notRunHere`` is written only when set: a record without it decodes unchanged."""
    plan = host_plan(profile={"tests": [{"inline": _test("Group")}]}, tests={}, node="n0",
                     flags=None)  # fmt: skip
    assert isinstance(plan, PinnedPlan)
    record = SideRecord(
        role="rank", node="n0", peer_host="h", peer_node="n0", profile="p", sim=None,
        retry_on_error_limit=0, tests=[SideTest(test=plan.tests[0])],
        session="test-session-0001", rank=0, nranks=2,
    )  # fmt: skip
    body = record_to_json(record)
    assert "notRunHere" not in body["tests"][0]
    assert record_from_json(body, where="r.json").tests[0].not_run_here == ""


def test_N5_a_test_not_run_here_is_still_validated_with_the_whole_profile(tmp_path: Path) -> None:
    """A Group test of a kind whose default image speaks no rendezvous is refused on a
    plain run too: the profile is broken wherever it runs."""
    out = tmp_path / "r"
    suite = mixed_profile(
        tmp_path / "suite.yaml",
        {"inline": _test("Node")},
        {"inline": {"kind": "tcp-baseline", "scope": "Group"}},
    )
    result = glimmer_run(str(suite), "--node", "host-a", "--results-dir", str(out))
    assert result.exit_code == 3 and "Group-scoped" in result.output, result.output
    assert not out.exists()


def test_N5_a_profile_with_nothing_of_this_scope_is_still_refused(tmp_path: Path) -> None:
    out = tmp_path / "r"
    suite = mixed_profile(
        tmp_path / "suite.yaml", {"inline": _test("Pair")}, {"inline": _test("Group")}
    )
    result = glimmer_run(str(suite), "--node", "host-a", "--results-dir", str(out))
    assert result.exit_code == 3 and "the profile has none" in result.output, result.output
    assert not out.exists()


def test_N5_plan_shows_what_runs_here_and_what_does_not(tmp_path: Path) -> None:
    suite = node_pair_group(tmp_path / "suite.yaml")
    result = glimmer_run(str(suite), "--node", "host-a", "--dry-run", "-o", "json")
    assert result.exit_code == 0, result.output
    shown = json.loads(result.stdout)
    assert [t["name"] for t in shown["tests"]] == ["inline-0-custom"]
    assert [(t["name"], t["scope"]) for t in shown["notRunHere"]] == [
        ("inline-1-custom", "Pair"),
        ("inline-2-custom", "Group"),
    ]


def test_N5_an_interrupted_run_still_reports_the_tests_not_run_here_skipped(tmp_path: Path) -> None:
    """What did not finish is Error (I26); a test that was never to run here stays
    Skipped, and the run exits 3 whatever it settled."""
    profile = {
        "tests": [
            {"inline": _test("Node")},
            {"inline": _test("Pair")},
            {"inline": _test("Node", "echo bw=12")},
        ]
    }
    plan = host_plan(profile=profile, tests={}, node="host-a", flags=None)
    assert isinstance(plan, PinnedPlan)

    class Interrupting:
        def attempt_started(self, **_: Any) -> None:
            raise KeyboardInterrupt

        def attempt_finished(
            self, *, test: str, verdict: AttemptVerdict, seconds: float
        ) -> None: ...

        def test_finished(self, **_: Any) -> None: ...

    skipped = not_run_here(plan, flags=None, command="glimmer run suite.yaml")
    run = run_plan(
        plan,
        options=LocalOptions(node="host-a", report_dir=tmp_path, not_run_here=skipped),
        reporter=Interrupting(),
    )
    assert run.stopped
    assert [(r.state.name, r.state.phase) for r in run.results] == [
        ("inline-0-custom", Phase.ERROR),
        ("inline-1-custom", Phase.SKIPPED),
        ("inline-2-custom", Phase.ERROR),
    ]
    assert exit_status(run.results, stopped=run.stopped) == 3
