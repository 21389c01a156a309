"""N2 and the two-dispatcher rule for ``glimmer plan``: the environment it shows is the
one the runner gets, and a segmented soak on a bare host is one window of its whole
duration, so the plan shows that, never the segment length."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from glimmer.cli.plan import plan
from tests.local.test_glimmer_run import custom_profile, document, glimmer

SOAK = {"durationSeconds": 900, "soak": {"segmentSeconds": 300}}


def _plan_env(profile: Path, *extra: str) -> list[dict[str, Any]]:
    result = CliRunner().invoke(
        plan, [str(profile), "--node", "host-1", "-o", "json", *extra], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    [test] = json.loads(result.stdout)["tests"]
    env: list[dict[str, Any]] = test["env"]
    return env


def test_N2_plan_shows_a_segmented_soak_as_the_one_window_a_bare_host_runs(
    tmp_path: Path,
) -> None:
    profile = custom_profile(tmp_path, "echo OK", **SOAK)
    env = {e["name"]: e["value"] for e in _plan_env(profile)}
    assert env["BURNIN_DURATION_SECONDS"] == "900"  # in-cluster: 300 per segment
    text = CliRunner().invoke(plan, [str(profile), "--node", "host-1"], catch_exceptions=False)
    assert "env: BURNIN_DURATION_SECONDS=900" in text.output
    assert "BURNIN_DURATION_SECONDS=300" not in text.output


def test_N2_the_env_glimmer_plan_shows_is_the_env_the_runner_gets(tmp_path: Path) -> None:
    seen = tmp_path / "seen.env"
    script = f"env | grep -E '^(BURNIN_|GLIMMER_SIM_GPU=|AUTHOR|NODE=)' | sort > {seen}; echo OK"
    runner_env = [
        {"name": "AUTHOR", "value": "x"},
        {"name": "BURNIN_ATTEMPT", "value": "9"},  # reserved: ignored on a bare host
        {"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
        {"name": "AUTHOR_UNSET", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}},
    ]
    profile = custom_profile(tmp_path, script, **SOAK)
    body = json.loads(profile.read_text().split("inline: ", 1)[1])
    body["runner"]["env"] = runner_env
    profile.write_text(
        "kind: BurnInProfile\nmetadata: {name: p}\nspec:\n  tests:\n  - inline: "
        + json.dumps(body)
        + "\n"
    )
    shown = _plan_env(profile, "--sim", "h200")
    proc = glimmer(
        "run",
        str(profile),
        "--node",
        "host-1",
        "--sim",
        "h200",
        "--report-dir",
        str(tmp_path / "r"),
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert document(tmp_path / "r")["results"][0]["phase"] == "Passed"
    got = dict(line.split("=", 1) for line in seen.read_text().splitlines())
    assert {e["name"]: e["value"] for e in shown if e["value"] is not None} == got
    assert got["BURNIN_DURATION_SECONDS"] == "900" and got["BURNIN_ATTEMPT"] == "1"
    unset = [e["name"] for e in shown if e["value"] is None]
    assert unset == ["AUTHOR_UNSET"]  # shown as unset, and the runner indeed lacks it
