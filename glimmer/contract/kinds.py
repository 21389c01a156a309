"""Test kinds and the properties the controller reads from them.

Kind properties are declared here, per kind, and never inferred from an image or a
name: a kind the table does not know is treated like ``custom`` (generic parsing,
no load, not burst-only, not group-capable, hardware-dependent).
"""

from __future__ import annotations

from typing import Final

CUSTOM: Final = "custom"

#: Kinds that ship (or once shipped) a runner and an alias table (api §1.1).
BUILTIN_KINDS: Final[frozenset[str]] = frozenset(
    {
        "gpu-burn",
        "compute-smoke",
        "gemm-sweep",
        "dcgm-diag",
        "thermal-soak",
        "nccl",
        "ib-write-bw",
        "gpudirect-rdma",
        "tcp-baseline",
        "memory-bw",
        "disk-io",
        "fabric-soak",
        "fingerprint-probe",
        "host-health",
        "clockprobe",
        "memory-stress",
    }
)

#: Burst-only kinds ignore ``BURNIN_DURATION_SECONDS`` and cannot be soaked.
BURST_ONLY_KINDS: Final[frozenset[str]] = frozenset({"compute-smoke", "fingerprint-probe"})

#: Kinds that drive sustained load: their nodes carry the heat-expected marker (E11).
SUSTAINED_LOAD_KINDS: Final[frozenset[str]] = frozenset(
    {"thermal-soak", "gpu-burn", "clockprobe", "fabric-soak", "memory-stress", "dcgm-diag"}
)

#: Kinds that record what a node is and judge nothing (never exit 1): a run of only
#: these can identify a node, never pass it.
INVENTORY_KINDS: Final[frozenset[str]] = frozenset({"fingerprint-probe"})

#: Kinds whose *default* image speaks the Group rendezvous (E4).
GROUP_CAPABLE_KINDS: Final[frozenset[str]] = frozenset({"nccl"})

#: Kinds whose measurement does not depend on the accelerator or NIC being real
#: silicon. Everything else (including ``custom`` and unknown kinds, which we cannot
#: vouch for) is hardware-dependent: a simulated Pass of it is *suspect*.
#: ``memory-stress`` stresses the host's own DIMMs, which are real even when the GPU
#: is simulated; ``disk-io`` writes the node's real disk, never simulated.
HARDWARE_INDEPENDENT_KINDS: Final[frozenset[str]] = frozenset({"memory-stress", "disk-io"})

#: Marker prefixes (`<PREFIX>_SKIP:` etc.) per kind, §O. Informational only: the
#: declared-skip rule (A3) accepts any upper-case prefix.
MARKER_PREFIXES: Final[dict[str, str]] = {
    "compute-smoke": "FP4_GEMM",
    "gemm-sweep": "GEMM_SWEEP",
    "clockprobe": "CLOCKPROBE",
    "thermal-soak": "THERMAL_SOAK",
    "gpu-burn": "GPU_BURN",
    "memory-bw": "MEMORY_BW",
    "memory-stress": "STRESSAPPTEST",
    "host-health": "HOST_HEALTH",
    "dcgm-diag": "DCGM_DIAG",
    "nccl": "NCCL",
    "ib-write-bw": "IB_WRITE_BW",
    "gpudirect-rdma": "GPUDIRECT_RDMA",
    "tcp-baseline": "TCP_BASELINE",
    "disk-io": "DISK_IO",
    "fabric-soak": "FABRIC_SOAK",
    "fingerprint-probe": "FINGERPRINT_PROBE",
}


def is_builtin(kind: str) -> bool:
    """Whether the linter may call a metric 'unregistered' for this kind (C4)."""
    return kind in BUILTIN_KINDS


def judges_hardware(kind: str) -> bool:
    """False for the inventory kinds: their Pass says a node was identified, not healthy."""
    return kind not in INVENTORY_KINDS


def is_burst_only(kind: str) -> bool:
    return kind in BURST_ONLY_KINDS


def drives_sustained_load(kind: str) -> bool:
    return kind in SUSTAINED_LOAD_KINDS


def is_group_capable_by_default(kind: str) -> bool:
    return kind in GROUP_CAPABLE_KINDS


def is_hardware_dependent(kind: str) -> bool:
    return kind not in HARDWARE_INDEPENDENT_KINDS
