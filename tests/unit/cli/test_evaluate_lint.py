"""``glimmer evaluate`` and ``glimmer lint`` as a user runs them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from glimmer.cli import main

TEST_YAML = """\
apiVersion: burnin.glimmer.ai/v1alpha1
kind: BurnInTest
metadata: {name: bw}
spec:
  kind: memory-bw
  thresholds:
  - {metric: hostToDeviceBandwidthGBs, comparison: GreaterThanOrEqual, value: "50"}
  - {metric: peerReadBandwidthGBs, comparison: GreaterThanOrEqual, value: "300",
     applicability: RequiredIfMeasurable}
"""


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "test.yaml").write_text("---\nkind: ConfigMap\n---\n" + TEST_YAML)
    return tmp_path


def evaluate(files: Path, output: str, code: int, *extra: str) -> tuple[int, dict[str, object]]:
    (files / "out.txt").write_text(output)
    exit_code, stdout, _ = run(
        "evaluate",
        "--test",
        str(files / "test.yaml"),
        "--exit-code",
        str(code),
        "--stdout",
        str(files / "out.txt"),
        "-o",
        "json",
        *extra,
    )
    return exit_code, json.loads(stdout)


def test_evaluate_passed_json_shape(files: Path) -> None:
    out = (
        "h2d_bandwidth_gbs=55.1\npeer_read_bandwidth_gbs=n/a\n"
        "-----BEGIN BURNIN ARTIFACT raw.json application/json-----\n{}\n"
        "-----END BURNIN ARTIFACT-----\nMEMORY_BW_PASS\n"
    )
    code, doc = evaluate(files, out, 0)
    assert code == 0
    assert set(doc) >= {
        "phase",
        "message",
        "metrics",
        "unmeasurable",
        "invalidNames",
        "violations",
        "notEvaluated",
        "artifacts",
        "provenance",
    }
    assert doc["phase"] == "Passed"
    assert doc["metrics"] == {"hostToDeviceBandwidthGBs": "55.1"}
    assert doc["unmeasurable"] == ["peerReadBandwidthGBs"]
    assert doc["notEvaluated"] == [
        {"metric": "peerReadBandwidthGBs", "reason": "unmeasurable on this hardware"}
    ]
    artifacts = doc["artifacts"]
    assert isinstance(artifacts, list) and artifacts[0]["name"] == "raw.json"
    assert doc["provenance"] == "unknown"  # I14: no declaration is never silicon


def test_evaluate_failed_by_threshold(files: Path) -> None:
    code, doc = evaluate(files, "h2d_bandwidth_gbs=20\npeer_read_bandwidth_gbs=n/a\n", 0)
    assert code == 1
    assert doc["phase"] == "Failed"
    assert doc["violations"] == [
        {
            "index": 0,
            "metric": "hostToDeviceBandwidthGBs",
            "kind": "Unsatisfied",
            "cause": "Measurement",
            "reason": "hostToDeviceBandwidthGBs: got 20, need GreaterThanOrEqual 50",
        }
    ]


def test_evaluate_error_and_skip(files: Path) -> None:
    assert evaluate(files, "crash\n", 2)[1]["phase"] == "Error"
    assert evaluate(files, "MEMORY_BW_SKIP: no GPU\n", 2)[1]["phase"] == "Skipped"


def test_evaluate_sim_provenance_marks_suspect(files: Path) -> None:
    _, doc = evaluate(
        files, "h2d_bandwidth_gbs=99\npeer_read_bandwidth_gbs=n/a\n", 0, "--provenance", "sim"
    )
    assert doc["provenance"] == "sim" and doc["suspect"] is True


def test_evaluate_text_output(files: Path) -> None:
    (files / "out.txt").write_text("h2d_bandwidth_gbs=20\n")
    code, stdout, _ = run(
        "evaluate",
        "--test",
        str(files / "test.yaml"),
        "--exit-code",
        "0",
        "--stdout",
        str(files / "out.txt"),
    )
    assert code == 1 and "FAILED" in stdout and "got 20" in stdout


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        (None, "no such file"),
        ("a: [unclosed\n", "invalid YAML at line"),
        ("kind: BurnInProfile\nspec: {}\n", "no BurnInTest document found"),
        ("kind: BurnInTest\nmetadata: {name: x}\n", "spec is required"),
        (
            "kind: BurnInTest\nmetadata: {name: x}\nspec: {thresholds: []}\n",
            "spec.kind is required",
        ),
        (
            "kind: BurnInTest\nmetadata: {name: x}\nspec:\n  kind: custom\n  thresholds:\n"
            "  - {metric: a, comparison: Equal}\n",
            "spec.thresholds[0].value is required",
        ),
        (
            "kind: BurnInTest\nmetadata: {name: x}\nspec:\n  kind: custom\n  thresholds:\n"
            "  - {metric: a, comparison: Equal, value: 90}\n",
            "must be a string",
        ),
    ],
)
def test_bad_input_is_one_line_exit_2(tmp_path: Path, content: str | None, needle: str) -> None:
    path = tmp_path / "t.yaml"
    if content is not None:
        path.write_text(content)
    (tmp_path / "out").write_text("")
    code, _, stderr = run(
        "evaluate", "--test", str(path), "--exit-code", "0", "--stdout", str(tmp_path / "out")
    )
    assert code == 2
    assert needle in stderr and str(path) in stderr
    assert "Traceback" not in stderr and len(stderr.strip().splitlines()) == 1


def test_evaluate_missing_stdout_file(files: Path) -> None:
    code, _, stderr = run(
        "evaluate",
        "--test",
        str(files / "test.yaml"),
        "--exit-code",
        "0",
        "--stdout",
        str(files / "missing.txt"),
    )
    assert code == 2 and "no such file" in stderr


PROFILE = """\
kind: BurnInProfile
metadata: {name: p}
spec:
  tests:
  - testRef: elsewhere
  - inline:
      kind: clockprobe
      thresholds:
      - {metric: sustainedClockPct, comparison: Equal, value: "83.22"}
    variants:
    - name: strict
      thresholds:
      - {metric: gpu_temp, comparison: LessThanOrEqual, value: "85"}
"""


def test_lint_profiles_inline_and_variants(tmp_path: Path) -> None:
    (tmp_path / "p.yaml").write_text(PROFILE)
    code, stdout, _ = run("lint", str(tmp_path / "p.yaml"), "-o", "json")
    findings = json.loads(stdout)
    assert code == 1
    assert [(f["test"], f["metric"], f["severity"]) for f in findings] == [
        ("inline-1-clockprobe", "sustainedClockPct", "Unsound"),
        ("inline-1-clockprobe-strict", "gpu_temp", "Malformed"),
    ]
    assert set(findings[0]) == {"file", "test", "index", "metric", "severity", "reason"}


def test_lint_exit_codes(tmp_path: Path) -> None:
    (tmp_path / "clean.yaml").write_text(TEST_YAML)
    assert run("lint", str(tmp_path / "clean.yaml"))[0] == 0
    unsound = TEST_YAML.replace('GreaterThanOrEqual, value: "50"', 'Equal, value: "50"')
    (tmp_path / "unsound.yaml").write_text(unsound)
    assert run("lint", str(tmp_path / "unsound.yaml"))[0] == 0
    assert run("lint", "--strict", str(tmp_path / "unsound.yaml"))[0] == 1
    assert run("lint", str(tmp_path / "nope.yaml"))[0] == 2
