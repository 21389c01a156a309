"""clockprobe on the simulated AMD parts: the AMD matrix cells and evidence
(``runners/tests/amd_fixtures.py``), and a part that cannot say why it throttles."""

from __future__ import annotations

import pytest

from runners.tests.amd_fixtures import AmdNodeRunnerChecks, without_throttle_reasons

KIND = "clockprobe"


class TestClockprobeOnAmd(AmdNodeRunnerChecks):
    kind = KIND
    evidence = frozenset({"gfxTarget"})


def test_unreadable_throttle_reasons_claim_no_throttle_count(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An AMD part whose firmware publishes no throttler status: the throttle counts are
    unknown, so none is printed (a gate on them fails closed), never a zero."""
    import importlib
    import io
    from dataclasses import replace
    from typing import Any

    from runners.sdk import entry
    from runners.sdk.entry import guarded_main
    from runners.sdk.platform import SIM_ENV, open_platform
    from runners.sdk.protocols import Platform
    from runners.sdk.report import Markers, Report

    def platform(environ: Any) -> Platform:
        opened = open_platform(environ)
        inner = opened._nvml
        return replace(opened, _nvml=lambda: without_throttle_reasons(inner()))

    monkeypatch.setattr(entry, "open_platform", platform)
    runner = importlib.import_module("runners.clockprobe.runner")
    out = io.StringIO()
    markers = Markers.for_prefix("CLOCKPROBE")
    code = guarded_main(
        markers=markers,
        measure=runner.measure,
        environ={SIM_ENV: "mi300xx2"},
        report=Report(markers=markers, out=out),
    )
    text = out.getvalue()
    assert code == 0, text
    for name in ("throttleEvents=", "throttledSamples=", "throttleReasons="):
        assert name not in text
    assert "sustainedClockPct=" in text
