"""N9: under ``--sim`` the runners that load the real host (memory-stress, disk-io) get a
bounded real window, shown in the plan, noted on the terminal and recorded in run.json;
``--host-window full`` runs the profile's window; without ``--sim`` the flag is refused
(a shortened window is not the test the profile asked for), and nothing certifies."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result

from glimmer.cli.plan import plan
from glimmer.cli.run import run
from glimmer.local.launch import DEFAULT_SIM_HOST_WINDOW_S, host_window, runner_variables
from glimmer.local.model import LocalOptions
from glimmer.plan import PinnedPlan, PlannedTest, build_plan

STRESS = {
    "kind": "memory-stress",
    "durationSeconds": 1800,
    "thresholds": [{"metric": "memoryErrors", "comparison": "Equal", "value": "0"}],
}
BURN = {"kind": "gpu-burn", "durationSeconds": 1800}


def suite(path: Path, *tests: dict[str, Any]) -> Path:
    profile = {
        "apiVersion": "burnin.glimmer.ai/v1alpha1",
        "kind": "BurnInProfile",
        "metadata": {"name": "host-window"},
        "spec": {"tests": [{"inline": t} for t in tests]},
    }
    path.write_text(yaml.safe_dump(profile))
    return path


def invoke(command: Any, *args: str) -> Result:
    return CliRunner().invoke(command, list(args), catch_exceptions=False)


def planned(test: dict[str, Any]) -> PlannedTest:
    outcome = build_plan(profile={"tests": [{"inline": test}]}, tests={}, targets=["host-1"])
    assert isinstance(outcome, PinnedPlan), outcome
    (only,) = outcome.tests
    return only


def env_of(view: dict[str, Any]) -> dict[str, Any]:
    return {item["name"]: item["value"] for item in view["env"]}


def test_N9_under_sim_a_host_real_window_is_bounded_by_default_and_the_plan_says_so(
    tmp_path: Path,
) -> None:
    profile = suite(tmp_path / "p.yaml", STRESS, BURN)
    shown = invoke(plan, str(profile), "--sim", "h200")
    assert shown.exit_code == 0, shown.output
    assert f"window: real host window bounded to {DEFAULT_SIM_HOST_WINDOW_S} s of 1800 s" in (
        shown.output
    )
    as_json = json.loads(invoke(plan, str(profile), "--sim", "h200", "-o", "json").output)
    stress, burn = as_json["tests"]
    assert stress["hostWindow"]["givenSeconds"] == DEFAULT_SIM_HOST_WINDOW_S
    assert env_of(stress)["BURNIN_DURATION_SECONDS"] == str(DEFAULT_SIM_HOST_WINDOW_S)
    # The simulated GPU's runners run on the simulator's clock: never bounded.
    assert burn["hostWindow"] is None
    assert env_of(burn)["BURNIN_DURATION_SECONDS"] == "1800"


def test_N9_full_runs_the_profiles_window(tmp_path: Path) -> None:
    profile = suite(tmp_path / "p.yaml", STRESS)
    as_json = json.loads(
        invoke(plan, str(profile), "--sim", "h200", "--host-window", "full", "-o", "json").output
    )
    (stress,) = as_json["tests"]
    assert stress["hostWindow"] is None
    assert env_of(stress)["BURNIN_DURATION_SECONDS"] == "1800"


@pytest.mark.parametrize("value", ["30", "full"])
def test_N9_without_sim_the_flag_is_refused_never_a_shortened_real_run(
    tmp_path: Path, value: str
) -> None:
    profile = suite(tmp_path / "p.yaml", STRESS)
    result = invoke(run, str(profile), "--host-window", value, "--report-dir", str(tmp_path / "r"))
    assert result.exit_code == 2
    assert "--host-window bounds real host windows only under --sim" in result.output
    assert not (tmp_path / "r" / "run.json").exists()


@pytest.mark.parametrize("value", ["0", "-5", "soon"])
def test_N9_a_bad_bound_is_a_usage_error(tmp_path: Path, value: str) -> None:
    profile = suite(tmp_path / "p.yaml", STRESS)
    result = invoke(plan, str(profile), "--sim", "h200", "--host-window", value)
    assert result.exit_code == 2
    assert "a whole number of seconds" in result.output


def test_N9_the_runners_own_seconds_knob_is_bounded_too() -> None:
    """BURNIN_STRESS_SECONDS overrides the window memory-stress is given: a bound that
    left it alone would load the host for the profile's whole half hour."""
    knobbed = {**STRESS, "runner": {"env": [{"name": "BURNIN_STRESS_SECONDS", "value": "1700"}]}}
    test = planned(knobbed)
    options = LocalOptions(node="host-1", sim="h200", host_window=30)
    env = runner_variables(test, attempt=1, options=options)
    assert env["BURNIN_DURATION_SECONDS"] == "30"
    assert env["BURNIN_STRESS_SECONDS"] == "30"
    assert host_window(test, options=LocalOptions(node="host-1", host_window=30)) is None


def test_N9_a_bounded_run_records_the_window_and_certifies_nothing(tmp_path: Path) -> None:
    profile = suite(tmp_path / "p.yaml", STRESS)
    out = tmp_path / "r"
    result = invoke(
        run, str(profile), "--sim", "h200", "--host-window", "21", "--report-dir", str(out)
    )
    assert result.exit_code == 0, result.output
    assert "real host window bounded to 21 s of 1800 s" in result.output
    document = json.loads((out / "run.json").read_text())
    assert document["hostWindows"] == [
        {"test": "inline-0-memory-stress", "givenSeconds": 21, "askedSeconds": 1800}
    ]
    assert document["certifiesSilicon"] is False
