"""The sweep's precisions: which parts have them, and how close to the reference they must be.

Why a declared skip for a precision the part lacks: FP8 on an Ampere part or FP4 on a
Hopper part is not a fault of the node, so it must not be a Fail; but it must not be a
Pass either (nothing was measured), so it is a declared skip (A3) naming the capability.
An unknown precision is refused (exit 3, A16), never run as some default.

AMD parts are read by gfx target (``GFX_PRECISIONS``, the CDNA matrix cores): gfx942
(MI300X/MI325X) has FP8 (``float8_e4m3fnuz``), BF16, XF32 (answering ``tf32``) and FP64
but no FP4; gfx950 (MI350/MI355) has FP4/FP8/BF16/FP64 and no XF32. A gfx target with no
entry is refused (exit 3), never swept on a guess.
"""

from __future__ import annotations

from typing import Final

from runners.sdk.outcome import DeclaredSkip, RunnerError

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


#: The matrix-core precisions of each AMD gfx target (``tf32`` is CDNA3's XF32).
GFX_PRECISIONS: Final[dict[str, frozenset[str]]] = {
    "gfx942": frozenset({"fp8", "bf16", "tf32", "fp64"}),
    "gfx950": frozenset({"fp4", "fp8", "bf16", "fp64"}),
    "gfx90a": frozenset({"bf16", "fp64"}),
}


def require_gfx(precision: str, target: str) -> None:
    """A declared skip when the AMD part has no matrix path for ``precision``."""
    known = GFX_PRECISIONS.get(target)
    if known is None:
        raise RunnerError(
            f"{target}: no precision table for this AMD gfx target (known: "
            f"{', '.join(sorted(GFX_PRECISIONS))})"
        )
    if precision not in known:
        raise DeclaredSkip(f"{precision} GEMM: {target} has no {precision.upper()} matrix path")
