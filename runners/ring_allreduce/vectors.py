"""The all-reduce's data: deterministic per-rank vectors and their exact sum.

Why big-integer lanes: a vector of ``E`` 64-bit lanes is held as one Python integer,
so adding two chunks is one C-level addition, with no numeric library in the image.
Every lane of a rank's vector is below ``2**32 * (rank + 1) + rank``, so the sum over
at most ``MAX_RANKS`` ranks never carries out of a lane; a carry can only come from
corrupted data, and then the lanes it touches miscompare, as they should.
"""

from __future__ import annotations

import itertools
import random
from array import array
from typing import Final

LANE_BYTES: Final = 8
MAX_RANKS: Final = 4096
_SEED: Final = 0x5EED_A11C


def _lanes(elements: int) -> int:
    """A base vector: ``elements`` lanes, each a 32-bit value in a 64-bit lane."""
    low = array("I", random.Random(_SEED).randbytes(4 * elements))
    lanes = array("Q", low)
    return int.from_bytes(lanes.tobytes(), "little")


def _ones(elements: int) -> int:
    """1 in every lane."""
    return int.from_bytes((b"\x01" + b"\x00" * (LANE_BYTES - 1)) * elements, "little")


class Vectors:
    """The content of every rank and the expected reduction, for one vector length."""

    def __init__(self, elements: int) -> None:
        self.elements = elements
        self.size = elements * LANE_BYTES
        self._base = _lanes(elements)
        self._ones = _ones(elements)

    def content(self, rank: int) -> bytes:
        """Rank ``rank``'s contribution: ``base * (rank + 1) + rank`` in every lane."""
        value = self._base * (rank + 1) + self._ones * rank
        return value.to_bytes(self.size, "little")

    def expected(self, nranks: int) -> bytes:
        """The exact lane-wise sum of every rank's contribution."""
        value = self._base * (nranks * (nranks + 1) // 2) + self._ones * (
            nranks * (nranks - 1) // 2
        )
        return value.to_bytes(self.size, "little")


def add(left: bytes, right: bytes) -> bytes:
    """Lane-wise sum of two equal-length chunks (a carry out of the chunk is dropped)."""
    size = len(left)
    total = int.from_bytes(left, "little") + int.from_bytes(right, "little")
    return (total & ((1 << (8 * size)) - 1)).to_bytes(size, "little")


def miscompares(got: bytes, want: bytes) -> int:
    """How many lanes of ``got`` differ from ``want`` (0 when the bytes are equal)."""
    if got == want:
        return 0
    if len(got) != len(want):
        return max(len(got), len(want)) // LANE_BYTES
    return sum(1 for a, b in zip(array("Q", got), array("Q", want), strict=True) if a != b)


def chunk_bounds(elements: int, nranks: int) -> list[tuple[int, int]]:
    """Byte ranges of the ``nranks`` chunks (lanes split as evenly as possible)."""
    cuts = [k * elements // nranks * LANE_BYTES for k in range(nranks + 1)]
    return list(itertools.pairwise(cuts))
