"""The running clock fold gives the figures the list rules gave, sample for sample.

RunningClocks replaced re-walking a kept list of samples (quadratic over a long window);
a fold that drifted from those rules would change a throttle count or a sustained clock
without anyone seeing it. The reference here is the rule written over a list.
"""

from __future__ import annotations

import random

import pytest

from runners.sdk.clocks import THROTTLE_MASK, ClockSample, RunningClocks


def by_list(samples: list[ClockSample]) -> dict[str, object]:
    events, previous = 0, False
    for sample in samples:
        now = bool((sample.reasons or 0) & THROTTLE_MASK)
        events += now and not previous
        previous = now
    temps = [s.temp_c for s in samples if s.temp_c is not None]
    powers = [s.power_w for s in samples if s.power_w is not None]
    return {
        "mean_sm_mhz": sum(s.sm_mhz for s in samples) / len(samples),
        "max_temp_c": max(temps) if temps else None,
        "reasons_readable": all(s.reasons is not None for s in samples),
        "throttled_samples": sum(1 for s in samples if (s.reasons or 0) & THROTTLE_MASK),
        "throttle_events": events,
        "max_power_w": max(powers) if powers else None,
        "power_readings": len(powers),
    }


@pytest.mark.parametrize("seed", range(20))
def test_the_fold_matches_the_list_rules(seed: int) -> None:
    rng = random.Random(seed)
    samples = [
        ClockSample(
            sm_mhz=rng.randint(900, 2000),
            reasons=rng.choice([None, 0x0, 0x1, 0x4, 0x20, 0x40, 0x8, 0x80, 0x2]),
            temp_c=rng.choice([None, rng.uniform(30, 95)]),
            power_w=rng.choice([None, rng.uniform(100, 700)]),
        )
        for _ in range(rng.randint(1, 400))
    ]
    clocks = RunningClocks.of(samples)
    folded = {name: getattr(clocks, name) for name in by_list(samples)}
    assert folded == pytest.approx(by_list(samples))
