"""The choice of platform: silicon, or the simulated GPU when ``GLIMMER_SIM_GPU`` is set.

Why the only chooser: the simulator must stand behind *every* source a runner reads, so
one place decides silicon or simulation, from one variable, for the whole run. It sits
above both implementations (``sdk/silicon``, ``sdk/simgpu``), which know only the
protocols in ``sdk/protocols``; nothing below this module imports it (import-linter).
The implementation is imported only once chosen, and heavy libraries (pynvml, amdsmi,
torch) only when a silicon source is first used, so nothing GPU-related loads at import
time.

It also chooses the *vendor* backend (NVML + CUDA, or amdsmi + HIP), by the rule in
``sdk/vendor.py``, the first time a GPU source is used: never at start-up, so runners that
read no GPU (memory-stress, the link runners) run on any host. Until that rule has
settled a vendor, no GPU library is opened; when it cannot, every GPU source raises
``VendorUndeterminedError`` (exit 3) — a node of unknown vendor never gets NVIDIA's path.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Final

from glimmer.contract import SIM_GPU_ENV
from runners.sdk.protocols import (
    Compute,
    Dcgmi,
    MemoryStressTool,
    Nvml,
    Platform,
    VendorUndeterminedError,
)
from runners.sdk.vendor import host_device_nodes, node_vendor

#: The contract's ``SIM_GPU_ENV`` under the SDK's older name (one definition, two imports).
SIM_ENV: Final = SIM_GPU_ENV


def _sim_spec_text(environ: Mapping[str, str]) -> str:
    return environ.get(SIM_GPU_ENV, "").strip()


def open_platform(environ: Mapping[str, str]) -> Platform:
    """Silicon, or the simulated GPU when ``GLIMMER_SIM_GPU`` is set; the vendor backend
    is chosen on first GPU use (module docstring)."""
    spec = _sim_spec_text(environ)
    if spec:
        from runners.sdk.silicon.amd_smi import AmdSmiLibrary
        from runners.sdk.simgpu.platform import open_simulated

        simulated = open_simulated(
            spec, amd_library=lambda smi, sysfs: AmdSmiLibrary(smi, sysfs=sysfs)
        )
        # The simulated node's only evidence is its sysfs; its real host's /dev is not it.
        return _vendor_guarded(
            base=simulated,
            backends={simulated.vendor(): lambda: simulated},
            settle=lambda: node_vendor(
                environ=environ, sysfs=simulated.sysfs, device_node=lambda _name: False
            ),
        )
    from runners.sdk.silicon.platform import open_silicon

    nvidia = open_silicon(environ)

    def amd() -> Platform:
        from runners.sdk.silicon.amd_platform import open_rocm

        return open_rocm(environ)

    return _vendor_guarded(
        base=nvidia,
        backends={"nvidia": lambda: nvidia, "amd": amd},
        settle=lambda: node_vendor(
            environ=environ, sysfs=nvidia.sysfs, device_node=host_device_nodes(environ)
        ),
    )


def _vendor_guarded(
    *, base: Platform, backends: Mapping[str, Callable[[], Platform]], settle: Callable[[], str]
) -> Platform:
    """``base``'s host sources, with every GPU source behind the settled vendor's backend.

    The vendor is settled once, on first use; a vendor with no backend here (a simulated
    NVIDIA node declared ``amd``) is refused like an undetermined one.
    """
    settled: list[str] = []
    chosen: list[Platform] = []

    def vendor() -> str:
        if not settled:
            settled.append(settle())
        return settled[0]

    def backend() -> Platform:
        if not chosen:
            name = vendor()
            if name not in backends:
                raise VendorUndeterminedError(f"no {name} GPU backend for this node")
            chosen.append(backends[name]())
        return chosen[0]

    def nvml() -> Nvml:
        return backend().nvml()

    def compute() -> Compute:
        return backend().compute()

    def dcgmi() -> Dcgmi:
        # dcgmi is a site-mounted host tool that finds NVIDIA's GPUs itself, not a library
        # this seam opens: it needs no vendor choice, but a node settled as another
        # vendor's gets that backend's answer (the AMD one refuses it).
        try:
            vendor()
        except VendorUndeterminedError:
            return base.dcgmi()
        return backend().dcgmi()

    return Platform(
        provenance=base.provenance,
        clock=base.clock,
        sysfs=base.sysfs,
        _nvml=nvml,
        _compute=compute,
        _kmsg=base.open_kmsg,
        _dcgmi=dcgmi,
        _fabric=base.fabric,
        _vendor=vendor,
    )


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
