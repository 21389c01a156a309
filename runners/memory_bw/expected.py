"""Theoretical bandwidths from what NVML reports, for the runner's own floor.

Why: without a floor, a part whose HBM or PCIe link runs at a third of its rating would
exit 0 and pass any profile without a bandwidth threshold. The theoretical figures come
from the part itself (bus width x memory clock, PCIe generation x width), so no table of
models can go stale; a measured figure below ``floor`` percent of them is a shortfall.
"""

from __future__ import annotations

#: Data transfers per pin per memory clock, as each vendor's library reports the clock:
#: NVML's memory clock is half the data rate; amdsmi's MCLK on CDNA3 HBM3/HBM3E is a
#: quarter of it (MI300X: 1300 MHz x 4 x 8192 bit / 8 = 5.3 TB/s, AMD's rated figure).
#: Untested on AMD silicon here: a part whose figure disagrees shows it as a floor far
#: from its datasheet in the runner's notes.
TRANSFERS_PER_MEM_CLOCK: dict[str, int] = {"nvidia": 2, "amd": 4}

#: Per-lane signalling rate (GT/s) and line-code efficiency for each PCIe generation.
_PCIE: dict[int, tuple[float, float]] = {
    1: (2.5, 8 / 10),
    2: (5.0, 8 / 10),
    3: (8.0, 128 / 130),
    4: (16.0, 128 / 130),
    5: (32.0, 128 / 130),
    6: (64.0, 242 / 256),
}


def hbm_theoretical_gbs(
    *, bus_width_bits: int, max_mem_clock_mhz: int, transfers_per_clock: int = 2
) -> float:
    """``transfers_per_clock`` transfers per memory clock across the full bus (two, double
    data rate, as NVML reports the clock; four as amdsmi reports CDNA3's)."""
    return transfers_per_clock * max_mem_clock_mhz * 1e6 * bus_width_bits / 8 / 1e9


def pcie_theoretical_gbs(*, generation: int, width: int) -> float | None:
    if generation not in _PCIE or width <= 0:
        return None
    rate, efficiency = _PCIE[generation]
    return rate * width * efficiency / 8
