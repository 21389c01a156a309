"""The committed CRDs and docs/api.md are exactly what ``glimmer crds`` generates.

A field added to glimmer.api without regenerating would otherwise ship a CRD that
prunes it silently. Regenerate with: ``glimmer crds --out manifests/crd --docs docs/api.md``.
"""

from __future__ import annotations

from pathlib import Path

import yaml
from click.testing import CliRunner

from glimmer.api.crd import render_crds
from glimmer.api.docs import render_api_docs
from glimmer.cli import main

REPO = Path(__file__).resolve().parents[3]
CRD_DIR = REPO / "manifests" / "crd"
REGENERATE = "run: glimmer crds --out manifests/crd --docs docs/api.md"


def test_committed_crds_match_the_generator() -> None:
    expected = render_crds()
    committed = {p.name: p.read_text(encoding="utf-8") for p in CRD_DIR.glob("*_*.yaml")}
    assert sorted(committed) == sorted(expected), REGENERATE
    for name, text in expected.items():
        assert committed[name] == text, f"{name} is stale; {REGENERATE}"


def test_crd_kustomization_lists_exactly_the_generated_files() -> None:
    kustomization = yaml.safe_load((CRD_DIR / "kustomization.yaml").read_text(encoding="utf-8"))
    assert sorted(kustomization["resources"]) == sorted(render_crds())


def test_committed_api_docs_match_the_generator() -> None:
    assert (REPO / "docs" / "api.md").read_text(encoding="utf-8") == render_api_docs(), REGENERATE


def test_the_crds_command_writes_the_generated_files(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main, ["crds", "--out", str(tmp_path / "crd"), "--docs", str(tmp_path / "api.md")]
    )
    assert result.exit_code == 0, result.output
    for name, text in render_crds().items():
        assert (tmp_path / "crd" / name).read_text(encoding="utf-8") == text
    assert (tmp_path / "api.md").read_text(encoding="utf-8") == render_api_docs()
