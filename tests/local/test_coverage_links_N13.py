"""``glimmer coverage`` of Pair and Group tests (N13, N14): every link and fabric fault run
as a simulated pair (a ``--role server`` and a ``--role client`` process over 127.0.0.1)
or group (every ``--rank``, then ``glimmer merge``) on this host, the row read back from
the client's (the merge's) run.json."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from glimmer.local.coverage import (
    DEAD_PEER,
    GROUP,
    HEALTHY,
    LINK_CONNECT_S,
    NODE,
    PAIR,
    SCOPES,
    Case,
    CaseOutcome,
    Coverage,
    PlannedTest,
    PortPool,
    TestCell,
    broken_sides,
    cases_for,
    derived_documents,
    link_faults,
)
from glimmer.local.manifests import load_documents
from glimmer.report.coverage import coverage_html, coverage_json
from runners.fault_matrix import (
    FABRIC_FAULT_MATRIX,
    FABRIC_FAULT_SIDE,
    FABRIC_FAULTS,
    FAULT_STORIES,
    LINK_FAULTS,
    NOT_READ,
    PASSED,
)

#: Two Pair tests (ib-write-bw, which does not watch the link for its window, and
#: fabric-soak, which does) and one Group test (nccl).
LINKS = """\
    apiVersion: burnin.glimmer.ai/v1alpha1
    kind: BurnInProfile
    metadata: {name: links}
    spec:
      tests:
      - inline: {kind: ib-write-bw, scope: Pair, durationSeconds: 60}
      - testRef: soak
      - inline: {kind: nccl, scope: Group, durationSeconds: 60}
    ---
    apiVersion: burnin.glimmer.ai/v1alpha1
    kind: BurnInTest
    metadata: {name: soak}
    spec: {kind: fabric-soak, scope: Pair, durationSeconds: 60}
    """
#: The planned name of each test -> its kind (the matrix's row for it).
LINK_TESTS = {"inline-0-ib-write-bw": "ib-write-bw", "soak": "fabric-soak"}
GROUP_TESTS = {"inline-2-nccl": "nccl"}


def glimmer(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from glimmer.cli import main; main()", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def _expected(kind: str, fault: str) -> str:
    """The fabric matrix's phase of one test under a fault, as a run records it: a "not
    read" cell is a test the fault does not reach, so it Passes."""
    cell = FABRIC_FAULT_MATRIX[kind][fault]
    return PASSED if cell == NOT_READ else cell


