"""Which GEMM precision a GPU is tested in, and whether this image can run on it.

Why a rule per architecture: a smoke test in a precision the tensor cores do not have
proves nothing about the units that will run real work. The rule (README):
sm_100 and newer have block-scaled FP4 -> ``fp4``; sm_89/sm_90 have FP8 -> ``fp8``;
sm_80..sm_88 -> ``bf16``; below sm_80 there is no low-precision tensor path -> declared
skip. All three are implemented; a precision is never silently downgraded to one that
leaves the part's own low-precision units untested. Where the compute library of the
image has no FP4 path (PyTorch without block-scaled FP4), the runner declares a skip
naming what is missing (``runners.compute_smoke.runner``), as the reference does; it
never tests FP8 in FP4's place and never Errors a whole architecture by default.

AMD parts have gfx targets, not compute capabilities; the same rule reads the CDNA matrix
cores (``GFX_PRECISION``): gfx950 (MI350/MI355) FP4, gfx942 (MI300X/MI325X) FP8
(``float8_e4m3fnuz`` in PyTorch's ROCm build), gfx90a (MI200) BF16. A target with no
entry is refused (exit 3): an unknown part is never tested in a guessed precision.
"""

from __future__ import annotations

import re

from runners.sdk.outcome import DeclaredSkip, RunnerError

IMPLEMENTED_PRECISIONS: frozenset[str] = frozenset({"fp4", "fp8", "bf16"})

#: Normwise tolerance: max |C - C_ref| / max |C_ref|, with C_ref computed in float64 from
#: the *same* quantised operands, so only accumulation and output rounding contribute.
TOLERANCE: dict[str, float] = {"bf16": 1e-2, "fp8": 5e-2, "fp4": 5e-2}

_ARCH = re.compile(r"(sm|compute)_(\d+)(\d)[a-z]?\Z")


def hardware_precision(capability: tuple[int, int]) -> str:
    """The lowest precision the tensor cores of this capability implement."""
    if capability >= (10, 0):
        return "fp4"
    if capability in ((8, 9), (9, 0)):
        return "fp8"
    if capability >= (8, 0):
        return "bf16"
    raise DeclaredSkip(
        f"sm_{capability[0]}{capability[1]} has no low-precision tensor path (needs sm_80+)"
    )


def choose_precision(capability: tuple[int, int]) -> str:
    precision = hardware_precision(capability)
    if precision not in IMPLEMENTED_PRECISIONS:
        raise RunnerError(
            f"sm_{capability[0]}{capability[1]} has {precision.upper()} tensor cores but this "
            f"runner implements only {', '.join(sorted(IMPLEMENTED_PRECISIONS))}: refusing to "
            "test a lower precision in its place"
        )
    return precision


#: The lowest matrix-core precision of each AMD gfx target this runner knows.
GFX_PRECISION: dict[str, str] = {"gfx950": "fp4", "gfx942": "fp8", "gfx90a": "bf16"}


def gfx_precision(target: str) -> str:
    """The precision an AMD part with gfx target ``target`` is tested in."""
    precision = GFX_PRECISION.get(target)
    if precision is None:
        raise RunnerError(
            f"{target}: no precision rule for this AMD gfx target (known: "
            f"{', '.join(sorted(GFX_PRECISION))}): refusing to guess one"
        )
    return precision


def image_runs_on_gfx(target: str, built: list[str]) -> bool:
    """Whether a ROCm build for ``built`` (``gfx942`` or ``gfx942:xnack-``) has code objects
    for ``target``: HIP code objects are per target, with no PTX-style JIT fallback."""
    return any(arch.split(":", 1)[0] == target for arch in built)


def image_runs_on(capability: tuple[int, int], built: list[str]) -> bool:
    """Whether a library built for ``built`` arches has code for this device.

    Exact SASS (``sm_XY``) runs on its own capability; PTX (``compute_XY``) is JIT
    compiled for any capability at or above it.
    """
    for arch in built:
        match = _ARCH.match(arch)
        if match is None:
            continue
        kind, major, minor = match.group(1), int(match.group(2)), int(match.group(3))
        if kind == "sm" and (major, minor) == capability:
            return True
        if kind == "compute" and (major, minor) <= capability:
            return True
    return False
