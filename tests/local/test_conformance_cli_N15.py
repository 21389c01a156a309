"""N15: ``glimmer conformance`` is the conformance suite's own clauses, from the CLI.

End to end through the command line: every runner of the catalog (Node, Pair and Group)
passes its own kind's card, nccl's holding its Node and its fabric cases; the
deliberately broken examples (runners/examples/broken_runner.py, a Node runner, and
broken_link_runner.py, a Pair runner) fail exactly the clauses they break and pass the
rest; every clause of the card is judged (units, n/a and the duration budget included),
none shown as passed unjudged; ``--image`` runs the runner under the container runtime,
a Node case with ``--network none`` and a Pair or Group side with ``--network host`` (a
stand-in here: no engine on this machine, so the argv it builds is what is tested, not a
real container).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from glimmer.cli import main
from glimmer.cli.conformance import case_env_names, image_command
from runners.catalog import RUNNERS
from runners.conformance import (
    Case,
    case_findings,
    cases_for,
    check,
    check_link,
    fabric_cases_for,
    link_cases_for,
    suites_of,
)
from runners.conformance.clauses import FAIL, NOT_CHECKED, PASS, UNCHECKED
from runners.conformance.fabric import case_findings as fabric_case_findings
from runners.conformance.links import case_findings as link_case_findings
from runners.fault_matrix import FABRIC_FAULT_MATRIX, LINK_FAULT_MATRIX
from tests.local.fake_runtime import FakeRuntime, fake_runtime_on_path

ROOT = Path(__file__).resolve().parents[2]
BROKEN = ROOT / "runners" / "examples" / "broken_runner.py"
BROKEN_KIND = "fingerprint-probe"
BROKEN_CLAUSES = {"provenance", "skip-marker", "crash-no-metrics"}
BROKEN_LINK = ROOT / "runners" / "examples" / "broken_link_runner.py"
BROKEN_LINK_KIND = "tcp-baseline"
BROKEN_LINK_CLAUSES = {"provenance", "crash-no-metrics", "fault:no-rendezvous", "fault:dead-peer"}


def _card(*args: str) -> tuple[int, dict[str, Any]]:
    result = CliRunner().invoke(main, ["conformance", *args, "-o", "json"])
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, json.loads(result.output)


def _statuses(card: dict[str, Any]) -> dict[str, str]:
    return {row["clause"]: row["status"] for row in card["clauses"]}


@pytest.mark.parametrize("kind", sorted(RUNNERS))
def test_N15_every_runner_of_the_catalog_passes_its_card_from_the_cli(
    kind: str, tmp_path: Path
) -> None:
    # disk-io measures a real directory, which the user names (a scratch dir here)
    extra = ["--env", f"BURNIN_DISK_IO_PATH={tmp_path}"] if kind == "disk-io" else []
    code, card = _card("--kind", kind, "--command", " ".join(RUNNERS[kind].command), *extra)
    failed = {r["clause"]: r["problems"] for r in card["clauses"] if r["status"] == FAIL}
    assert code == 0 and card["conforms"] is True, failed
    statuses = _statuses(card)
    # the clauses every kind reaches were judged and passed, not merely absent
    for clause in ("exit-codes", "provenance", "error-marker", "metric-grammar", "fault:crash"):
        assert statuses[clause] == PASS, (clause, statuses[clause])
    rows = {row["clause"]: row for row in card["clauses"]}
    # every case of every scope the kind runs in was judged, each counted in `finishes`
    # (told from the matrices, not from the engine's own suites_of)
    linked = kind in LINK_FAULT_MATRIX or kind in FABRIC_FAULT_MATRIX
    cases = len(cases_for(kind)) if RUNNERS[kind].scope == "Node" else 0
    cases += len(link_cases_for(kind)) if kind in LINK_FAULT_MATRIX else 0
    cases += len(fabric_cases_for(kind)) if kind in FABRIC_FAULT_MATRIX else 0
    assert rows["finishes"]["cases"] == cases
    if linked:
        # a peer that never came was judged on its own clause (no Node case has it)
        assert statuses["fault:no-rendezvous"] == PASS
        assert statuses["fault:dead-peer"] == PASS


def test_N15_broken_example_fails_exactly_its_three_clauses() -> None:
    code, card = _card("--kind", BROKEN_KIND, "--command", f"python {BROKEN}")
    assert code == 1
    assert card["conforms"] is False
    assert set(card["failed"]) == BROKEN_CLAUSES
    statuses = _statuses(card)
    # everything else it was judged on passed: the broken example is otherwise correct
    others = {c: s for c, s in statuses.items() if c not in BROKEN_CLAUSES}
    assert FAIL not in others.values()
    assert statuses["healthy-metrics"] == PASS
    assert statuses["declared-skip"] == PASS  # it does exit 2 there, without the marker
    assert statuses["error-marker"] == PASS
    for row in card["clauses"]:
        if row["status"] == FAIL:
            assert row["fix"] and row["problems"], row


def test_N15_broken_example_text_card_names_each_failed_clause_with_its_fix() -> None:
    result = CliRunner().invoke(
        main, ["conformance", "--kind", BROKEN_KIND, "--command", f"python {BROKEN}"]
    )
    assert result.exit_code == 1, result.output
    for clause in BROKEN_CLAUSES:
        assert f"FAILED {clause}:" in result.output
    assert result.output.count("  fix: ") == len(BROKEN_CLAUSES)
    assert "does not conform: 3 clause(s) failed" in result.output


def test_N15_broken_pair_example_fails_exactly_the_clauses_it_breaks() -> None:
    code, card = _card("--kind", BROKEN_LINK_KIND, "--command", f"python {BROKEN_LINK}")
    assert code == 1
    assert set(card["failed"]) == BROKEN_LINK_CLAUSES
    statuses = _statuses(card)
    others = {c: s for c, s in statuses.items() if c not in BROKEN_LINK_CLAUSES}
    assert FAIL not in others.values()
    # the link itself works: the healthy and slow pairs met and measured
    for clause in ("fault:healthy", "fault:slow-link", "healthy-metrics", "pass-line"):
        assert statuses[clause] == PASS, clause
    rows = {row["clause"]: row for row in card["clauses"]}
    # both sides of a measured Pair are judged: the server's missing provenance too
    assert {p.split(": ")[1] for p in rows["provenance"]["problems"]} == {"server", "client"}
    assert any("does not name" in p for p in rows["fault:dead-peer"]["problems"])


def test_N15_the_link_suite_and_the_cli_share_one_engine() -> None:
    """check_link (the per-runner tests' check) finds the broken Pair example's hidden
    peer through the same clause code the card uses."""
    spec = RUNNERS[BROKEN_LINK_KIND]
    (dead,) = [c for c in link_cases_for(BROKEN_LINK_KIND) if c.label == "dead-peer"]
    problems = check_link(spec, dead, command=("python", str(BROKEN_LINK)))
    assert any(p.startswith("fault:dead-peer: client: last line") for p in problems), problems


def test_N15_the_suite_and_the_cli_share_one_engine() -> None:
    """The suite's check() finds the broken example's crash fault through the same
    clause code the card uses: no second rule set."""
    spec = RUNNERS[BROKEN_KIND]
    crash = Case(
        kind=BROKEN_KIND, label="crash", env={"GLIMMER_SIM_GPU": "h200:crash"}, expected_exit=3
    )
    problems = check(spec, crash, command=("python", str(BROKEN)))
    assert any("metrics printed on a crash" in p for p in problems), problems


def test_N15_units_n_a_and_duration_are_judged_rows_of_every_card() -> None:
    """The clauses once shown as ``not checked`` are judged on real cases: the broken
    example keeps them (it breaks three others), so they pass on runs, not by default."""
    _code, card = _card("--kind", BROKEN_KIND, "--command", f"python {BROKEN}")
    rows = {row["clause"]: row for row in card["clauses"]}
    assert UNCHECKED == ()
    assert NOT_CHECKED not in {row["status"] for row in rows.values()}
    for clause in ("units", "n/a", "duration-deadline"):
        assert rows[clause]["status"] == PASS and rows[clause]["cases"] >= 1, rows[clause]


@pytest.mark.parametrize(
    ("args", "complaint"),
    [
        (["--kind", "no-such-kind", "--command", "true"], "unknown kind"),
        (["--kind", "clockprobe"], "exactly one of --command"),
        (["--kind", "clockprobe", "--command", "x", "--image", "y"], "exactly one of"),
        (["--kind", "clockprobe", "--command", "x", "--runtime", "docker"], "goes with --image"),
        (["--kind", "clockprobe", "--command", "   "], "--command is empty"),
        (["--kind", "clockprobe", "--command", "x", "--env", "NOEQUALS"], "write NAME=VALUE"),
    ],
)
def test_N15_usage_errors_exit_2_naming_the_fix(args: list[str], complaint: str) -> None:
    result = CliRunner().invoke(main, ["conformance", *args])
    assert result.exit_code == 2
    assert complaint in result.output


def test_N15_image_command_passes_every_case_variable_by_name() -> None:
    names = case_env_names("clockprobe")
    assert "GLIMMER_SIM_GPU" in names
    argv = image_command(runtime_binary="/usr/bin/podman", image="example/r:1", env_names=names)
    expected_env = [part for name in names for part in ("-e", name)]
    assert argv == [
        "/usr/bin/podman",
        "run",
        "--rm",
        "-i",
        "--network",
        "none",
        *expected_env,
        "example/r:1",
    ]


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeRuntime:
    return fake_runtime_on_path(tmp_path, monkeypatch)


def test_N15_image_runs_under_the_named_runtime(fake: FakeRuntime) -> None:
    fake.install("docker")
    # the stand-in prints the same thing for every case: a card that fails, read through
    # the runtime's client (no real container: there is no engine on this machine)
    fake.play(run_exit_without_container=0, client_message="provenance=sim\n")
    result = CliRunner().invoke(
        main,
        [
            "conformance",
            "--kind",
            "clockprobe",
            "--image",
            "example/r:1",
            "--runtime",
            "docker",
            "-o",
            "json",
            "--jobs",
            "2",
        ],
    )
    assert result.exit_code == 1, result.output
    runs = fake.calls("run")
    assert runs, "the runtime was never asked to run the image"
    for argv in runs:
        assert argv[-1] == "example/r:1"
        assert argv[argv.index("GLIMMER_SIM_GPU") - 1 :][:2] == ["-e", "GLIMMER_SIM_GPU"]
    assert "pass-line" in json.loads(result.output)["failed"]


def _image_card(kind: str) -> tuple[int, dict[str, Any]]:
    result = CliRunner().invoke(
        main,
        [
            "conformance",
            "--kind",
            kind,
            "--image",
            "example/r:1",
            "--runtime",
            "docker",
            "-o",
            "json",
        ],
    )
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, json.loads(result.output)


def _network(argv: list[str]) -> str:
    return argv[argv.index("--network") + 1]


def test_N15_an_image_of_a_pair_kind_runs_each_side_on_the_host_network(
    fake: FakeRuntime,
) -> None:
    fake.install("docker")
    fake.play(run_exit_without_container=0, client_message="provenance=sim\n")
    _code, card = _image_card("tcp-baseline")
    runs = fake.calls("run")
    sides = sum(len(case.sides) for case in link_cases_for("tcp-baseline"))
    assert len(runs) == sides
    assert {_network(argv) for argv in runs} == {"host"}
    for argv in runs:
        assert argv[-1] == "example/r:1"
        assert argv[argv.index("BURNIN_PEER_HOST") - 1 :][:2] == ["-e", "BURNIN_PEER_HOST"]
    assert _network(card["command"]) == "host"
    assert any("--network host" in note for note in card["notes"])


def test_N15_an_image_of_nccl_runs_node_cases_offline_and_fabric_sides_on_the_host(
    fake: FakeRuntime,
) -> None:
    fake.install("docker")
    fake.play(run_exit_without_container=0, client_message="provenance=sim\n")
    _code, card = _image_card("nccl")
    networks = [_network(argv) for argv in fake.calls("run")]
    assert networks.count("none") == len(cases_for("nccl"))
    assert networks.count("host") == sum(len(case.sides) for case in fabric_cases_for("nccl"))
    assert _network(card["command"]) == "none"
    assert any("--network host" in note for note in card["notes"])


def test_N15_image_with_an_absent_runtime_is_a_usage_error(fake: FakeRuntime) -> None:
    result = CliRunner().invoke(
        main, ["conformance", "--kind", "clockprobe", "--image", "x", "--runtime", "podman"]
    )
    assert result.exit_code == 2
    assert "podman is not on PATH" in result.output


def test_N15_broken_example_runs_as_a_plain_program() -> None:
    """The example is a program anyone can run, not a test double: healthy, it exits 0."""
    done = subprocess.run(
        [sys.executable, str(BROKEN)],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "GLIMMER_SIM_GPU": "h200"},
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "provenance=" not in done.stdout


def test_N15_a_runner_that_hangs_fails_finishes_and_is_killed() -> None:
    spec = RUNNERS[BROKEN_KIND]
    case = Case(kind=BROKEN_KIND, label="healthy", env={}, expected_exit=0)
    found, judged, _ = case_findings(
        spec, case, command=("python", "-c", "import time; time.sleep(30)"), timeout_s=1
    )
    assert [f.clause for f in found] == ["finishes"]
    assert "finishes" in judged


def test_N15_a_fabric_case_is_judged_as_a_whole_on_its_own_clause() -> None:
    """A Pair that ends Passed where the fabric matrix says Failed fails the case's own
    clause (F3/F6 over the sides), while every per-side rule it keeps passes."""
    spec = RUNNERS["ib-write-bw"]
    (degraded,) = [c for c in fabric_cases_for("ib-write-bw") if c.label == "degraded-link"]
    always_passes = (
        "python",
        "-c",
        "print('provenance=sim'); print('bandwidthGbps=400'); print('IB_WRITE_BW_PASS')",
    )
    found, judged, _ = fabric_case_findings(spec, degraded, command=always_passes)
    assert [(f.clause, f.detail) for f in found] == [
        ("fault:degraded-link", "the pair ends Passed, the matrix says Failed")
    ]
    assert {"fault:degraded-link", "provenance", "pass-line", "finishes"} <= judged


def test_N15_a_link_case_whose_side_hangs_fails_finishes_and_every_side_is_killed() -> None:
    spec = RUNNERS["tcp-baseline"]
    (healthy,) = [c for c in link_cases_for("tcp-baseline") if c.label == "healthy"]
    found, judged, stdouts = link_case_findings(
        spec, healthy, command=("python", "-c", "import time; time.sleep(30)"), timeout_s=1
    )
    assert [f.clause for f in found] == ["finishes"]
    assert judged == {"finishes", "fault:healthy"} and stdouts == {}


@pytest.mark.parametrize("kind", sorted(k for k in RUNNERS if suites_of(RUNNERS[k]) != ("node",)))
def test_N15_no_two_link_or_fabric_cases_of_a_card_share_a_loopback_address(kind: str) -> None:
    """The runners listen on fixed ports of their own address: cases of one card run at
    once only because no two of them share an address (a dead-peer client would else
    reach another case's server)."""
    cases: list[Any] = []
    if "link" in suites_of(RUNNERS[kind]):
        cases += link_cases_for(kind)
    if "fabric" in suites_of(RUNNERS[kind]):
        cases += fabric_cases_for(kind)
    owner: dict[str, str] = {}
    for case in cases:
        for side in case.sides:
            for name in ("BURNIN_LISTEN_ADDRESS", "BURNIN_PEER_HOST", "BURNIN_ROOT_HOST"):
                address = side.env.get(name)
                if address is not None:
                    assert owner.setdefault(address, case.label) == case.label, (address, case)


def test_N15_a_link_side_is_judged_on_its_own_exit_and_its_metrics() -> None:
    """A "runner" that passes whatever it is asked: the dead-peer client's exit 0 fails
    the case's own clause, and a healthy side that prints too little fails
    healthy-metrics, each side named."""
    spec = RUNNERS["tcp-baseline"]
    by_label = {c.label: c for c in link_cases_for("tcp-baseline")}
    always_passes = ("python", "-c", "print('provenance=sim'); print('TCP_BASELINE_PASS')")
    found, _, _ = link_case_findings(spec, by_label["dead-peer"], command=always_passes)
    assert ("fault:dead-peer", "client: exit 0, expected 3") in {
        (f.clause, f.detail) for f in found
    }
    found, judged, _ = link_case_findings(spec, by_label["healthy"], command=always_passes)
    assert "healthy-metrics" in judged
    assert sorted(f.detail.split(":")[0] for f in found if f.clause == "healthy-metrics") == [
        "client",
        "server",
    ]
