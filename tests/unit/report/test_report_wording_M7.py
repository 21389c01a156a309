"""M7: a passing simulated result reads as what it means in every format, never as
the bare word "suspect"."""

from __future__ import annotations

from glimmer.report import FORMATS, assemble, render
from glimmer.verdict.messages import SIM_PASS_WORDS
from tests.unit.report import report_fleet as fleet


def test_M7_a_simulated_pass_says_it_proves_the_plumbing_not_the_hardware() -> None:
    entry = fleet.result(
        "gpu-burn", [fleet.NODES[0]], "Passed", metrics={"gflops": "1"}, provenance="sim"
    )
    entry["suspect"] = True
    report = assemble(fleet.envelopes([entry], terminal="Passed", provenance="sim"), source="t")
    assert report.results[0].suspect
    for fmt in FORMATS:
        text = "\n".join(render(report, fmt).values())
        assert "suspect" not in text.lower(), fmt
        if fmt != "nvvs-json":  # NVVS has no field for a note
            assert SIM_PASS_WORDS in text or "simulated-pass" in text, fmt
    assert f"sim ({SIM_PASS_WORDS})" in render(report, "html")["burn-in-report.html"]
