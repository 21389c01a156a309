"""Properties every runner shares: no heavy import at load, documented fault matrix."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from runners.catalog import RUNNERS
from runners.fault_matrix import (
    render_amd_markdown,
    render_evidence_markdown,
    render_markdown,
    render_stories_markdown,
)

ROOT = Path(__file__).resolve().parents[2]


def test_heavy_gpu_libraries_are_not_imported_at_module_load() -> None:
    modules = [spec.module + ".runner" for spec in RUNNERS.values()]
    code = (
        "import importlib, sys\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        "import runners.sdk.platform, runners.sdk.gpus, runners.conformance\n"
        "bad = [m for m in ('torch', 'pynvml', 'cupy') if m in sys.modules]\n"
        "print(','.join(bad))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == ""


def test_docs_fault_matrix_is_the_one_the_suite_runs() -> None:
    doc = (ROOT / "docs" / "simulated-gpu.md").read_text()
    assert render_markdown() in doc


def test_docs_amd_fault_matrix_is_the_one_the_suite_runs() -> None:
    doc = (ROOT / "docs" / "simulated-gpu.md").read_text()
    assert render_amd_markdown() in doc


def test_docs_fault_stories_are_the_ones_coverage_prints() -> None:
    doc = (ROOT / "docs" / "simulated-gpu.md").read_text()
    assert render_stories_markdown() in doc


def test_every_runner_has_entry_point_containerfile_and_readme() -> None:
    for spec in RUNNERS.values():
        package = ROOT / spec.module.replace(".", "/")
        for name in ("__main__.py", "runner.py", "Containerfile", "README.md"):
            assert (package / name).is_file(), f"{spec.kind}: {name} missing"
        readme = (package / "README.md").read_text()
        for metric in spec.healthy_metrics:
            assert f"`{metric}`" in readme, f"{spec.kind} README does not document {metric}"


def test_docs_fault_evidence_is_the_one_the_tests_run() -> None:
    doc = (ROOT / "docs" / "simulated-gpu.md").read_text()
    assert render_evidence_markdown() in doc
