"""Simulated host sources of an AMD node: its sysfs GPUs and its kernel log.

The NICs and the RDMA device are the NVIDIA node's (``simgpu/host.py``); only the GPU
functions differ: vendor ``0x1002``, class ``0x120000`` (processing accelerator, what
Instinct parts report), bound to ``amdgpu``. A fallen-off part reads ``0xffff`` from its
config space, as a function that no longer answers does. The kernel log carries amdgpu's
boot noise and never an Xid (those are NVIDIA's).
"""

from __future__ import annotations

from runners.sdk.simgpu.host import SimSysfs
from runners.sdk.simgpu.nvml import pci_bus_id
from runners.sdk.simgpu.state import SimState

AMD_PCI_VENDOR = "0x1002"
ACCELERATOR_CLASS = "0x120000"


class AmdSimSysfs:
    """The simulated node's sysfs with AMD GPU functions over the shared NIC tree."""

    def __init__(self, state: SimState) -> None:
        self._base = SimSysfs(state)
        profile = state.spec.profile
        files: dict[str, str] = {}
        links: dict[str, str] = {}
        for index in range(state.spec.count):
            base = f"bus/pci/devices/{pci_bus_id(index)[4:].lower()}"
            lost = state.fault_on("fallen-off-bus", index)
            files[f"{base}/vendor"] = "0xffff" if lost else AMD_PCI_VENDOR
            files[f"{base}/device"] = "0xffff" if lost else f"0x{profile.pci_device_id:04x}"
            files[f"{base}/class"] = "0xffffff" if lost else ACCELERATOR_CLASS
            links[f"{base}/driver"] = "../../../bus/pci/drivers/amdgpu"
        self._files = files
        self._links = links

    def read_text(self, path: str) -> str | None:
        key = path.strip("/")
        if key in self._files:
            return self._files[key]
        return self._base.read_text(path)

    def list_dir(self, path: str) -> list[str] | None:
        prefix = path.strip("/") + "/"
        names = {
            item[len(prefix) :].split("/", 1)[0]
            for item in (*self._files, *self._links)
            if item.startswith(prefix)
        }
        names.update(self._base.list_dir(path) or [])
        return sorted(names) if names else None

    def link_name(self, path: str) -> str | None:
        target = self._links.get(path.strip("/"))
        if target is not None:
            return target.rsplit("/", 1)[-1]
        return self._base.link_name(path)


class AmdSimKmsg:
    """amdgpu's boot lines; nothing arrives during the window (no Xids on AMD)."""

    def __init__(self, state: SimState) -> None:
        bdf = pci_bus_id(state.spec.faulty_index)[4:].lower()
        self._backlog = [
            "6,1,100,-;Linux version 6.8.0-sim (glimmer simulated kernel log)",
            f"6,2,200,-;amdgpu {bdf}: amdgpu: active_cu_number 304",
            "6,3,300,-;[drm] Initialized amdgpu 3.57.0 for the simulated node",
        ]
        self._read = False

    def drain(self) -> list[str]:
        if self._read:
            return []
        self._read = True
        return list(self._backlog)

    def dropped(self) -> int:
        return 0

    def close(self) -> None:
        return None
