"""Parsing ``GLIMMER_SIM_GPU=<profile>[x<count>][@<nic>][:<fault>[,<fault>]]``.

Why strict: a misspelt fault that were silently ignored would turn a fault-coverage run
into a healthy run that "passes" — exactly the laundering the simulator exists to expose.
Unknown profiles and faults are refused (exit 3), and so is a fault the part cannot
have: an Xid is an NVIDIA driver event, so ``xid:<code>`` on an AMD profile is refused
rather than run as a healthy part, and so is ``nvlink-down`` there (AMD parts link over
xGMI, not NVLink), on a part without NVLink, or on a single device (an NVLink joins two GPUs).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from runners.sdk.outcome import RunnerError
from runners.sdk.protocols import (
    AMD_VENDOR,
    CORRUPT_DATA_FAULT,
    DEGRADED_LINK_FAULT,
    FLAPPING_LINK_FAULT,
    MEMLOCK_8MIB_FAULT,
    NCCL_SOCKET_FALLBACK_FAULT,
    NIC_FLAP_UNDER_LOAD_FAULT,
    NO_RENDEZVOUS_FAULT,
    SLOW_LINK_FAULT,
)
from runners.sdk.simgpu.load_faults import LOAD_FAULTS
from runners.sdk.simgpu.profiles import ALL_PROFILES, DEFAULT_NIC, NICS, GpuProfile, NicProfile

#: Makes the SDK raise an unexpected exception inside the guarded body, so the
#: conformance suite can prove a crash exits 3 for every runner.
CRASH_FAULT = "crash"
#: The faulty device's PCIe link trained x8 at Gen4 instead of x16 at Gen5: host copies
#: run at a quarter of their rate and sysfs says so (``simgpu/compute``, ``simgpu/host``).
PCIE_DOWNTRAIN_FAULT = "pcie-downtrain"
#: One of the faulty device's NVLinks is down: its peer traffic loses that link's share.
NVLINK_DOWN_FAULT = "nvlink-down"
#: A storm of corrected (single-bit) ECC errors on the faulty device, below any
#: uncorrectable error: the lifetime corrected count is high and climbs under load.
ECC_CORRECTABLE_STORM_FAULT = "ecc-correctable-storm"
#: Faults of the node's simulated network (docs/simulated-kubelet.md).
LINK_FAULTS: frozenset[str] = frozenset({SLOW_LINK_FAULT, NO_RENDEZVOUS_FAULT, CORRUPT_DATA_FAULT})
#: Faults of the node's simulated RDMA fabric (docs/fabric.md).
FABRIC_FAULTS: frozenset[str] = frozenset(
    {
        DEGRADED_LINK_FAULT,
        FLAPPING_LINK_FAULT,
        NIC_FLAP_UNDER_LOAD_FAULT,
        MEMLOCK_8MIB_FAULT,
        NCCL_SOCKET_FALLBACK_FAULT,
    }
)
FAULTS: frozenset[str] = (
    LINK_FAULTS
    | FABRIC_FAULTS
    | LOAD_FAULTS
    | frozenset(
        {
            "low-clock",
            "ecc-uncorrectable",
            "remap-pending",
            "fallen-off-bus",
            "low-bandwidth",
            "nan-compute",
            "no-driver",
            CRASH_FAULT,
            PCIE_DOWNTRAIN_FAULT,
            NVLINK_DOWN_FAULT,
            ECC_CORRECTABLE_STORM_FAULT,
        }
    )
)
#: Link-blame faults (docs/link-blame.md), parsed apart from :data:`FAULTS` because one
#: takes a node name: ``bad-nic``, this node's NIC is bad, so every link from it misses
#: the floor; ``bad-cable=<node>``, only the link between this node and ``<node>`` does
#: (either end may carry it; the handshake tells the other end).
BAD_NIC_FAULT = "bad-nic"
BAD_CABLE_FAULT = "bad-cable"
_BAD_CABLE = re.compile(r"bad-cable=(?P<peer>[a-z0-9]([-a-z0-9.]*[a-z0-9])?)\Z")
_PROFILE = re.compile(r"(?P<key>[a-z0-9]+?)(?:x(?P<count>[0-9]+))?\Z")
_XID = re.compile(r"xid:(?P<code>[0-9]{1,3})\Z")


@dataclass(frozen=True)
class SimSpec:
    profile: GpuProfile
    count: int
    faults: frozenset[str]
    xid_codes: tuple[int, ...]
    nic: NicProfile = NICS[DEFAULT_NIC]
    #: ``bad-cable=<node>``: the peers whose link with this node is bad.
    bad_cables: frozenset[str] = frozenset()

    @property
    def faulty_index(self) -> int:
        """Faults land on the last device, so a fold must find it (not just device 0)."""
        return self.count - 1

    def has(self, fault: str) -> bool:
        return fault in self.faults


def parse_spec(text: str) -> SimSpec:
    head, _, tail = text.strip().lower().partition(":")
    head, at, nic_key = head.partition("@")
    if at and nic_key not in NICS:
        raise RunnerError(f"GLIMMER_SIM_GPU: unknown NIC {nic_key!r} (known: {sorted(NICS)})")
    match = _PROFILE.match(head)
    if match is None or match.group("key") not in ALL_PROFILES:
        hint = ""
        if match is not None and match.group("count") and f"{match.group('key')}x" in ALL_PROFILES:
            # "mi300x2": the count follows the key's own x (mi300x + x2).
            hint = f"; did you mean {match.group('key')}xx{match.group('count')}?"
        raise RunnerError(
            f"GLIMMER_SIM_GPU: unknown profile {head!r} (known: {sorted(ALL_PROFILES)}){hint}"
        )
    profile = ALL_PROFILES[match.group("key")]
    count = int(match.group("count") or 1)
    if not 1 <= count <= 64:
        raise RunnerError(f"GLIMMER_SIM_GPU: device count {count} outside 1..64")
    faults: set[str] = set()
    xids: list[int] = []
    cables: set[str] = set()
    for raw in (part.strip() for part in tail.split(",")) if tail else ():
        xid = _XID.match(raw)
        cable = _BAD_CABLE.match(raw)
        if xid is not None:
            xids.append(int(xid.group("code")))
        elif cable is not None:
            cables.add(cable.group("peer"))
        elif raw in FAULTS or raw == BAD_NIC_FAULT:
            faults.add(raw)
        else:
            raise RunnerError(f"GLIMMER_SIM_GPU: unknown fault {raw!r}")
    if xids and profile.vendor == AMD_VENDOR:
        raise RunnerError(
            f"GLIMMER_SIM_GPU: xid faults are NVIDIA driver events; {profile.key} "
            "(an AMD part) cannot have one"
        )
    if NVLINK_DOWN_FAULT in faults and profile.nvlinks == 0:
        why = "links its GPUs over xGMI" if profile.vendor == AMD_VENDOR else "has no NVLink"
        raise RunnerError(f"GLIMMER_SIM_GPU: nvlink-down is an NVLink fault; {profile.key} {why}")
    if NVLINK_DOWN_FAULT in faults and count < 2:
        raise RunnerError(
            "GLIMMER_SIM_GPU: nvlink-down needs at least two GPUs (an NVLink joins two); "
            f"give a count, e.g. {profile.key}x8:nvlink-down"
        )
    return SimSpec(
        profile=profile,
        count=count,
        faults=frozenset(faults),
        xid_codes=tuple(xids),
        nic=NICS[nic_key or DEFAULT_NIC],
        bad_cables=frozenset(cables),
    )
