"""What the bare-host dispatcher knows about the machine it runs on."""

from __future__ import annotations

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


def gpu_present() -> bool:
    """An NVIDIA driver node or ``nvidia-smi``; cheap, no library import."""
    return (
        Path("/dev/nvidia0").exists()
        or Path("/proc/driver/nvidia/version").exists()
        or shutil.which("nvidia-smi") is not None
    )
