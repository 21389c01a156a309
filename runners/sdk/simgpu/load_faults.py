"""Simulated faults of the GPU under sustained load, named once for the simulator.

Why a leaf module: the fault parser (``simgpu/spec``) must accept these names and the
simulated compute (``simgpu/compute``) must act on them, and compute already imports the
parser through the shared state; a leaf both can import keeps one spelling and no cycle.

- ``sdc``: silent data corruption on the faulty device: every third reference check of a
  GEMM returns finite numbers that disagree with the reference. A burst test that checks
  once misses it; a sustained test that checks repeatedly catches it.
"""

from __future__ import annotations

from typing import Final

SDC_FAULT: Final = "sdc"
#: Every n-th reference check on the faulty device is corrupted.
SDC_EVERY_NTH_CHECK: Final = 3
#: Relative error of a corrupted result (far beyond any precision's tolerance).
SDC_RELATIVE_ERROR: Final = 0.5

LOAD_FAULTS: Final[frozenset[str]] = frozenset({SDC_FAULT})
