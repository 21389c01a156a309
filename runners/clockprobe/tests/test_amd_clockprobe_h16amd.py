"""clockprobe on the simulated AMD parts: every fault gives its matrix phase (h16amd).

The phases are ``runners/fault_matrix.py:AMD_FAULT_MATRIX`` (one table: the conformance
suite runs it on ``mi300xx2``, these tests on ``mi325xx2``). ``xid:79`` is refused
(Error) on an AMD profile: an Xid is an NVIDIA driver event.
"""

from __future__ import annotations

import pytest

from runners.catalog import RUNNERS
from runners.conformance import Case, check, execute
from runners.tests.amd_matrix_cases import amd_matrix_cases

KIND = "clockprobe"
PROFILES = ("mi300xx2", "mi325xx2")
#: The sibling part the fault cells run on here (conformance runs ``mi300xx2``).
SIBLING = "mi325xx2"
#: Printed on a healthy AMD run besides the catalog's healthy set.
AMD_EVIDENCE = frozenset({"gfxTarget"})


@pytest.mark.parametrize("case", amd_matrix_cases(KIND, profile=SIBLING), ids=str)
def test_amd_fault_gives_its_matrix_phase(case: Case) -> None:
    assert check(RUNNERS[KIND], case) == []


@pytest.mark.parametrize("profile", PROFILES)
def test_amd_healthy_run_prints_the_amd_evidence_with_provenance_sim(profile: str) -> None:
    spec = RUNNERS[KIND]
    run = execute(
        spec.command,
        kind=KIND,
        env={**spec.test_env, "GLIMMER_SIM_GPU": profile},
        timeout_s=60,
    )
    printed = set(run.report.metrics) | set(run.report.unmeasurable)
    assert printed >= AMD_EVIDENCE, run.stdout[-600:]
    assert run.report.provenance == "sim"


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
    from runners.sdk.protocols import NotSupportedError, Platform
    from runners.sdk.report import Markers, Report

    class NoReasons:
        def __init__(self, inner: Any) -> None:
            self._inner = inner

        def clock_event_reasons(self) -> int:
            raise NotSupportedError("indep_throttle_status is N/A")

        def __getattr__(self, name: str) -> Any:
            return getattr(self._inner, name)

    class Library:
        def __init__(self, inner: Any) -> None:
            self._inner = inner

        def device(self, index: int) -> NoReasons:
            return NoReasons(self._inner.device(index))

        def __getattr__(self, name: str) -> Any:
            return getattr(self._inner, name)

    def platform(environ: Any) -> Platform:
        opened = open_platform(environ)
        inner = opened._nvml
        return replace(opened, _nvml=lambda: Library(inner()))

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
