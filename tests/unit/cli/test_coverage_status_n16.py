"""N16: the coverage a profile's status says, derived from a ``Coverage`` (no cluster).

A void or partly judged coverage never carries a count of caught faults, every write
names the generation it was computed for, and the merge patch nulls what the new
coverage lacks. The cluster side (read, write, prune, refusals) is
tests/integration/coverage/test_coverage_status_cluster.py.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from glimmer.api import CoverageState, from_json, to_json
from glimmer.api.burninprofile import ProfileCoverage
from glimmer.cli.coverage_status import (
    COVERAGE_FIELDS,
    coverage_state,
    coverage_status,
    open_profile_ref,
    parse_profile_ref,
    status_patch,
)
from glimmer.local.coverage import HEALTHY, Case, CaseOutcome, Coverage, PlannedTest, TestCell

AT = datetime(2026, 12, 3, 11, 0, 0, tzinfo=UTC)
TESTS = (PlannedTest(name="gemm", kind="gemm-sweep", required=True),)


def _outcome(sim: str, fault: str, phase: str | None) -> CaseOutcome:
    cell_phase = {"Passed": "Passed", "Failed": "Failed", "Error": "Error"}.get(phase or "")
    cells = () if phase is None else (TestCell("gemm", "gemm-sweep", cell_phase, True),)
    return CaseOutcome(
        case=Case(sim, fault),
        phase=phase,
        exit_code=0 if phase == "Passed" else 1,
        cells=cells,
        problem="" if phase else "glimmer run exited 3 and wrote no readable run.json",
    )


def _coverage(control: dict[str, str | None], faults: dict[str, str | None]) -> Coverage:
    sims = tuple(dict.fromkeys(key.split(":")[0] for key in (*control, *faults)))
    return Coverage(
        profile="p",
        sims=sims,
        control=tuple(_outcome(sim, HEALTHY, phase) for sim, phase in control.items()),
        faults=tuple(
            _outcome(key.split(":")[0], key.split(":", 1)[1], phase)
            for key, phase in faults.items()
        ),
        tests=TESTS,
        seconds=1.0,
        jobs=1,
    )


MEASURED = _coverage(
    {"h200x2": "Passed"},
    {"h200x2:low-clock": "Failed", "h200x2:sdc": "Passed", "h200x2:crash": "Error"},
)


def test_N16_a_measured_coverage_counts_its_catches_and_names_its_generation() -> None:
    status = coverage_status(MEASURED, generation=7, computed_at=AT, version="9.9")
    assert status.state == CoverageState.MEASURED
    assert (status.caught, status.modelled, status.missed) == (2, 3, ["sdc"])
    assert status.summary == "catches 2 of 3 modelled faults (generation 7)"
    assert status.profile_generation == 7
    assert status.unjudged is None
    assert status.sims == ["h200x2"]
    assert status.glimmer_version == "9.9"
    wire = to_json(status)
    assert wire["computedAt"] == "2026-12-03T11:00:00.000Z"
    assert from_json(wire, ProfileCoverage) == status


def test_N16_a_coverage_whose_healthy_control_failed_is_void_and_claims_no_catch() -> None:
    void = _coverage({"h200x2": "Failed"}, {"h200x2:low-clock": "Failed", "h200x2:sdc": "Failed"})
    assert coverage_state(void) is CoverageState.VOID
    status = coverage_status(void, generation=3, computed_at=AT)
    assert status.state == "Void"
    assert status.caught is None and status.missed is None
    assert status.summary == "void: the healthy control did not Pass (generation 3)"
    assert status.unjudged == ["healthy"]
    assert status.modelled == 2
    assert "caught" not in to_json(status) and "missed" not in to_json(status)


def test_N16_a_coverage_with_a_case_no_run_judged_claims_no_catch() -> None:
    partly = _coverage({"h200x2": "Passed"}, {"h200x2:low-clock": "Failed", "h200x2:sdc": None})
    assert coverage_state(partly) is CoverageState.NOT_JUDGED
    status = coverage_status(partly, generation=4, computed_at=AT)
    assert status.state == "NotJudged"
    assert status.caught is None and status.missed is None
    assert status.unjudged == ["sdc"]
    assert status.summary == "not judged: 1 of 3 runs wrote no result (generation 4)"


def test_N16_an_unjudged_control_is_not_judged_not_void_and_never_measured() -> None:
    unjudged = _coverage({"h200x2": None}, {"h200x2:low-clock": "Failed"})
    assert coverage_state(unjudged) is CoverageState.NOT_JUDGED
    assert coverage_status(unjudged, generation=1, computed_at=AT).unjudged == ["healthy"]
    # One part's control failing voids the whole coverage, whatever the other's did.
    mixed = _coverage(
        {"h200x2": "Passed", "mi300xx2": "Failed"},
        {"h200x2:low-clock": "Failed", "mi300xx2:low-clock": "Failed"},
    )
    assert coverage_state(mixed) is CoverageState.VOID
    assert coverage_status(mixed, generation=1, computed_at=AT).unjudged == ["mi300xx2:healthy"]
    # No control at all measures nothing.
    bare = Coverage(
        profile="p",
        sims=("h200x2",),
        control=(),
        faults=(_outcome("h200x2", "sdc", "Failed"),),
        tests=TESTS,
        seconds=0.0,
        jobs=1,
    )
    assert coverage_state(bare) is CoverageState.NOT_JUDGED


def test_N16_faults_of_several_parts_are_named_with_their_part() -> None:
    two = _coverage(
        {"h200x2": "Passed", "mi300xx2": "Passed"},
        {"h200x2:sdc": "Passed", "mi300xx2:sdc": "Failed"},
    )
    status = coverage_status(two, generation=2, computed_at=AT)
    assert status.missed == ["h200x2:sdc"]
    assert status.sims == ["h200x2", "mi300xx2"]
    assert status.summary == "catches 1 of 2 modelled faults (generation 2)"


def test_N16_the_patch_writes_every_field_null_where_the_coverage_has_none() -> None:
    void = coverage_status(
        _coverage({"h200x2": "Failed"}, {"h200x2:sdc": "Failed"}), generation=1, computed_at=AT
    )
    body = status_patch(void)["status"]["coverage"]
    assert set(body) == set(COVERAGE_FIELDS)
    assert body["caught"] is None and body["missed"] is None
    assert body["state"] == "Void"
    assert {"state", "summary", "caught", "missed", "profileGeneration"} <= set(COVERAGE_FIELDS)


@pytest.mark.parametrize(
    ("given", "expected"),
    [("team-a/acceptance", ("team-a", "acceptance")), ("acceptance", ("ctx-ns", "acceptance"))],
)
def test_N16_profile_ref_is_namespace_slash_name_or_a_name_in_the_context_namespace(
    given: str, expected: tuple[str, str], tmp_path: Path
) -> None:
    kubeconfig = tmp_path / "config"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        "contexts: [{name: c, context: {cluster: k, user: u, namespace: ctx-ns}}]\n"
        "clusters: [{name: k, cluster: {server: 'https://127.0.0.1:1'}}]\n"
        "users: [{name: u, user: {}}]\n",
        encoding="utf-8",
    )
    assert parse_profile_ref(given, kubeconfig=str(kubeconfig)) == expected


NO_CLUSTER = "/nonexistent/kubeconfig"
REFUSED: list[tuple[Callable[[], object], str]] = [
    (
        lambda: open_profile_ref(None, write_status=True, kubeconfig=NO_CLUSTER),
        "give --profile-ref",
    ),
    (
        lambda: open_profile_ref(
            "ns/p", write_status=True, kubeconfig=NO_CLUSTER, profile_file=Path("x.yaml")
        ),
        "no PROFILE_FILE",
    ),
    (
        lambda: open_profile_ref(
            "ns/p", write_status=False, kubeconfig=NO_CLUSTER, test_files=(Path("t.yaml"),)
        ),
        "--tests",
    ),
    (
        lambda: open_profile_ref(
            "ns/p", write_status=True, kubeconfig=NO_CLUSTER, profile_name="other"
        ),
        "another profile",
    ),
    (
        lambda: open_profile_ref("ns/a/b", write_status=True, kubeconfig=NO_CLUSTER),
        "expected NAMESPACE/NAME",
    ),
    (
        lambda: open_profile_ref("/p", write_status=True, kubeconfig=NO_CLUSTER),
        "expected NAMESPACE/NAME",
    ),
]


@pytest.mark.parametrize(("call", "words"), REFUSED)
def test_N16_the_options_that_cannot_go_together_are_usage_errors_before_any_read(
    call: Callable[[], object], words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        call()
    assert exited.value.code == 2
    assert words in capsys.readouterr().err


def test_N16_without_profile_ref_nothing_is_read() -> None:
    assert open_profile_ref(None, write_status=False, kubeconfig="/nonexistent") is None
