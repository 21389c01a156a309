"""Format name -> files: the one table of what each ``-o`` writes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from glimmer.report import ctrf, html, junit, markdown, nvvs
from glimmer.report.model import Report


def _single(name: str, render: Callable[[Report], str]) -> Callable[[Report], dict[str, str]]:
    return lambda report: {name: render(report)}


RENDERERS: Final[dict[str, Callable[[Report], dict[str, str]]]] = {
    "html": _single(html.FILE_NAME, html.render_html),
    "junit": _single(junit.FILE_NAME, junit.render_junit),
    "markdown": _single(markdown.FILE_NAME, markdown.render_markdown),
    "nvvs-json": nvvs.render_nvvs,
    "ctrf": _single(ctrf.FILE_NAME, ctrf.render_ctrf),
}
FORMATS: Final = tuple(RENDERERS)


def render(report: Report, fmt: str) -> dict[str, str]:
    """File name -> content for format ``fmt`` (nvvs-json writes several files)."""
    return RENDERERS[fmt](report)
