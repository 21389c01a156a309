"""Whether a GPU has FP4 matrix units, and whether this image can run on it.

compute-smoke is the FP4 test (its marker is ``FP4_GEMM``), so it passes only on a path
that ran FP4 (README, rule A3). Parts with block-scaled FP4 tensor cores are tested in
FP4: sm_100 and newer (B200, GB200, sm_120, GB10 at sm_121) and AMD's gfx950. A part
without them (Hopper sm_90, Ada sm_89, Ampere, Turing; AMD gfx942 and gfx90a) is a
declared skip whose reason names its architecture, as the reference does. No lower
precision is ever run in FP4's place: an FP8 GEMM under the FP4 marker would certify
units nobody tested. The precisions such a part does have are gemm-sweep's
(``precision: fp8``, ``bf16``), each reported under its own name.

Where the part has FP4 but the image's compute library has no FP4 path, the runner
declares a skip naming what is missing (``runners.compute_smoke.runner``). An AMD gfx
target with no entry here is refused (exit 3): an unknown part is neither tested nor
skipped on a guess.
"""

from __future__ import annotations

import re

from runners.sdk.outcome import RunnerError

#: The one precision this runner tests.
PRECISION = "fp4"

#: Normwise tolerance: max |C - C_ref| / max |C_ref|, with C_ref computed in float64 from
#: the *same* quantised operands, so only accumulation and output rounding contribute.
TOLERANCE = 5e-2

#: The first CUDA capability with block-scaled FP4 tensor cores.
FP4_CAPABILITY = (10, 0)

#: Architecture names for the capabilities a skip reason may name.
_FAMILY: dict[tuple[int, int], str] = {
    (7, 0): "Volta",
    (7, 5): "Turing",
    (8, 0): "Ampere",
    (8, 6): "Ampere",
    (8, 7): "Ampere",
    (8, 9): "Ada",
    (9, 0): "Hopper",
}

#: Whether each AMD gfx target this runner knows has FP4 matrix cores, and its family.
GFX_FP4: dict[str, bool] = {"gfx950": True, "gfx942": False, "gfx90a": False}
_GFX_FAMILY: dict[str, str] = {"gfx950": "CDNA 4", "gfx942": "CDNA 3", "gfx90a": "CDNA 2"}

_ELSEWHERE = "FP4 is not tested here (gemm-sweep tests the precisions this part has)"

_ARCH = re.compile(r"(sm|compute)_(\d+)(\d)[a-z]?\Z")


def arch_name(capability: tuple[int, int]) -> str:
    """``sm_90 (Hopper)``: the architecture as a skip reason names it."""
    arch = f"sm_{capability[0]}{capability[1]}"
    family = _FAMILY.get(capability)
    return f"{arch} ({family})" if family else arch


def no_fp4_reason(capability: tuple[int, int]) -> str | None:
    """Why a part of this CUDA capability cannot be tested in FP4, or None when it can."""
    if capability >= FP4_CAPABILITY:
        return None
    return (
        f"{arch_name(capability)} has no FP4 tensor cores (block-scaled FP4 needs sm_100 "
        f"or newer): {_ELSEWHERE}"
    )


def gfx_no_fp4_reason(target: str) -> str | None:
    """Why an AMD part with gfx target ``target`` cannot be tested in FP4, or None when it
    can; a target this runner does not know is refused, never guessed."""
    has_fp4 = GFX_FP4.get(target)
    if has_fp4 is None:
        raise RunnerError(
            f"{target}: no FP4 rule for this AMD gfx target (known: "
            f"{', '.join(sorted(GFX_FP4))}): refusing to guess one"
        )
    if has_fp4:
        return None
    return f"{target} ({_GFX_FAMILY[target]}) has no FP4 matrix cores (needs gfx950): {_ELSEWHERE}"


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
