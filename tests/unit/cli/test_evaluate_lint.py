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
  - testRef: bw
    variants:
    - name: strict
      thresholds:
      - {metric: gpu_temp, comparison: LessThanOrEqual, value: "85"}
    - name: inherits
  - inline:
      kind: clockprobe
      thresholds:
      - {metric: sustainedClockPct, comparison: Equal, value: "83.22"}
    variants:
    - name: strict
      thresholds:
      - {metric: gpu_temp, comparison: LessThanOrEqual, value: "85"}
    - name: inherits
"""

UNSOUND_BW = TEST_YAML.replace('GreaterThanOrEqual, value: "50"', 'Equal, value: "50"')


def lint_json(*paths: Path) -> tuple[int, list[dict[str, object]], str]:
    code, stdout, stderr = run("lint", *(str(p) for p in paths), "-o", "json")
    return code, json.loads(stdout), stderr


def test_C4_lint_reviews_every_gate_a_run_evaluates_inline_by_testref_and_variants(
    tmp_path: Path,
) -> None:
    (tmp_path / "p.yaml").write_text(PROFILE)
    (tmp_path / "t.yaml").write_text(UNSOUND_BW)
    code, findings, _ = lint_json(tmp_path / "p.yaml", tmp_path / "t.yaml")
    assert code == 1
    assert [(f["file"], f["test"], f["metric"], f["severity"]) for f in findings] == [
        # Variant cells of the test by testRef: one replaces the gates, one inherits them.
        (str(tmp_path / "p.yaml"), "bw-strict", "gpu_temp", "Malformed"),
        (str(tmp_path / "p.yaml"), "bw-inherits", "hostToDeviceBandwidthGBs", "Unsound"),
        # The inline entry plans only its cells (I1): the parent's gates run in "inherits".
        (str(tmp_path / "p.yaml"), "inline-1-clockprobe-strict", "gpu_temp", "Malformed"),
        (str(tmp_path / "p.yaml"), "inline-1-clockprobe-inherits", "sustainedClockPct", "Unsound"),
        # The BurnInTest itself, where it is defined.
        (str(tmp_path / "t.yaml"), "bw", "hostToDeviceBandwidthGBs", "Unsound"),
    ]
    assert set(findings[0]) == {
        "file",
        "test",
        "index",
        "metric",
        "severity",
        "reason",
        "canOnlyFail",
    }
    assert findings[0]["index"] == 0


def test_C4_a_test_by_testref_without_variants_is_reviewed_once_where_it_is_defined(
    tmp_path: Path,
) -> None:
    (tmp_path / "p.yaml").write_text(
        "kind: BurnInProfile\nmetadata: {name: p}\nspec:\n  tests:\n  - testRef: bw\n"
    )
    (tmp_path / "t.yaml").write_text(UNSOUND_BW)
    code, findings, _ = lint_json(tmp_path / "p.yaml", tmp_path / "t.yaml")
    assert code == 0
    assert [(f["file"], f["test"]) for f in findings] == [(str(tmp_path / "t.yaml"), "bw")]


def test_fail_closed_a_testref_lint_cannot_see_is_bad_input_never_clean(tmp_path: Path) -> None:
    (tmp_path / "p.yaml").write_text(PROFILE)
    code, findings, stderr = lint_json(tmp_path / "p.yaml")
    assert code == 2
    assert "testRef 'bw' names a BurnInTest in none of the given files" in stderr
    # What it could see is still reported.
    assert [f["test"] for f in findings] == [
        "inline-1-clockprobe-strict",
        "inline-1-clockprobe-inherits",
    ]
    code, stdout, _ = run("lint", str(tmp_path / "p.yaml"))
    assert code == 2 and "no findings" not in stdout


def test_C5_lint_reports_what_the_plan_review_reports(tmp_path: Path) -> None:
    from glimmer.local.manifests import load_documents, spec_of
    from glimmer.plan import PinnedPlan, build_plan
    from glimmer.plan.gates import lint_tests

    profile = PROFILE.replace(
        '{metric: gpu_temp, comparison: LessThanOrEqual, value: "85"}',
        ('{metric: gpuTempC, comparison: Equal, value: "85"}'),
    )
    (tmp_path / "p.yaml").write_text(profile)
    (tmp_path / "t.yaml").write_text(UNSOUND_BW)
    _, findings, _ = lint_json(tmp_path / "p.yaml", tmp_path / "t.yaml")
    documents = load_documents(tmp_path / "p.yaml") + load_documents(tmp_path / "t.yaml")
    plan = build_plan(
        profile=dict(spec_of(documents[0])),
        tests={"bw": dict(spec_of(documents[1]))},
        targets=["n0"],
    )
    assert isinstance(plan, PinnedPlan)
    reviewed = [(f.test, f.index, f.metric, f.severity, f.reason) for f in lint_tests(plan.tests)]
    assert reviewed  # the variant cells' gates are there
    from_profile = [
        (f["test"], f["index"], f["metric"], f["severity"], f["reason"])
        for f in findings
        if f["file"] == str(tmp_path / "p.yaml")
    ]
    # The plan holds no "bw" test of its own here (only its cells), so the two agree.
    assert from_profile == reviewed


def test_lint_exit_codes(tmp_path: Path) -> None:
    (tmp_path / "clean.yaml").write_text(TEST_YAML)
    assert run("lint", str(tmp_path / "clean.yaml"))[0] == 0
    unsound = TEST_YAML.replace('GreaterThanOrEqual, value: "50"', 'Equal, value: "50"')
    (tmp_path / "unsound.yaml").write_text(unsound)
    assert run("lint", str(tmp_path / "unsound.yaml"))[0] == 0
    assert run("lint", "--strict", str(tmp_path / "unsound.yaml"))[0] == 1
    assert run("lint", str(tmp_path / "nope.yaml"))[0] == 2
