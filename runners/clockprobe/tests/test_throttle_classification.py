"""Clock samples summarised and classified (clockprobe/sampling.py)."""

from __future__ import annotations

from runners.clockprobe.sampling import DeviceClocks, Sample, classify, reason_names


def sample(sm: int, *, reasons: int = 0, pstate: int = 0) -> Sample:
    return Sample(sm_mhz=sm, mem_mhz=2619, pstate=pstate, reasons=reasons, temp_c=60, power_w=500)


def test_a_run_of_throttled_samples_is_one_event() -> None:
    clocks = DeviceClocks(
        rated_boost_mhz=2000,
        samples=[
            sample(2000),
            sample(1500, reasons=0x40),
            sample(1500, reasons=0x40),
            sample(2000),
            sample(1600, reasons=0x4),
        ],
    )
    assert clocks.throttle_events == 2
    assert clocks.throttled_samples == 3
    assert classify(clocks, floor_pct=85) == "thermal+power"


def test_idle_reason_is_not_throttling() -> None:
    clocks = DeviceClocks(rated_boost_mhz=2000, samples=[sample(2000, reasons=0x1)] * 4)
    assert clocks.throttled_samples == 0
    assert reason_names(clocks.reasons_mask) == "gpuIdle"


def test_low_clock_with_no_reason_in_a_high_pstate_is_a_pinned_part() -> None:
    clocks = DeviceClocks(rated_boost_mhz=1980, samples=[sample(345, pstate=8)] * 4)
    assert clocks.sustained_pct < 20
    assert classify(clocks, floor_pct=85) == "pinned-low-pstate"


def test_full_clocks_classify_as_none() -> None:
    clocks = DeviceClocks(rated_boost_mhz=1980, samples=[sample(1980)] * 4)
    assert classify(clocks, floor_pct=85) == "none"
