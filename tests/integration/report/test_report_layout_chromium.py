"""M4/M5 in the browser: at 1,400 px the report has no horizontal scroll and leads
with the nodes needing action (headless Chromium, as a reader opens it)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.integration.report.chromium import fleet_report_html, png_size, run_chromium, screenshot

WIDTH = 1400
#: Writes the laid-out page's widths into the DOM, so --dump-dom can read them back.
_MEASURE = (
    "<script>window.addEventListener('load',function(){var d=document.documentElement;"
    "var p=document.createElement('pre');p.id='measured';p.textContent="
    "'scrollWidth='+d.scrollWidth+' clientWidth='+d.clientWidth;"
    "document.body.appendChild(p);});</script>"
)


def measured_copy(page: Path, out: Path) -> Path:
    """The report with one measuring script: its CSP is widened for that script only
    (the shipped file stays script-free; the test of that is in test_report_chromium)."""
    text = page.read_text(encoding="utf-8")
    text = text.replace(
        "style-src 'unsafe-inline';", "style-src 'unsafe-inline'; script-src 'unsafe-inline';"
    )
    out.write_text(text.replace("</body>", _MEASURE + "</body>"), encoding="utf-8")
    return out


def test_M4_at_1400_px_no_horizontal_scroll_and_the_action_list_comes_first(
    tmp_path: Path,
) -> None:
    page = fleet_report_html(tmp_path)
    png = tmp_path / "shot.png"
    run = screenshot(page, png, width=WIDTH, height=2300)
    assert png_size(png) == (WIDTH, 2300) and run.page_requests == []
    probe = measured_copy(page, tmp_path / "measured.html")
    dom = dump_dom_sized(probe)
    found = re.search(r"scrollWidth=(\d+) clientWidth=(\d+)", dom)
    assert found, "the measuring script did not run"
    assert int(found.group(1)) <= WIDTH, found.group(0)
    headings = re.findall(r"<h2>([^<]*)</h2>", dom)
    assert headings[0] == "Nodes needing action", headings
    section = dom[dom.index('id="needs-action"') : dom.index("</section>")]
    assert re.search(r'data-action="Failed"', section) and re.search(
        r'data-action="Error"', section
    )
    assert section.index('data-action="Failed"') < section.index('data-action="Error"')


def dump_dom_sized(page: Path) -> str:
    return run_chromium(
        page, "--dump-dom", f"--window-size={WIDTH},1000", "--virtual-time-budget=2000"
    ).stdout
