"""The choice of platform: silicon, or the simulated GPU when ``GLIMMER_SIM_GPU`` is set.

Why the only chooser: the simulator must stand behind *every* source a runner reads, so
one place decides silicon or simulation, from one variable, for the whole run. It sits
above both implementations (``sdk/silicon``, ``sdk/simgpu``), which know only the
protocols in ``sdk/protocols``; nothing below this module imports it (import-linter).
The implementation is imported only once chosen, and heavy libraries (pynvml, torch)
only when a silicon source is first used, so nothing GPU-related loads at import time.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from glimmer.contract import SIM_GPU_ENV
from runners.sdk.protocols import MemoryStressTool, Platform

#: The contract's ``SIM_GPU_ENV`` under the SDK's older name (one definition, two imports).
SIM_ENV: Final = SIM_GPU_ENV


def _sim_spec_text(environ: Mapping[str, str]) -> str:
    return environ.get(SIM_GPU_ENV, "").strip()


def open_platform(environ: Mapping[str, str]) -> Platform:
    """Silicon, or the simulated GPU when ``GLIMMER_SIM_GPU`` is set."""
    spec = _sim_spec_text(environ)
    if spec:
        from runners.sdk.simgpu.platform import open_simulated

        return open_simulated(spec)
    from runners.sdk.silicon.platform import open_silicon

    return open_silicon(environ)


def injected_crash_requested(environ: Mapping[str, str]) -> bool:
    """Validate ``GLIMMER_SIM_GPU`` for every runner (a typo must not pass) and read the
    crash hook the conformance suite uses to prove a crash exits 3."""
    spec = _sim_spec_text(environ)
    if not spec:
        return False
    from runners.sdk.simgpu.spec import CRASH_FAULT, parse_spec

    return parse_spec(spec).has(CRASH_FAULT)


def simulated_link_faults(environ: Mapping[str, str]) -> frozenset[str]:
    """The simulated network faults ``GLIMMER_SIM_GPU`` names for this node (empty on
    silicon): the link runners read them; real traffic still crosses the sockets."""
    spec = _sim_spec_text(environ)
    if not spec:
        return frozenset()
    from runners.sdk.simgpu.spec import LINK_FAULTS, parse_spec

    return parse_spec(spec).faults & LINK_FAULTS


def is_simulated(environ: Mapping[str, str]) -> bool:
    """Whether this node's hardware is the simulator's (``GLIMMER_SIM_GPU`` set)."""
    return bool(_sim_spec_text(environ))


def simulated_faults() -> tuple[str, ...]:
    """The simulated GPU's named faults (plus the ``xid:<code>`` form), for usage messages:
    the one table is the simulator's own."""
    from runners.sdk.simgpu.spec import FAULTS

    return (*sorted(FAULTS), "xid:<code>")


def host_memory_stress(environ: Mapping[str, str]) -> MemoryStressTool:
    """``stressapptest`` on the real host, also under simulation: host DRAM is never simulated."""
    from runners.sdk.silicon.host import HostStressapptest

    return HostStressapptest(environ.get("BURNIN_STRESSAPPTEST_PATH", "").strip() or None)
