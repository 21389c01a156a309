"""Theoretical figures behind memory-bw's own floor (memory_bw/expected.py)."""

from __future__ import annotations

import pytest

from runners.memory_bw.expected import hbm_theoretical_gbs, pcie_theoretical_gbs


def test_hbm_double_data_rate_matches_published_figures() -> None:
    # A100 40GB: 1215 MHz x 5120 bit -> 1555 GB/s; H100 SXM: 2619 MHz x 5120 bit -> 3352 GB/s.
    assert hbm_theoretical_gbs(bus_width_bits=5120, max_mem_clock_mhz=1215) == pytest.approx(
        1555, rel=1e-3
    )
    assert hbm_theoretical_gbs(bus_width_bits=5120, max_mem_clock_mhz=2619) == pytest.approx(
        3352, rel=1e-3
    )


def test_pcie_gen5_x16_is_about_63_gbs() -> None:
    assert pcie_theoretical_gbs(generation=5, width=16) == pytest.approx(63.0, rel=1e-2)
    assert pcie_theoretical_gbs(generation=9, width=16) is None
