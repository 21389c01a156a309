"""host-health on the simulated AMD parts: the AMD matrix cells and evidence
(``runners/tests/amd_fixtures.py``), and Xids (an NVIDIA driver event) unmeasurable."""

from __future__ import annotations

from runners.tests.amd_fixtures import AmdNodeRunnerChecks, run_on_profile

KIND = "host-health"


class TestHostHealthOnAmd(AmdNodeRunnerChecks):
    kind = KIND
    evidence = frozenset({"eccSource"})


def test_amd_part_has_no_xids_so_xid_events_is_unmeasurable_never_zero() -> None:
    run = run_on_profile(KIND, "mi300xx2")
    assert "xidEvents" in run.report.unmeasurable
    assert "xidEvents" not in run.report.metrics
    assert run.report.metrics["eccSource"] == "amdsmi"
