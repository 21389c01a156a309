"""The HTML report opened in headless Chromium: it renders, logs nothing, fetches nothing."""

from __future__ import annotations

import re
from pathlib import Path

from tests.integration.report.chromium import dump_dom, fleet_report_html, png_size, screenshot

HOSTILE_PAGE = """<!DOCTYPE html><html><body><p>probe</p>
<img src="http://assets.example.invalid/x.png"><script>console.error("boom")</script>
</body></html>"""


def test_html_report_renders_in_chromium_with_no_console_output_and_no_requests(
    tmp_path: Path,
) -> None:
    page = fleet_report_html(tmp_path)
    png = tmp_path / "shot.png"
    run = screenshot(page, png, width=1280, height=2000)
    assert png_size(png) == (1280, 2000)
    assert png.stat().st_size > 100_000, "a near-blank screenshot: the report did not render"
    assert run.console == []
    assert run.page_requests == []


def test_html_report_dom_shows_error_and_fail_in_words_and_shapes(tmp_path: Path) -> None:
    dom = dump_dom(fleet_report_html(tmp_path))
    assert dom.page_requests == [] and dom.console == []
    cells = re.findall(
        r'<td class="cell (fail|error)"[^>]*data-verdict="(\w+)"[^>]*>([^<]*)<', dom.stdout
    )
    assert {(css, phase, text.strip()) for css, phase, text in cells} == {
        ("fail", "Failed", "✖ FAIL"),
        ("error", "Error", "⚠ ERROR"),
    }
    assert "SIMULATED GPU" in dom.stdout.split("<h1>")[0]


def test_the_instrument_sees_console_errors_and_page_requests(tmp_path: Path) -> None:
    """The two checks above can fail: a page that logs and fetches is caught."""
    page = tmp_path / "hostile.html"
    page.write_text(HOSTILE_PAGE)
    run = screenshot(page, tmp_path / "h.png", width=400, height=300)
    assert "assets.example.invalid" in run.page_requests
    assert any('"boom"' in line for line in run.console)