def test_N13_pair_and_group_tests_are_covered_per_link_fault_as_the_fabric_matrix_says(
    tmp_path: Path,
) -> None:
    """One run of a profile with two Pair tests and a Group test: every fabric fault's
    row is the phase the fabric matrix gives each runner (degraded-link caught by
    ib-write-bw, flapping-link missed by it but caught by fabric-soak, memlock-8mib
    missed by both perftest runners but caught by nccl's Group), each on the side
    ``FABRIC_FAULT_SIDE`` names; ``--require`` of a link fault the Pair misses exits 1."""
    path = tmp_path / "links.yaml"
    path.write_text(textwrap.dedent(LINKS))
    work = tmp_path / "w"
    proc = glimmer(
        "coverage", str(path), "-o", "json", "--jobs", "4", "--require", "memlock-8mib",
        "--work-dir", str(work), cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "required fault(s) missed: memlock-8mib (Pair)\n" in proc.stderr
    assert "not implemented" not in proc.stderr
    doc: dict[str, Any] = json.loads(proc.stdout)
    assert doc["controlPassed"] is True
    assert [(s["scope"], s["tests"]) for s in doc["sections"]] == [
        (PAIR, list(LINK_TESTS)),
        (GROUP, list(GROUP_TESTS)),
    ]
    rows = {(f["scope"], f["fault"]): f for f in doc["faults"]}
    assert {f for s, f in rows if s == PAIR} == set(link_faults("h200x2", PAIR))
    assert {f for s, f in rows if s == GROUP} == set(link_faults("h200x2", GROUP))
    for scope, tests in ((PAIR, LINK_TESTS), (GROUP, GROUP_TESTS)):
        for fault in FABRIC_FAULTS:
            if fault == HEALTHY or (scope, fault) not in rows:
                continue
            row = rows[(scope, fault)]
            phases = {t["test"]: t["phase"] for t in row["tests"]}
            want = {name: _expected(kind, fault) for name, kind in tests.items()}
            assert phases == want, (scope, fault, row)
            assert row["caught"] is (set(want.values()) != {PASSED}), row
    assert rows[(PAIR, "degraded-link")]["caught"] is True
    flapping = rows[(PAIR, "flapping-link")]
    assert [c["test"] for c in flapping["caughtBy"]] == ["soak"]
    assert rows[(PAIR, "memlock-8mib")]["caught"] is False
    assert rows[(GROUP, "memlock-8mib")]["caught"] is True
    assert rows[(PAIR, "memlock-8mib")]["runAs"] == "Pair h200x2:memlock-8mib on the client"
    assert rows[(PAIR, DEAD_PEER)]["runAs"] == "Pair h200x2, the server never started"
    assert (GROUP, DEAD_PEER) not in rows  # glimmer merge refuses a partial turnout
    # The one brain: the row is the Pair client's own run.json, the fault on the server.
    client = json.loads((work / "pair/h200x2/degraded-link/client/run.json").read_text())
    assert client["phase"] == rows[(PAIR, "degraded-link")]["runPhase"] == "Failed"
    server = work / "pair/h200x2/degraded-link"
    assert "SIMULATED GPU h200x2:degraded-link" in (server / "side-0.out").read_text()
    summary = doc["summary"]
    assert summary["faults"] == len(rows)
    assert summary["caught"] == sum(1 for r in rows.values() if r["caught"])


def test_N13_a_link_case_runs_its_scope_only_on_ports_of_its_own(tmp_path: Path) -> None:
    """A Pair case's profile holds only the Pair tests, an inline one under the name the
    whole profile plans it by; each case's runners listen on ports no other case has,
    and wait at most LINK_CONNECT_S for a peer on this host."""
    path = tmp_path / "links.yaml"
    path.write_text(textwrap.dedent(LINKS))
    documents = load_documents(path)
    ports = PortPool()

    def env_of(case: Case) -> dict[str, dict[str, str]]:
        bodies = derived_documents(documents, case, ports=ports)
        profile = next(b for b in bodies if b["kind"] == "BurnInProfile")
        refs = [e["testRef"] for e in profile["spec"]["tests"]]
        tests = {b["metadata"]["name"]: b["spec"] for b in bodies if b["kind"] == "BurnInTest"}
        return {r: {e["name"]: e["value"] for e in tests[r]["runner"]["env"]} for r in refs}

    one = env_of(Case("h200x2", "degraded-link", PAIR))
    other = env_of(Case("h200x2", HEALTHY, PAIR))
    assert list(one) == list(LINK_TESTS)
    assert one["soak"]["BURNIN_FABRIC_SOAK_CONNECT_SECONDS"] == str(LINK_CONNECT_S)
    taken = [
        v for case in (one, other) for env in case.values() for k, v in env.items() if "PORT" in k
    ]
    assert len(taken) == 8 and len(set(taken)) == 8
    group = env_of(Case("h200x2", HEALTHY, GROUP))
    assert list(group) == list(GROUP_TESTS)
    assert group["inline-2-nccl"]["BURNIN_NCCL_RENDEZVOUS_SECONDS"] == str(LINK_CONNECT_S)
    node = derived_documents(documents, Case("h200x2", HEALTHY, NODE))
    assert next(b for b in node if b["kind"] == "BurnInProfile")["spec"]["tests"] == []


def test_N13_each_link_fault_is_on_the_side_the_fabric_matrix_names() -> None:
    for fault, side in FABRIC_FAULT_SIDE.items():
        case = Case("h200x2", fault, PAIR)
        faulty = 0 if side == "server" else 1
        assert case.side_sim(faulty) == f"h200x2:{fault}"
        assert case.side_sim(1 - faulty) == "h200x2"
    for fault in ("slow-link", "corrupt-data"):  # the link runners': on the server
        assert Case("h200x2", fault, PAIR).side_sim(0) == f"h200x2:{fault}"
    dead = Case("h200x2", DEAD_PEER, PAIR)
    assert dead.side_sim(0) is None and dead.side_sim(1) == "h200x2"
    # A Group: rank 0 carries the fault; the last rank is the one that never joins.
    assert Case("h200x2", "memlock-8mib", GROUP).side_sim(0) == "h200x2:memlock-8mib"
    late = Case("h200x2", "no-rendezvous", GROUP)
    assert late.side_sim(late.sides - 1) == "h200x2:no-rendezvous" and late.side_sim(0)
    assert set(link_faults("h200x2", PAIR)) == (set(FABRIC_FAULTS) | set(LINK_FAULTS)) - {HEALTHY}
    assert set(link_faults("h200x2", GROUP)) == set(link_faults("h200x2", PAIR)) - {DEAD_PEER}


def test_N13_every_covered_link_fault_tells_what_it_models_and_what_catches_it() -> None:
    covered = {c.fault for c in cases_for(["h200x2"], SCOPES)}
    assert covered - set(FAULT_STORIES) == set()


def _cell(name: str, phase: str) -> TestCell:
    return TestCell(name=name, kind="ib-write-bw", phase=phase, required=True)


def _void_pair() -> Coverage:
    def outcome(fault: str, scope: str, phase: str, cell: TestCell) -> CaseOutcome:
        return CaseOutcome(
            case=Case("h200x2", fault, scope), phase=phase, exit_code=0, cells=(cell,)
        )

    clock = TestCell(name="clockprobe", kind="clockprobe", phase="Passed", required=True)
    low = TestCell(name="clockprobe", kind="clockprobe", phase="Failed", required=True)
    return Coverage(
        profile="p",
        sims=("h200x2",),
        control=(
            outcome(HEALTHY, NODE, "Passed", clock),
            outcome(HEALTHY, PAIR, "Failed", _cell("bw", "Failed")),
        ),
        faults=(
            outcome("low-clock", NODE, "Failed", low),
            outcome("sdc", NODE, "Passed", clock),
            outcome("degraded-link", PAIR, "Failed", _cell("bw", "Failed")),
        ),
        tests=(
            PlannedTest(name="clockprobe", kind="clockprobe", required=True),
            PlannedTest(name="bw", kind="ib-write-bw", required=True, scope=PAIR),
        ),
        seconds=1.0,
        jobs=2,
    )


def test_N13_a_link_control_that_fails_voids_the_link_part_only() -> None:
    """A Pair test that fails a healthy pair "catches" every link fault: its rows count
    for nothing and show nowhere, while the Node part (its control Passed) stands."""
    coverage = _void_pair()
    assert coverage.control_passed is False
    assert coverage.summary_line() == "catches 1 of 2 modelled faults; misses: sdc"
    doc = coverage_json(coverage)
    assert [(s["scope"], s["controlPassed"]) for s in doc["sections"]] == [
        (NODE, True),
        (PAIR, False),
    ]
    assert doc["summary"]["faults"] == 2
    page = coverage_html(coverage)
    assert 'data-scope="Node"' in page and 'data-scope="Pair"' not in page
    assert "degraded-link" not in page


def test_N14_require_names_the_link_faults_of_the_profiles_scopes(tmp_path: Path) -> None:
    """A Node-only profile has no link cases: ``--require degraded-link`` is a usage
    error listing the faults it does cover."""
    proc = glimmer("coverage", "--require", "degraded-link", cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "--require degraded-link: not a modelled fault of h200x2" in proc.stderr
    assert "degraded-link" not in proc.stderr.split("known: ")[1]


def test_N13_a_recording_side_that_did_not_write_its_record_whole_leaves_the_case_unjudged() -> (
    None
):
    """A Pair server (or a Group rank) that exited other than 2 ("nothing judged", its
    record whole) did not run the link the fault models: the client's Error would be the
    harness's, not the fault's, so the case is not judged rather than "caught"."""
    pair = Case("h200x2", "degraded-link", PAIR)
    assert broken_sides(pair, {0: (2, ""), 1: (1, "")}) == []
    (problem,) = broken_sides(pair, {0: (3, "glimmer: error: boom"), 1: (3, "")})
    assert problem.startswith("the server's glimmer run exited 3, not 2")
    assert problem.endswith("glimmer: error: boom")
    group = Case("h200x2", HEALTHY, GROUP)
    assert broken_sides(group, {0: (2, ""), 1: (2, "")}) == []
    assert [p.split("'")[0] for p in broken_sides(group, {0: (2, ""), 1: (-1, "")})] == ["rank 1"]
