"""I3: ``glimmer run`` lints before it runs, ``glimmer plan`` shows the plan
without a GPU, ``valueFrom`` resolves as N2 says, and ``-o json`` prints the run document."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

import glimmer.cli.run as run_module
from glimmer.cli.plan import plan
from glimmer.cli.run import run


def _suite(path: Path, tests: list[dict[str, Any]]) -> Path:
    path.write_text(
        yaml.safe_dump(
            {"kind": "BurnInProfile", "metadata": {"name": "p"}, "spec": {"tests": tests}}
        )
    )
    return path


def _custom(script: str, **extra: Any) -> dict[str, Any]:
    runner: dict[str, Any] = {"command": ["sh", "-c", script]}
    runner.update(extra.pop("runner", {}))
    return {"inline": {"kind": "custom", "runner": runner, **extra}}


def _invoke(command: Any, *args: str) -> Any:
    return CliRunner().invoke(command, list(args), catch_exceptions=False)


def test_C5_run_prints_unsound_findings_and_still_runs(tmp_path: Path) -> None:
    gate = {"metric": "bandwidthGBs", "comparison": "Equal", "value": "5"}
    suite = _suite(tmp_path / "p.yaml", [_custom("echo bandwidthGBs=5", thresholds=[gate])])
    result = _invoke(run, str(suite), "--report-dir", str(tmp_path / "r"))
    assert result.exit_code == 0, result.output
    assert "warning: test 'inline-0-custom': bandwidthGBs: Unsound: Equal on bandwidthGBs" in (
        result.output
    )


def test_C5_a_malformed_gate_is_refused_before_anything_runs(tmp_path: Path) -> None:
    gate = {"metric": "x", "comparison": "Equal", "value": "NaN"}
    suite = _suite(tmp_path / "p.yaml", [_custom(f"touch {tmp_path}/ran", thresholds=[gate])])
    result = _invoke(run, str(suite), "--report-dir", str(tmp_path / "r"))
    assert result.exit_code == 3 and "refused" in result.output
    assert not (tmp_path / "r").exists() and not (tmp_path / "ran").exists()


def test_N1_plan_shows_image_or_unresolved_gates_axes_and_env_without_a_gpu(
    tmp_path: Path,
) -> None:
    gate = {"metric": "throughputTflops", "comparison": "GreaterThanOrEqual", "value": "1"}
    smoke = {
        "inline": {"kind": "compute-smoke", "thresholds": [gate]},
        "variants": [{"name": "big", "axes": {"size": "big"}}],
    }
    suite = _suite(tmp_path / "p.yaml", [smoke, _custom(f"touch {tmp_path}/ran")])
    result = _invoke(plan, str(suite), "--node", "host-1")
    assert result.exit_code == 0, result.output  # no GPU here, and none needed
    out = result.output
    assert "1. inline-0-compute-smoke-big (compute-smoke, Node) on host-1" in out
    assert "image: ghcr.io/glimmer-ai/glimmer-runner-compute-smoke:" in out
    assert "gate: throughputTflops GreaterThanOrEqual 1" in out
    assert "axis: size=big" in out and "env: BURNIN_VARIANT_SIZE=big" in out
    assert "image: UNRESOLVED: " in out  # custom has no default image
    assert f"command: sh -c 'touch {tmp_path}/ran'" in out
    assert not (tmp_path / "ran").exists()
    as_json = _invoke(plan, str(suite), "--node", "host-1", "-o", "json")
    tests = json.loads(as_json.stdout)["tests"]
    assert [t["image"] == "UNRESOLVED" for t in tests] == [False, True]


def test_N1_plan_of_a_pair_side_shows_the_rendezvous_env(tmp_path: Path) -> None:
    pair = {"inline": {"kind": "custom", "scope": "Pair", "runner": {"command": ["true"]}}}
    suite = _suite(tmp_path / "p.yaml", [pair])
    result = _invoke(
        plan, str(suite), "--node", "b", "--role", "client", "--peer", "10.0.0.1",
        "--peer-node", "a",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "on a, b" in result.output
    assert "env: BURNIN_ROLE=client" in result.output
    assert "env: BURNIN_PEER_HOST=10.0.0.1" in result.output


ENV = [
    {"name": "HOST_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.hostIP"}}},
    {"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
]
SCRIPT = 'echo "hostip=$HOST_IP"; echo "pod=${POD-unset}"'


def test_N2_status_hostIP_is_the_hosts_primary_address(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(run_module, "primary_address", lambda: "10.1.2.3")
    suite = _suite(tmp_path / "p.yaml", [_custom(SCRIPT, runner={"env": ENV})])
    result = _invoke(run, str(suite), "--report-dir", str(tmp_path / "r"))
    assert result.exit_code == 0, result.output
    metrics = json.loads((tmp_path / "r" / "run.json").read_text())["results"][0]["metrics"]
    assert metrics["hostip"] == "10.1.2.3"
    # N2: a valueFrom this host cannot answer is left unset (never empty), with a warning.
    assert metrics["pod"] == "unset"
    assert "runner.env POD is left unset on a bare host" in result.output


def test_N2_status_hostIP_without_a_primary_address_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(run_module, "primary_address", lambda: None)
    suite = _suite(tmp_path / "p.yaml", [_custom(f"touch {tmp_path}/ran", runner={"env": ENV[:1]})])
    result = _invoke(run, str(suite), "--report-dir", str(tmp_path / "r"))
    assert result.exit_code == 3
    assert "status.hostIP" in result.output and "no primary address" in result.output
    assert not (tmp_path / "r").exists() and not (tmp_path / "ran").exists()


def test_I3_output_json_prints_the_run_document(tmp_path: Path) -> None:
    suite = _suite(tmp_path / "p.yaml", [_custom("echo x=1; echo X_FAIL: low; exit 1")])
    result = CliRunner().invoke(
        run, [str(suite), "--report-dir", str(tmp_path / "r"), "-o", "json"],
        catch_exceptions=False,
    )  # fmt: skip
    assert result.exit_code == 1
    printed = json.loads(result.stdout)  # stdout is the document and nothing else
    assert printed == json.loads((tmp_path / "r" / "run.json").read_text())
    assert printed["phase"] == "Failed"
    assert "running" in result.stderr  # progress still shows, on stderr
