"""What the bare-host dispatcher knows about the machine it runs on."""

from __future__ import annotations

import ipaddress
import os
import shutil
import socket
from pathlib import Path
from typing import Final

#: Kinds that need an accelerator; without one (and without ``--sim``) a run of them
#: is refused up front instead of producing a column of Errors.
ACCELERATOR_KINDS: Final[frozenset[str]] = frozenset(
    {
        "compute-smoke",
        "gemm-sweep",
        "clockprobe",
        "thermal-soak",
        "gpu-burn",
        "memory-bw",
        "dcgm-diag",
        "nccl",
        "gpudirect-rdma",
        "host-health",
    }
)


def node_name() -> str:
    return os.environ.get("NODE_NAME") or socket.gethostname()


#: Documentation addresses (RFC 5737 / 3849): a UDP connect to one picks the source
#: address of the default route and sends nothing.
_ROUTE_PROBES: Final = (
    (socket.AF_INET, ("192.0.2.1", 9)),
    (socket.AF_INET6, ("2001:db8::1", 9)),
)


def primary_address() -> str | None:
    """The host's primary address (the default route's source), as the kubelet reports
    ``status.hostIP``; None when the host has no route off itself (N2: then refuse)."""
    for family, target in _ROUTE_PROBES:
        try:
            with socket.socket(family, socket.SOCK_DGRAM) as probe:
                probe.connect(target)
                address = str(probe.getsockname()[0])
        except OSError:
            continue
        parsed = ipaddress.ip_address(address.split("%", maxsplit=1)[0])
        if not (parsed.is_unspecified or parsed.is_loopback):
            return address
    return None


def gpu_present() -> bool:
    """An NVIDIA or AMD (ROCm ``/dev/kfd``) driver node, or its tool; cheap, no library
    import. Which vendor it is the runners settle themselves (runners/sdk/vendor.py)."""
    return (
        Path("/dev/nvidia0").exists()
        or Path("/dev/kfd").exists()
        or shutil.which("amd-smi") is not None
        or Path("/proc/driver/nvidia/version").exists()
        or shutil.which("nvidia-smi") is not None
    )
