"""The sweep's precisions: which parts have them, and how close to the reference they must be.

Why a declared skip for a precision the part lacks: FP8 on an Ampere part or FP4 on a
Hopper part is not a fault of the node, so it must not be a Fail; but it must not be a
Pass either (nothing was measured), so it is a declared skip (A3) naming the capability.
An unknown precision is refused (exit 3, A16), never run as some default.
"""

from __future__ import annotations

from typing import Final

from runners.sdk.outcome import DeclaredSkip

PRECISIONS: Final = ("fp4", "fp8", "bf16", "tf32", "fp64")
#: The lowest compute capability with tensor cores for the precision (FP64 runs on all).
MIN_CAPABILITY: Final[dict[str, tuple[int, int]]] = {
    "fp4": (10, 0),
    "fp8": (8, 9),
    "bf16": (8, 0),
    "tf32": (8, 0),
    "fp64": (0, 0),
}
#: Normwise error max|C - C_ref| / max|C_ref|, C_ref in float64 from the same quantised
#: operands (so only accumulation and output rounding count).
TOLERANCE: Final[dict[str, float]] = {
    "fp4": 5e-2,
    "fp8": 5e-2,
    "bf16": 1e-2,
    "tf32": 5e-3,
    "fp64": 1e-10,
}


def require_capability(precision: str, capability: tuple[int, int]) -> None:
    """A declared skip when the part has no tensor cores for ``precision``."""
    need = MIN_CAPABILITY[precision]
    if capability < need:
        raise DeclaredSkip(
            f"{precision} GEMM needs sm_{need[0]}{need[1]}+; this part is "
            f"sm_{capability[0]}{capability[1]}"
        )
