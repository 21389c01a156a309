"""N13 in the browser: the coverage heatmap of a profile with many tests and every
modelled fault fits 1,400 px (no horizontal scroll), loads nothing, and tells each row's
story below the grid (headless Chromium, as a reader opens it)."""

from __future__ import annotations

import re
from pathlib import Path

from glimmer.local.coverage import HEALTHY, Case, CaseOutcome, Coverage, PlannedTest, TestCell
from glimmer.report.coverage import coverage_html
from runners.fault_matrix import FAULT_STORIES, FAULTS
from tests.integration.report.chromium import run_chromium

WIDTH = 1400
#: Writes how far the page and each grid's scroller overflow into the DOM: a grid in an
#: ``overflow-x: auto`` box scrolls inside it, which the page's own width does not show.
_MEASURE = (
    "<script>window.addEventListener('load',function(){var d=document.documentElement;"
    "var worst=0;document.querySelectorAll('.wide').forEach(function(w){"
    "worst=Math.max(worst,w.scrollWidth-w.clientWidth);});"
    "var p=document.createElement('pre');p.id='measured';p.textContent="
    "'page='+(d.scrollWidth-d.clientWidth)+' grid='+worst;document.body.appendChild(p);});"
    "</script>"
)


def measured_copy(page: Path, out: Path) -> Path:
    """The page with the measuring script (its CSP widened for that script only)."""
    text = page.read_text(encoding="utf-8").replace(
        "style-src 'unsafe-inline';", "style-src 'unsafe-inline'; script-src 'unsafe-inline';"
    )
    out.write_text(text.replace("</body>", _MEASURE + "</body>"), encoding="utf-8")
    return out


#: The bundled profile's eight tests, and the longest names a user might give.
TESTS = (
    "compute-smoke",
    "gemm-correctness-bf16",
    "clockprobe",
    "dcgm-diag",
    "host-health",
    "memory-bw",
    "gpu-burn",
    "memory-stress",
    "thermal-soak-thirty-minutes-at-full-power",
)


def _coverage() -> Coverage:
    planned = tuple(PlannedTest(name=t, kind="gpu-burn", required=True) for t in TESTS)

    def outcome(fault: str) -> CaseOutcome:
        failed = fault in ("sdc", "low-clock")
        cells = tuple(
            TestCell(
                name=t,
                kind="gpu-burn",
                phase="Failed" if failed and t == "gpu-burn" else "Passed",
                required=True,
                gate="sustainedClockPct: got 17.4, need GreaterThanOrEqual 85" if failed else "",
            )
            for t in TESTS
        )
        return CaseOutcome(
            case=Case("h200x2", fault),
            phase="Failed" if failed else "Passed",
            exit_code=1 if failed else 0,
            cells=cells,
        )

    return Coverage(
        profile="node-acceptance",
        sims=("h200x2",),
        control=(outcome(HEALTHY),),
        faults=tuple(outcome(f) for f in FAULTS if f != HEALTHY),
        tests=planned,
        seconds=10.3,
        jobs=2,
    )


def test_N13_coverage_heatmap_fits_1400_px_and_tells_every_row_below(tmp_path: Path) -> None:
    page = tmp_path / "coverage.html"
    page.write_text(coverage_html(_coverage()), encoding="utf-8")
    probe = measured_copy(page, tmp_path / "measured.html")
    run = run_chromium(
        probe, "--dump-dom", f"--window-size={WIDTH},1000", "--virtual-time-budget=2000"
    )
    assert run.page_requests == []
    found = re.search(r"page=(-?\d+) grid=(-?\d+)", run.stdout)
    assert found, "the measuring script did not run"
    assert int(found.group(1)) <= 0 and int(found.group(2)) <= 0, found.group(0)
    # Every row links to its story, told once below the grid.
    for fault in (f for f in FAULTS if f != HEALTHY):
        assert f'href="#node-{fault.replace(":", "-")}"' in run.stdout, fault
        assert FAULT_STORIES[fault].models in run.stdout
