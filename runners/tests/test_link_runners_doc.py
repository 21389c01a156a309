"""The link runners' fault table in docs/simulated-kubelet.md is the one the suite runs."""

from __future__ import annotations

from pathlib import Path

from runners.fault_matrix import render_fabric_markdown, render_link_markdown

ROOT = Path(__file__).resolve().parents[2]


def test_docs_link_fault_matrix_is_the_one_the_suite_runs() -> None:
    doc = (ROOT / "docs" / "simulated-kubelet.md").read_text()
    assert render_link_markdown() in doc


def test_docs_fabric_fault_matrix_is_the_one_the_suite_runs() -> None:
    doc = (ROOT / "docs" / "simulated-gpu.md").read_text()
    assert render_fabric_markdown() in doc
