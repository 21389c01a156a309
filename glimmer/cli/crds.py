"""``glimmer crds``: write the CRDs (and optionally the API docs) generated from glimmer.api.

Generated files are committed; ``tests/unit/api/test_crds_up_to_date.py`` fails when
they differ from what this command would write, so a type change cannot ship without
its CRD.
"""

from __future__ import annotations

from pathlib import Path

import click

from glimmer.api.crd import render_crds
from glimmer.api.docs import render_api_docs


@click.command()
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("manifests/crd"),
    show_default=True,
    help="Directory for <group>_<plural>.yaml files.",
)
@click.option(
    "--docs",
    "docs_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also write the API reference markdown here (e.g. docs/api.md).",
)
def crds(out_dir: Path, docs_path: Path | None) -> None:
    """Generate the burnin.glimmer.ai CustomResourceDefinitions."""
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, text in render_crds().items():
        (out_dir / name).write_text(text, encoding="utf-8")
        click.echo(str(out_dir / name))
    if docs_path is not None:
        docs_path.parent.mkdir(parents=True, exist_ok=True)
        docs_path.write_text(render_api_docs(), encoding="utf-8")
        click.echo(str(docs_path))
