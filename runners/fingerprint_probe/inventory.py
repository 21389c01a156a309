"""What sysfs says is plugged in: PCI accelerators, NICs and RDMA devices.

Why sysfs and not NVML for the count: the count must not depend on the driver working —
a GPU whose driver failed to bind is exactly the one a fingerprint must still see.
"""

from __future__ import annotations

from dataclasses import dataclass

from runners.sdk.protocols import Sysfs

ACCELERATOR_VENDORS: dict[str, str] = {
    "0x10de": "nvidia",
    "0x1002": "amd",
    "0x8086": "intel",
    "0x1da3": "habana",
}


@dataclass(frozen=True)
class PciFunction:
    address: str
    vendor: str
    device: str
    pci_class: str
    driver: str | None

    @property
    def is_accelerator(self) -> bool:
        """Display controllers of accelerator vendors, and any processing accelerator."""
        if self.pci_class.startswith("0x12"):
            return True
        return self.pci_class.startswith("0x03") and self.vendor in ("0x10de", "0x1002")


def pci_functions(sysfs: Sysfs) -> list[PciFunction] | None:
    """All PCI functions, or None when sysfs is not mounted."""
    addresses = sysfs.list_dir("bus/pci/devices")
    if addresses is None:
        return None
    functions = []
    for address in addresses:
        base = f"bus/pci/devices/{address}"
        functions.append(
            PciFunction(
                address=address,
                vendor=(sysfs.read_text(f"{base}/vendor") or "").lower(),
                device=(sysfs.read_text(f"{base}/device") or "").lower(),
                pci_class=(sysfs.read_text(f"{base}/class") or "").lower(),
                driver=sysfs.link_name(f"{base}/driver"),
            )
        )
    return functions


def nic_identities(sysfs: Sysfs) -> list[dict[str, str]]:
    nics = []
    for name in sysfs.list_dir("class/net") or []:
        base = f"class/net/{name}"
        if sysfs.read_text(f"{base}/device/vendor") is None:
            continue  # virtual interface: no hardware behind it
        nic = {"name": name}
        for key, path in (("mac", "address"), ("state", "operstate"), ("speedMbps", "speed")):
            value = sysfs.read_text(f"{base}/{path}")
            if value:
                nic[key] = value
        driver = sysfs.link_name(f"{base}/device/driver")
        if driver:
            nic["driver"] = driver
        nics.append(nic)
    return nics


def rdma_identities(sysfs: Sysfs) -> list[dict[str, str]]:
    devices = []
    for name in sysfs.list_dir("class/infiniband") or []:
        base = f"class/infiniband/{name}"
        device = {"name": name}
        for key in ("node_guid", "sys_image_guid", "fw_ver", "board_id", "hca_type"):
            value = sysfs.read_text(f"{base}/{key}")
            if value:
                device[key] = value
        devices.append(device)
    return devices
